"""Secrets said in words: "the wifi password is sunshine42", "my PIN is 4821", "passphrase:
correct horse battery staple", "login: admin / hunter2", "mật khẩu wifi là …", "パスワードは …",
"密码是 …". No shape gives these away; the grammar around them does.

A **cue** (a word that names a secret, in the languages clawmem supports), then what may stand
between it and the value (English-like languages: "for the staging db", a preposition first, so
"password policy is …" is not a cue; Vietnamese, Japanese, Chinese and Korean put modifiers after
the noun: "mật khẩu wifi nhà mình là …"), a **connector** (``:``, ``=``, "is", "là", "は", "是",
"는", "—", a change verb's "to") and a **value** read by the cue's rule:

- ``password``: a token that is not a word of ordinary talk ("the password is stored in …",
  "is too short", "is 12 characters"), and the next few tokens of the same clause
  (a passphrase with spaces); a value in quotes is taken whole;
- ``pin``: a short code with three digits or more;
- ``strict`` (token, API key, secret): eight characters or more with a digit or a symbol;
- ``phrase`` (passphrase, seed phrase): the rest of the clause;
- ``codes`` (2FA recovery codes): the rest of the line, or the list of codes below it;
- ``login``: the password after ``user /`` or ``user:``;
- ``id`` (national id, passport, SSN): a number of five digits or more.

With no connector ("password hunter2", "PIN 4821") the value must look like one on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# --------------------------------------------------------------------------- cue words

# (rule, style, words): style "tight" (a qualifier must start with a preposition) or "loose".
_CUES: tuple[tuple[str, str, str], ...] = (
    (
        "phrase",
        "tight",
        r"pass[ -]?phrases?|(?:seed|recovery|mnemonic|secret|backup)[ -]phrase|mnemonic|"
        r"security[ -](?:answer|question[ -]answer)|answer to (?:my|the|our) security question|"
        r"сид-фраза|мнемоническая фраза",
    ),
    ("phrase", "loose", r"パスフレーズ|助记词|助記詞|시드 ?문구|cụm từ khôi phục"),
    (
        "codes",
        "tight",
        r"(?:2fa|mfa|two[ -]factor|backup|recovery|scratch|emergency|one[ -]time)[ -]"
        r"(?:(?:backup|recovery|authentication|auth)[ -])?codes|коды восстановления|резервные коды",
    ),
    (
        "codes",
        "loose",
        r"mã khôi phục|mã dự phòng|mã dự trữ|リカバリーコード|バックアップコード|恢复码|备用码|復原碼|"
        r"복구 ?코드|백업 ?코드",
    ),
    (
        "id",
        "tight",
        r"ssn|social security (?:number|no\.?|#)|national (?:id|identity|insurance)(?: card)?"
        r"(?: number| no\.?| #)?|ni number|nino|passport (?:number|no\.?|#)|(?:id|identity) card"
        r"(?: number| no\.?)?|id number|tax (?:id|number|file number)|driver'?s licen[cs]e"
        r"(?: number| no\.?)?|номер паспорта|паспорт|инн|снилс|dni|nie|nif|cpf|"
        r"personalausweisnummer|ausweisnummer|steuer-id|steueridentifikationsnummer|"
        r"numéro de sécurité sociale|codice fiscale|pesel|bsn|aadhaar",
    ),
    (
        "id",
        "loose",
        r"cccd|cmnd|(?:số )?căn cước(?: công dân)?|chứng minh (?:nhân dân|thư)|(?:số )?hộ chiếu|"
        r"マイナンバー|個人番号|パスポート番号|旅券番号|身份证(?:号码|号)?|身份證(?:號碼|號)?|"
        r"护照(?:号码|号)|護照(?:號碼|號)|주민등록번호|주민번호|여권번호",
    ),
    (
        "cvv",
        "tight",
        r"cvv2?|cvc2?|csc|card security (?:code|number)|card verification (?:code|value)|"
        r"security code on the back",
    ),
    (
        "otp",
        "tight",
        # "your code is 482913"; never "the error code is 1045" or "the promo code".
        r"(?:your|my|the|this|sms|text|login|sign-in|signin|security|confirmation|one-time|"
        r"2fa|mfa|access|auth|verification)(?: (?!(?:error|zip|postal|area|country|status|exit|"
        r"return|source|dial|promo|discount|coupon|voucher|gift|tracking|qr|bar|color|colour|"
        r"iso|language|airport|product|item|class)\b)[a-z]+)? code",
    ),
    ("pin", "loose", r"รหัส ?(?:otp|pin|ยืนยัน)|ओटीपी|पिन"),
    (
        "pin",
        "tight",
        r"pin(?:[ -]?code| number)?|puk|(?:door|gate|alarm|garage|lock|locker|safe|entry|access|"
        r"security|verification|unlock|2fa|mfa|otp|one[ -]time|sms|auth|authentication|login|"
        r"keypad|building|lockbox|vault|intercom)[ -]code|(?:safe |lock |locker )?combination|otp|"
        r"пин-код|пин код|пин|код доступа|код подтверждения|code pin|pin-code|geheimzahl",
    ),
    (
        "pin",
        "loose",
        r"mã (?:pin|otp|bảo mật|xác nhận|xác thực|mở khóa|mở khoá|cửa)|暗証番号|認証コード|確認コード|"
        r"验证码|驗證碼|pin码|动态码|인증 ?번호|인증 ?코드|핀 ?번호",
    ),
    (
        "strict",
        "tight",
        r"(?:api|access|auth|refresh|bot|secret|bearer|session|personal access|deploy)[ -]tokens?|"
        r"(?:api|secret|private|license|licence|product|serial|recovery|encryption|master|signing|"
        r"access|ssh|gpg|pgp)[ -]keys?|client[ -]secret|app[ -]secret|webhook[ -]secret|tokens?|"
        r"secret|ключ api|api-ключ|токен|секретный ключ",
    ),
    (
        "strict",
        "loose",
        r"khóa api|khoá api|khóa bí mật|khoá bí mật|mã token|apiキー|アクセストークン|トークン|"
        r"シークレット|秘密鍵|密钥|秘钥|令牌|api ?키|토큰|비밀 ?키",
    ),
    (
        "login",
        "tight",
        r"(?:e-?mail|user(?:name)?|login|account|acct) ?/ ?(?:pass(?:word)?|pwd?)|"
        r"login|log-in|logon|sign-in|credentials|creds|u/p|"
        r"логин|учётка|учетка|zugangsdaten|identifiants|credenciales",
    ),
    (
        "login",
        "loose",
        r"đăng nhập|tài khoản|ログイン|認証情報|账号|帳號|账户|帳戶|登录|登錄|로그인|계정",
    ),
    # Vietnamese "pass wifi", "mk wifi" (mk: mật khẩu): before the tight "pass"/"mk", whose
    # qualifier would have to start with a preposition ("pass wifi nhà mình là …").
    ("password", "loose", r"(?<![\w-])(?:pass|mk) ?wi-?fi(?![\w-])"),
    (
        "password",
        "tight",
        r"passwords?|passwd|passcode|pass code|pw|pwd|pword|(?:wi-?fi|wlan|router|door|admin|"
        r"root|db|user)[ -]pass|(?:wi-?fi|wpa2?|wlan|network)[ -]key|"
        r"(?:wlan|wifi|wi-fi|admin|root|router|e-?mail|netzwerk|haupt)-?(?:passwort|kennwort)|"
        r"passwort|kennwort|mk|"
        r"contraseñas?|contrasenas?|clave|mot de passe|senha|parola|hasło|haslo|lösenord|"
        r"wachtwoord|şifre|sifre|kata sandi|парол[а-я]*",
    ),
    (
        "password",
        "loose",
        r"mật khẩu|mat khau|mật mã|パスワード|パスコード|合言葉|"
        r"密码|密碼|口令|비밀번호|암호|패스워드|รหัสผ่าน|รหัส ?wi-?fi|พาสเวิร์ด|पासवर्ड|पास ?वर्ड|"
        r"कूटशब्द",
    ),
)

_TIGHT_BOUND = r"(?<![\w/.-])(?:{})(?![\w-])"
CUE = re.compile(
    "|".join(
        f"(?P<{rule}__{style}__{i}>"
        + (_TIGHT_BOUND.format(words) if style == "tight" else f"(?:{words})")
        + ")"
        for i, (rule, style, words) in enumerate(_CUES)
    ),
    re.IGNORECASE,
)

# Lower-case substrings one of which every cue contains. The cue pattern, an alternation of some
# hundred phrases, is slow to try at every position (~0.5 MB/s); it is tried only at the word
# starts shortly before the places where one of these occurs (redact.py finds them all in one
# pass).
NEEDLES: tuple[str, ...] = tuple(
    (
        "pass|pw|pin|puk| code|-code|codes| key|-key|token|secret|login|log-in|logon|sign-in|"
        "cred|u/p|mnemonic|security|ssn|national|ni number|nino|passport|id number|id card|"
        "identity card|tax id|tax number|tax file|licen|otp|combination|phrase|парол|пин|код|"
        "ключ|токен|логин|учётк|учетк|паспорт|инн|снилс|сид-|мнемон| dni| nie| nif| cpf|"
        "ausweis|steuer|sécurité|fiscale|pesel|bsn|aadhaar|wort|contrase|clave|mot de passe|"
        "senha|parola|hasło|haslo|lösenord|wachtwoord|şifre|sifre|kata sandi|geheimzahl|"
        "zugangsdaten|identifiants|credenciales|mật|mat khau|mã |khóa|khoá|đăng nhập|tài khoản|"
        "cccd|cmnd|căn cước|chứng minh|hộ chiếu|cụm từ|パス|暗証|合言葉|認証|確認コード|"
        "リカバリー|バックアップ|マイナンバー|個人番号|旅券|キー|トークン|シークレット|秘密鍵|"
        "ログイン|密码|密碼|口令|验证码|驗證碼|码|恢复码|备用码|復原碼|助记词|助記詞|密钥|秘钥|"
        "令牌|账号|帳號|账户|帳戶|登录|登錄|身份|护照|護照|비밀|암호|패스워드|인증|핀|복구|"
        "백업|시드|주민|여권|키|토큰|로그인|계정|cvv|cvc|csc|card security|"
        "card verification|mk|รหัส|พาสเวิร์ด|पासवर्ड|पास वर्ड|ओटीपी|पिन|कूटशब्द|mail/|mail /|"
        "user/|user /|username/|username /|account/|account /|acct/|acct /"
    ).split("|")
)
_WINDOW = 28  # characters before a needle where its cue may start ("answer to my security …")

# --------------------------------------------------------------------------- connectors

_CONNECTORS = r"""(?P<sym>["'”’]?[ \t]*(?:[:=：＝]|->|=>|→)[ \t]*|[ \t]+[-–—][ \t]+|[ \t]*[–—][ \t]*)
    |(?P<word>[ \t]+(?:is|was|are|were|(?:will|would|should|must|can|could|shall)[ \t]+be|
        remains|becomes|là|la|es|era|será|est|était|sera|ist|lautet|war|é|è|это|jest|है|हैं)
        (?:[ \t]*:)?[ \t]+
        |['’]s[ \t]+)
    |(?P<cjk>[ \t]*(?:は|が|是|为|為|는|은|이|가|คือ|เป็น)[ \t]*)
    |(?P<to>[ \t]+(?:to|thành|sang)[ \t]+)"""
_CONNECTOR = re.compile(_CONNECTORS + r"|(?P<bare>[ \t]+)", re.IGNORECASE | re.VERBOSE)
# Between a tight cue and its connector: a phrase that starts with a preposition ("password for
# the staging db is"), never any other word ("password policy is …" is about a password). Loose
# cues allow a short modifier of any kind ("mật khẩu wifi nhà mình là").
_TIGHT_QUALIFIER = re.compile(
    r"""[ \t]+(?:for|of|to|on|at|in|from|into|de|du|des|del|für|von|zum|zur|para|da|do|dla|от|
    для|к|на)[ \t]+[^\n.,;:=?!"'`()\[\]{}<>]{1,40}?(?="""
    + _CONNECTORS
    + ")",
    re.IGNORECASE | re.VERBOSE,
)
_LOOSE_QUALIFIER = re.compile(
    # Never across brackets: "mật khẩu is [redacted] - 1234" is a value already redacted, not
    # the modifier of a cue whose value comes after the dash (redacting twice changes nothing).
    r"""[^\n.,;:=?!。、，：？！「」"'\[\]]{1,30}?(?=""" + _CONNECTORS + ")",
    re.IGNORECASE | re.VERBOSE,
)
_CHANGED = re.compile(
    r"(?i)\b(?:chang|set|reset|updat|switch|rotat|mak|đổi|doi)\w*\b|đổi|改成|改为|改為|変更"
)
_FILLERS = re.compile(
    r"(?i)(?:(?:now|still|currently|just|simply|actually|always|again|temporarily|also|set to|"
    r"changed to|updated to|reset to|bây giờ|vẫn)\s+)*"
)

# --------------------------------------------------------------------------- values

_QUOTES = dict(zip("\"'`“‘«„「『", "\"'`”’»“」』", strict=True))
# A token: printable ASCII, Latin with diacritics, Cyrillic; never CJK, which ends it
# ("密码是abc123，别告诉别人": the value is abc123).
_TOKEN = re.compile(r"[!-~\u00a1-\u024f\u0400-\u04ff\u1e00-\u1eff]+")
_TRAILING = ".,;:!?)]}>\"'`”’»"
_STOP = frozenset(
    """a an the this that these those it its it's my our your his her their in on at to for from
    with without by of as not no never being been be is was are stored saved kept written shared
    sent managed rotated reset changed updated required needed optional mandatory same different
    unknown here there below above attached included what which whatever where when how why who
    whom whose something anything nothing somewhere elsewhere like about probably maybe likely
    usually always only all both either also too very quite really so more less much still now
    then and or but if one two three four five six seven eight nine ten case protected encrypted
    hashed salted printed shown listed available used generated enforced defined configured
    specified provided given entered typed accepted rejected checked verified validated set
    unset empty blank missing none null expired expiring forgotten lost leaked compromised
    exposed going gonna supposed meant tied linked due based needs must should will can could
    would might may has have had does did do get got i we you he she they me us them btw lol
    please thanks see ask check use try call text email per via tbd known printed displayed
    visible hidden enabled disabled locked unlocked able unable currently already just even
    back down up out off over under inside behind within between through during before after
    since until because while although though whether either neither each every any some
    such own same other another several many most few outside""".split()
)
# Words that describe a password rather than being one ("is too weak", "is wrong").
_ADJECTIVES = frozenset(
    """weak strong wrong incorrect correct right invalid valid long longer short shorter secure
    insecure safe unsafe easy hard simple complex random temporary new old good bad great fine
    ok okay ready different unique common obvious guessable unchanged default personal
    private public important sensitive mandatory case-sensitive""".split()
)
_STOP_OTHER = frozenset(
    """gì gi cái cai của cua mình minh bao nhiêu nhieu không khong được duoc đã da sẽ se đang
    dang rồi roi trong ở là này nay đó nhé nhe ạ mới moi cũ cu sai đúng dung quá qua rất rat
    bị bi thì thi và va với voi cho chưa chua gồm gom có co phải phai nào nao ai ghi lưu luu
    в на от не был была было это такой такая такое же тот та то слишком очень сложный простой
    новый старый где какой какая что как у с к по для ещё еще уже неверный верный правильный
    изменён изменен сброшен el la los las un una en de del que no muy demasiado nuevo nueva
    le les une du des ne pas trop très nouveau nouvelle der die das ein eine im zu nicht sehr
    neu alt o os as um uma em do da não muito novo nova thứ thu những nhung một mot các cac
    người nguoi điều dieu việc viec nên nen phải quy mỗi moi za na w z do nie się sie tak
    bardzo jest są sa już juz sur dans sous chez avec sans collé colle écrit ecrit noté note
    está esta en la nevera aquí aqui allí alli""".split()
)
# A word with a Vietnamese letter or tone mark (ă â đ ê ô ơ ư, ạ … ỹ) and no digit or symbol is
# a word of the sentence: passwords are typed without them.
_VI_LETTERS = re.compile("[ăâđêôơưĂÂĐÊÔƠƯ\u1ea0-\u1ef9]")
_UNITS = re.compile(
    r"(?i)\s*(?:characters?|chars?|digits?|letters?|symbols?|numbers?|words?|days?|weeks?|"
    r"months?|years?|hours?|minutes?|times?|attempts?|tries|ký tự|ky tu|chữ số|文字|桁|位|个字符|"
    r"字符|자|자리|символ\w*|цифр\w*|caract\w*|zeichen|stellen|dígitos|digitos|letras)\b"
)
_CODE_LINE = re.compile(r"[ \t]*(?:[-*•]|\d{1,2}[.)])?[ \t]*([A-Za-z0-9][A-Za-z0-9 \t-]{3,60})\s*$")


def is_prose(word: str, adjectives: bool = True) -> bool:
    w = word.lower().strip(_TRAILING)
    if w in _STOP or w in _STOP_OTHER or (adjectives and w in _ADJECTIVES):
        return True
    if w.isalpha() and _VI_LETTERS.search(w):
        return True
    # An English word of ordinary talk by its ending ("is encrypted", "is expiring", "is usually").
    return w.isalpha() and w.isascii() and len(w) > 4 and w.endswith(("ed", "ing", "ly"))


_NOT_A_VALUE = re.compile(
    r"(?i)(?:true|false|null|none|nil|yes|no|on|off|undefined|required|optional|n/?a|tbd|todo|"
    r"empty|unset|redacted|\[redacted\]|\*+|x{3,}|\.{3}|…|string|str|int|bool|bytes|secretstr|"
    r"password|secret|token|example|placeholder|dummy|test|hidden)"
)


# A value that names where the secret is rather than being it: ``$DB_PASS``, ``${DB_PASS}``,
# ``%DB_PASS%``, ``{{ db_pass }}``, ``<your token>``, ``getenv(`` / ``os.environ[…]``.
_REFERENCE = re.compile(
    r"\$\{?[A-Za-z_]\w*\}?|%[A-Za-z_]\w*%|\{\{.*|\{%.*|<[^<>]*>?|"
    r"[A-Za-z_][\w.]*\((?:[\w.\"']*\)?)?|(?:os|env|process|settings|config)\.[\w.\[\]]+"
)


def plausible_value(value: str) -> bool:
    """Not a type, a boolean, a placeholder or a reference to somewhere else."""
    v = value.strip("\"'`")
    if len(v) < 3 or _NOT_A_VALUE.fullmatch(v) or _REFERENCE.fullmatch(v):
        return False
    if "[redacted" in v:
        return False  # already redacted: redacting again changes nothing
    if v.endswith((":", ",")):
        return False
    return _ALNUM.search(v) is not None  # in C: a value may be thousands of characters


_ALNUM = re.compile(r"[^\W_]")  # str.isalnum
# How far past a cue (or a shape's needle, redact.py) its value is read, and so how long a
# value a rule judges. A value read to the end of its run, for every cue or needle in it, made
# redaction quadratic ("?password=" 9,000 times over: 48 s; "?combination=", "7z " alike). A
# value accepted on its first REACH characters is redacted whole, however long (``_whole``,
# redact._anchored); one refused there is refused (no secret is told from a non-secret only
# after five hundred characters; a command line's password flag must come within REACH of the
# tool's name). Bounded, redaction is linear in the text, however dense the needles.
REACH = 512


def _strong(token: str) -> bool:
    """Looks like a password on its own: letters and digits, or a symbol among them."""
    has_d = any(c.isdigit() for c in token)
    has_a = any(c.isalpha() for c in token)
    has_sym = any(not c.isalnum() for c in token)
    return len(token) >= 5 and ((has_d and has_a) or (has_sym and (has_d or has_a)))


@dataclass(frozen=True)
class Said:
    start: int
    end: int
    kind: str


_KIND = {
    "password": "a password said in words",
    "pin": "a PIN or access code",
    "strict": "a token or key said in words",
    "phrase": "a passphrase",
    "codes": "2FA recovery codes",
    "login": "a login with its password",
    "id": "a national id or passport number",
    "cvv": "a card security code",
    "otp": "a one-time code",
}


def _token_at(text: str, p: int) -> tuple[int, int] | None:
    m = _TOKEN.match(text, p, p + REACH)
    if not m:
        return None
    s, e = m.span()
    if e == p + REACH:
        return s, e  # cut by the window: judged on what it read (``_whole`` takes the rest)
    while e > s and text[e - 1] in _TRAILING:
        e -= 1
    while s < e and text[s] in "([{<":
        s += 1
    s, e = emphasis_off(text, s, e)
    while e > s and text[e - 1] in _TRAILING:
        e -= 1
    return (s, e) if e > s else None


_EMPHASIS = "*_~"


def emphasis_off(text: str, s: int, e: int) -> tuple[int, int]:
    """The token ``text[s:e]`` without Markdown's emphasis around it: marks that open what its
    line closes after them ("**4821**", "**blue" of "**blue monkey 42**"), or close what its
    line opened before it ("**card PIN 3322**", "~~my PIN is 6364~~"). Read as part of the
    value, they made it no PIN, or a passphrase's start or end. A list's "* " opens nothing,
    and a mark the line does not pair stays: a password ending in "*" keeps it."""
    line_start = text.rfind("\n", 0, s) + 1
    if s < e and text[s] in _EMPHASIS:  # "password {{": no token left
        k = s
        while k < e and text[k] == text[s]:
            k += 1
        line_end = text.find("\n", k)
        if k < e and text.find(text[s:k], k, len(text) if line_end < 0 else line_end) >= 0:
            s = k
    if e > s and text[e - 1] in _EMPHASIS:
        k = e - 1
        while k > s and text[k - 1] == text[e - 1]:
            k -= 1
        run = text[k:e]
        opened = text.rfind(run, line_start, s)
        if k > s and opened >= 0 and not text[opened + len(run) : opened + len(run) + 1].isspace():
            e = k
    return s, e


def _quoted(text: str, p: int) -> tuple[int, int] | None:
    close = _QUOTES.get(text[p : p + 1])
    if close is None:
        return None
    end = text.find(close, p + 1, p + 202)
    if end <= p + 1 or "\n" in text[p + 1 : end]:
        return None
    return p + 1, end


_CLAUSE_END = re.compile(r"\n|[.!?。！？](?=\s|$)|[;；]|\s\(|\s[-–—]\s")


def _clause_end(text: str, p: int, limit: int = 200) -> int:
    """Where the clause starting at ``p`` ends: a line end, a sentence end, ``;``."""
    m = _CLAUSE_END.search(text, p, min(len(text), p + limit))
    return m.start() if m else min(len(text), p + limit)


def _phrase(text: str, p: int, connector: str) -> tuple[int, int] | None:
    end = _clause_end(text, p)
    said = text[p:end].strip()
    words = said.split()
    if not words or is_prose(words[0], adjectives=False) or not plausible_value(said):
        return None
    if connector == "bare" and words[0].endswith(":"):
        return None  # "security answer hint: first pet": the cue names what follows
    # "is long and random", "length must be at least 12": a sentence about a passphrase. Seed
    # words are the exception ("about", "above" are in BIP-39's list).
    # After a colon, what follows is given as the value.
    if (
        connector != "sym"
        and any(w.lower().strip(_TRAILING) in _STOP for w in words)
        and not _all_seed_words(words)
    ):
        return None
    return p, end


def _all_seed_words(words: list[str]) -> bool:
    from clawmem.text.seed_words import is_seed_word

    return all(is_seed_word(w.lower().strip(_TRAILING)) for w in words)


def _codes(text: str, p: int, connector: str) -> tuple[int, int] | None:
    end = text.find("\n", p, p + REACH)
    end = min(len(text), p + REACH) if end < 0 else end
    if text[p:end].strip():
        # "10 codes, each usable once" counts them; a code holds four characters or more, three
        # of them digits ("8812", "8f3a-91c2").
        return (p, end) if _A_CODE.search(text, p, end) else None
    # The codes are listed below the cue: every following line that is one.
    pos, last = end + 1, None
    for _ in range(24):
        if pos > len(text):
            break
        nl = text.find("\n", pos, pos + 128)
        nl = min(len(text), pos + 128) if nl < 0 else nl  # a line of a code holds 60 at most
        m = _CODE_LINE.match(text, pos, nl)
        if not m or sum(c.isdigit() for c in m.group(1)) < 2:
            break
        last, pos = nl, nl + 1
    return (end + 1, last) if last is not None else None


def _login(text: str, p: int, connector: str) -> tuple[int, int] | None:
    m = _USER_SEP.match(text, p, p + REACH)
    tok = _token_at(text, m.end()) if m else None
    if tok is None:
        return None
    pw = text[tok[0] : tok[1]]
    if not plausible_value(pw) or is_prose(pw):
        return None
    if pw.isalpha() and not _strong(pw):
        # "peter / SSO", "anna / Google", "Peter / hardware key": a way to sign in, named. A
        # word is a password only in lower case and ending its clause ("admin / hunter").
        if not pw.islower() or len(pw) < 6 or _GAP.match(text, tok[1]):
            return None
    return tok


def _id(text: str, p: int, connector: str) -> tuple[int, int] | None:
    m = _ID_NUMBER.match(text, p, p + 64)  # the longest id is 20 or so
    if not m:
        return None
    s, e = m.span()
    while e > s and text[e - 1] in ".-":
        e -= 1
    if connector == "bare" and not text[s:e].isalnum():
        return None
    return (s, e) if sum(c.isdigit() for c in text[s:e]) >= 5 else None


def _cvv(text: str, p: int, connector: str) -> tuple[int, int] | None:
    m = _CVV.match(text, p)
    return m.span() if m and not _UNITS.match(text, m.end()) else None


def _otp(text: str, p: int, connector: str) -> tuple[int, int] | None:
    m = _OTP.match(text, p)
    if m is None or _UNITS.match(text, m.end()):
        return None
    if connector == "bare" and len(m.group(0)) != 6:
        return None
    return m.span()


def _pin(text: str, p: int, connector: str) -> tuple[int, int] | None:
    tok = _token_at(text, p)
    if tok is None:
        return None
    value = text[tok[0] : tok[1]]
    if connector == "bare":
        return tok if value.isdigit() and 4 <= len(value) <= 10 else None
    digits = sum(c.isdigit() for c in value)
    if not _PIN.fullmatch(value) or digits < 3 or digits * 2 < len(value):
        return None
    return None if _UNITS.match(text, tok[1]) else tok


def _strict(text: str, p: int, connector: str) -> tuple[int, int] | None:
    tok = _token_at(text, p)
    if tok is None:
        return None
    value = text[tok[0] : tok[1]]
    if connector == "bare":
        return tok if _strong(value) and any(c.isdigit() for c in value) else None
    ok = (
        len(value) >= 8
        and not _AMOUNT.fullmatch(value)  # "Tokens: 1,204,551"
        and any(c.isdigit() or (connector == "sym" and c in "-_./+=") for c in value)
        and not value.isalpha()
        and plausible_value(value)
        and not _ELSEWHERE.fullmatch(value)
    )
    return tok if ok else None


def _password(text: str, p: int, connector: str) -> tuple[int, int] | None:
    tok = _token_at(text, p)
    if tok is None:
        return None
    value = text[tok[0] : tok[1]]
    if connector == "bare":
        return tok if _strong(value) else None
    # After a colon an adjective may start a passphrase ("password: correct horse battery").
    if is_prose(value, adjectives=connector != "sym") or not plausible_value(value):
        return None
    if value.isdigit() and _UNITS.match(text, tok[1]):
        return None  # "is 12 characters long"
    # A passphrase with spaces: the following tokens of the same clause, while they are not
    # ordinary talk ("the wifi password is blue monkey 42 so …" takes "blue monkey 42").
    start, end = tok
    for _ in range(5):
        if end < len(text) and text[end] in _TRAILING:
            break  # a clause ends after the token
        gap = _GAP.match(text, end)
        nxt = _token_at(text, gap.end()) if gap else None
        word = text[nxt[0] : nxt[1]] if nxt else ""
        if nxt is None or nxt[0] != gap.end() or is_prose(word) or not word[0].isalnum():  # type: ignore[union-attr]
            break  # ordinary talk, or a dash or other mark that starts a new clause
        end = nxt[1]
    return start, end


_A_CODE = re.compile(r"(?<![\w])(?=(?:[A-Za-z-]*\d){3})[A-Za-z0-9]{4,}(?:-[A-Za-z0-9]{3,})*")
_AMOUNT = re.compile(r"\d{1,3}(?:[,.\u202f ]\d{3})+(?:[.,]\d+)?[kKmMbB]?")
_CVV = re.compile(r"\d{3,4}(?![\d/.,:-]?\d)")
_OTP = re.compile(r"(?:\d{4,8}|\d{3}[ -]\d{3})(?![\d/:-]?\d|[.,]\d)")
_USER_SEP = re.compile(r"([^\s/:|,]+)[ \t]*(?:/|:|\|)[ \t]*")
_ID_NUMBER = re.compile(r"[A-Z0-9](?:[A-Z0-9.-]|[ ](?=[A-Z0-9]))*")
_PIN = re.compile(r"[0-9A-Za-z#*-]{3,16}")
_GAP = re.compile(r"[ \t]+")
# A value that says where the secret is rather than what it is.
_ELSEWHERE = re.compile(r"https?://\S+|[\w./-]+\.(?:ya?ml|json|toml|env|txt|md|ini|cfg)")

Reader = Callable[[str, int, str], "tuple[int, int] | None"]
_RULES: dict[str, Reader] = {
    "phrase": _phrase,
    "codes": _codes,
    "login": _login,
    "id": _id,
    "cvv": _cvv,
    "otp": _otp,
    "pin": _pin,
    "strict": _strict,
    "password": _password,
}


def _value(text: str, p: int, rule: str, connector: str) -> tuple[int, int] | None:
    """The span of the secret at ``p`` under ``rule``, or None when what is there is not one."""
    q = _quoted(text, p)
    if q is None:
        return _RULES[rule](text, p, connector)
    inner = text[q[0] : q[1]].strip()
    words = inner.split()
    ok = plausible_value(inner) and bool(words) and not is_prose(words[0])
    if connector == "bare" and rule != "password":
        ok = ok and _strong(inner) and any(c.isdigit() for c in inner)
    return q if ok else None


_WORD_START = re.compile(r"(?<![\w-])\w")
_CJK = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # Thai too


def find_said(text: str, needles_at: list[int]) -> list[Said]:
    """Every secret said in words in ``text``, given where its ``NEEDLES`` occur: the span of
    each value. A cue may start at a word start shortly before a needle (in text with CJK or
    Hangul, which have no spaces, at any position there)."""
    spaced = text.isascii() or not _CJK.search(text)
    starts: set[int] = set()
    for i in needles_at:
        lo = max(0, i - _WINDOW)
        if spaced:
            starts.update(m.start() for m in _WORD_START.finditer(text, lo, i + 1))
        else:
            starts.update(range(lo, i + 1))
    found: list[Said] = []
    end = -1
    for s in sorted(starts):
        if s < end:
            continue
        m = CUE.match(text, s)
        if m is None:
            continue
        said = _said_after(text, m)
        found.extend(said)
        end = said[-1].end if said else m.end()
    return found


_POLISH = re.compile(r"(?i)has[lł]")
_VI = re.compile(r"(?i)m[aậ]t|mk|pass")
_ONE_TOKEN_LINE = re.compile(r"\r?\n[ \t]*(?=\S)([^\s]+|\"[^\"\n]+\"|'[^'\n]+')[ \t]*(?:\r?\n|$)")


def _next_line_value(text: str, p: int) -> int:
    """Where the value on the line after ``p`` starts, when that line holds only one token (a
    line of words is the text under a heading "Password:"), or -1."""
    m = _ONE_TOKEN_LINE.match(text, p, p + REACH)
    return m.start(1) if m else -1


def _said_after(text: str, m: re.Match[str]) -> list[Said]:
    """The secret after the cue ``m``: its value read by the cue's rule, if there is one."""
    rule, style, _ = (m.lastgroup or "").split("__")
    p = m.end()
    q = (_TIGHT_QUALIFIER if style == "tight" else _LOOSE_QUALIFIER).match(text, p)
    # Without a qualifier first ("password: x", "password to x"), then with one ("password for
    # the db is x"): a qualifier may run on to a later connector ("… is x yesterday - keep …").
    for after in [p] + ([q.end()] if q else []):
        c = _CONNECTOR.match(text, after)
        if not c:
            continue
        connector = c.lastgroup or ""
        if (
            connector == "to"
            and not _POLISH.match(m.group(0))  # "hasło do wifi to Kasztan2024": "to" is "is"
            and not _CHANGED.search(text, max(0, m.start() - 40), m.start())
        ):
            continue  # "password to the vault": only "changed the password to X" gives one
        if connector == "word" and c.group(0).strip().lower() == "la" and not _VI.match(m.group(0)):
            continue  # "la" is Vietnamese "là" typed bare; in Spanish or French it is "the"
        if connector == "bare" and after != p:
            continue  # "password for the db hunter2": too loose to trust
        v = c.end()
        if connector in ("word", "to", "sym"):
            v = _FILLERS.match(text, v).end()  # type: ignore[union-attr]
        if rule != "codes" and connector == "sym" and text.startswith(("\n", "\r\n"), v):
            v = _next_line_value(text, v)  # "Password:" and the value alone on the next line
            if v < 0:
                continue
        span = _value(text, v, rule, connector)
        if span is not None:
            return [Said(span[0], _whole(text, *span, rule), _KIND[rule])]
    return []


def _whole(text: str, start: int, end: int, rule: str) -> int:
    """The end of a value that ``REACH`` cut (a token, or a line of codes, that runs on): the
    end of its run (of its line, for codes), so that a secret judged on its first characters
    is redacted whole. A value that ends before the window is left as it is."""
    if end - start < REACH - 8 or end >= len(text) or text[end] == "\n":
        return end
    if rule == "codes":
        nl = text.find("\n", end)
        return len(text) if nl < 0 else nl
    m = _TOKEN.match(text, end)
    return m.end() if m else end
