"""Credentials recognised by their form: a token whose shape says what it is (``ghp_…``, a PEM
block, a card number that passes Luhn), a named assignment (``DB_PASS=…``), a password given on a
command line (``mysql -p…``). Secrets said in words ("the wifi password is …") are
``secret_words``'s; ``redact`` runs both.

A shape either covers the whole match or only its ``value`` group (``PGPASSWORD=…``: the name
stays, so a reader still sees what was there). ``check``, when set, must accept the match's secret
part (a checksum, a name that really names a secret): the pattern alone would say yes to too much.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from clawmem.text.secret_words import emphasis_off, is_prose, plausible_value


@dataclass(frozen=True)
class Shape:
    kind: str  # what it is, in words: "a GitHub token"
    pattern: re.Pattern[str]  # a ``value`` group, if present, is the part that is secret
    # Lower-case strings at least one of which every match contains: a text holding none of them
    # is not searched (a substring test costs far less than a pattern that tries every position;
    # most text is ordinary talk, and transcripts run to megabytes). Empty: ``gate`` decides.
    needles: tuple[str, ...] = ()
    check: Callable[[re.Match[str]], bool] | None = None
    # The most characters a match holds before its needle: where it may start (a ``NAME=`` of
    # 60, quoted). A token that starts with its needle (``ghp_``) has 0: one try per needle.
    back: int = 80
    # For a shape with no needle: a literal every match starts with ("\n" for one that starts a
    # line) and a pattern for what follows it. redact.py searches the hints of every such rule
    # first, and a text none of them is in (most text) is not searched for any.
    hint: tuple[str, str] = ("", "")
    # The most characters from a match's start to its bare ``value`` when no space comes between
    # (a ``NAME=``: 65), or -1 when not bounded. A needle further than this inside a bare value
    # found already can only start a match whose value lies inside that one (redact.py skips it).
    to_value: int = -1
    # How far past its needle one try reads (redact.py): 0 for ``secret_words.REACH``. A shape
    # whose match must reach a part further on than that (a JSON web token's signature, after a
    # header and payload of a kilobyte or more) reads further, or it is never found.
    reach: int = 0
    # For a shape whose matches lie in one run of characters and all end at one place in it,
    # wherever in the run they start: ``(the run's end, where its matches end)`` for the needle
    # at a position, that end -1 when none can end in the run. redact.py reads it once per run,
    # in place of ``reach``: a secret of any length is found, and a run of needles costs one
    # scan of the run (a connection string's password, which ends at the run's last "@host").
    run_end: Callable[[str, int], tuple[int, int]] | None = None


# --------------------------------------------------------------------------- checks


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def luhn(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# "Order #4539 1488 0343 6467": a number labelled as an order, an invoice, a tracking or
# reference number is that, even when it passes Luhn.
_LABELLED = re.compile(
    r"(?i)\b(?:order|invoice|tracking|reference|ref|ticket|booking|confirmation|shipment|parcel|"
    r"case|claim)[ \t]*(?:#|no\.?|nr\.?|number|id)?[ \t]*[:#]?[ \t]*$"
)


def _card(m: re.Match[str]) -> bool:
    raw = m.group(0)
    if _LABELLED.search(m.string, max(0, m.start() - 24), m.start()):
        return False
    num = _digits(raw)
    if not 13 <= len(num) <= 19 or num[0] not in "23456" or not luhn(num):
        return False
    groups = re.split(r"[ -]", raw)
    # Written in one run, or in the groups cards print (4-4-4-4…, Amex 4-6-5): a number split
    # at random places is a phone number, an amount, a list.
    return (
        len(groups) == 1
        or all(len(g) == 4 for g in groups[:-1])
        or ([len(g) for g in groups] == [4, 6, 5])
    )


# IBAN lengths by country (ISO 13616 registry): a shape of the right length whose mod-97 check
# holds is an account number, whatever its grouping.
_IBAN_LENGTHS = dict(
    (c[:2], int(c[2:]))
    for c in """AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 BY28 CH21 CR22 CY28 CZ24 DE22
    DK18 DO28 EE20 EG29 ES24 FI18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23
    IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 MC27 MD24 ME22 MK19 MR27 MT31
    MU30 NL18 NO15 PK24 PL28 PS29 PT25 QA29 RO24 RS22 SA24 SC31 SE24 SI19 SK24 SM27 ST25 SV28
    TL23 TN24 TR26 UA29 VA22 VG24 XK20""".split()
)


def _iban(m: re.Match[str]) -> bool:
    if not _starts_a_word(m):
        return False
    s = re.sub(r"\s", "", m.group(0)).upper()
    if _IBAN_LENGTHS.get(s[:2]) != len(s):
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _pgpass(m: re.Match[str]) -> bool:
    value = m.group("value")
    return plausible_value(value) and not is_prose(value) and not value.isdigit()


def _strong_value(m: re.Match[str]) -> bool:
    """A value with letters and digits (or a symbol) in it: not a word."""
    v = secret_of(m)
    return plausible_value(v) and has_digit(v) and has_letter(v)


# Searched in C: a value may be a couple of thousand characters (redact.REACH), tried once for
# every needle in it, and a loop over its characters in Python was most of redaction's time.
# str.isdigit is \d and the superscript, circled and other digits below (tests check the set).
_DIGIT = re.compile(
    "[\\d\u00b2\u00b3\u00b9\u1369-\u1371\u19da\u2070\u2074-\u2079\u2080-\u2089\u2460-\u2468"
    "\u2474-\u247c\u2488-\u2490\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788"
    "\u278a-\u2792\U00010a40-\U00010a43\U00010e60-\U00010e68\U00011052-\U0001105a"
    "\U0001f100-\U0001f10a]"
)
_LETTER = re.compile(r"[^\W\d_]")  # str.isalpha, and the few numbers that are no \d


def has_digit(v: str) -> bool:
    if v.isascii():  # ten substring searches run at memory speed; a class, a character a step
        return any(d in v for d in "0123456789")
    return _DIGIT.search(v) is not None


def has_letter(v: str) -> bool:
    if v.isascii():
        return v.lower() != v.upper()
    return _LETTER.search(v) is not None


def _starts_a_word(m: re.Match[str]) -> bool:
    # Not a lookbehind in the pattern: a pattern that starts with a literal is searched fast.
    return m.start() == 0 or not m.string[m.start() - 1].isalnum()


def _ssn(m: re.Match[str]) -> bool:
    area, group, serial = m.group(0).split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_id(m: re.Match[str]) -> bool:
    s = m.group(0).upper()
    total = sum(int(c) * w for c, w in zip(s[:17], _CN_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == s[17] and s[6:8] in ("19", "20")


def _kr_rrn(m: re.Match[str]) -> bool:
    s = _digits(m.group(0))
    total = sum(
        int(c) * w for c, w in zip(s[:12], (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5), strict=True)
    )
    return (11 - total % 11) % 10 == int(s[12]) and 1 <= int(s[2:4]) <= 12


# Parts of a name that make it name a secret (``DB_PASS``, ``PGPASSWORD``, ``SECRET_KEY``,
# ``X-Api-Key``), and last parts that make it name something about one instead (``TOKEN_LIMIT``,
# ``password_policy``, ``max_tokens``).
_SECRET_WORDS = tuple("password passwd passphrase pwd secret token credential apikey".split())
_SECRET_EXACT = frozenset({"pass", "pw", "pword", "psw", "pat"})  # pat: a personal access token
_KEY_OWNERS = frozenset(
    """api secret access private signing encryption master account auth client app license
    licence product wifi wpa wpa2 sas storage shared session""".split()
)
_ABOUT = frozenset(
    """count counts limit limits budget len length size max min ttl timeout expiry expires
    expiration lifetime age file path dir url uri endpoint name id ids type env var header field
    prefix policy hint rotation required enabled disabled mode format version cmd command reset
    manager store vault ref source rules rule strength chars pattern regex label prompt help
    placeholder input form column usage used kind method provider location arn hash hashed
    digest salt algorithm algo number""".split()
)


def _name_parts(name: str) -> list[str]:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name.strip("\"'"))
    return [p for p in re.split(r"[^A-Za-z0-9]+", name.lower()) if p]


@lru_cache(maxsize=4096)  # the same names recur all through a file (PASSWORD, api_key)
def names_a_secret(name: str) -> bool:
    parts = _name_parts(name)
    if not parts or parts[-1] in _ABOUT:
        return False
    for i, p in enumerate(parts):
        if p in _SECRET_EXACT or p.endswith(_SECRET_WORDS):
            return True
        if p == "key" and i and parts[i - 1] in _KEY_OWNERS:
            return True
        if p.endswith("key") and p[:-3] in _KEY_OWNERS:  # APIKEY, SECRETKEY
            return True
    return False


def _value_ok(m: re.Match[str]) -> bool:
    return plausible_value(secret_of(m))


def _assignment(m: re.Match[str]) -> bool:
    value = secret_of(m)
    return names_a_secret(m.group("name")) and plausible_value(value) and not is_prose(value)


def _flag_value(m: re.Match[str]) -> bool:
    value = secret_of(m)
    return plausible_value(value) and not value.startswith("-")


# --------------------------------------------------------------------------- the shapes


def _s(
    kind: str,
    regex: str,
    needles: tuple[str, ...],
    check: Callable[[re.Match[str]], bool] | None = None,
    back: int = 80,
    to_value: int = -1,
    reach: int = 0,
    run_end: Callable[[str, int], tuple[int, int]] | None = None,
) -> Shape:
    return Shape(
        kind, re.compile(regex), needles, check, back, to_value=to_value, reach=reach,
        run_end=run_end,
    )  # fmt: skip


# A URL with a password, scheme://[user]:PASSWORD@host: every part of it is a run of characters
# other than these (the host's end excepted, which one of them may follow), and the password may
# hold "@" and ":", so it runs to the last "@" before a host in that run. The host may end at
# Markdown's inline code or bold ("`postgres://app:pw@db`", "**…@db**") or a sentence's "!":
# it did not (REDACTION_VERSION 5), and such a password was left as written.
_URL_STOP = re.compile(r"[\s\"'<>]")
_URL_HOST = r"[A-Za-z0-9_.\[\]-]+(?=[:/?#\s\"'<>),;`*!]|$)"
_URL_HOST_AT = re.compile(_URL_HOST)


def url_run_end(text: str, at: int) -> tuple[int, int]:
    """``Shape.run_end`` of a URL with a password, for its "://" at ``at``: the end of the run
    it lies in, and the end of the host after the run's last "@" that a host follows (-1: no such
    "@"). A password of any length is found this way; within ``REACH`` of its needle alone, one
    of 480 characters or more was not (its "@host" lay past the window) and was left as written.
    Each "@" tried is followed by a host that stops at the next one: the run is read once."""
    stop = _URL_STOP.search(text, at)
    end = stop.start() if stop is not None else len(text)
    a = text.rfind("@", at, end)
    while a >= 0:
        host = _URL_HOST_AT.match(text, a + 1)
        if host is not None:
            return end, host.end()
        a = text.rfind("@", at, a)
    return end, -1


# A value, quoted (spaces and all) or bare: ``secret_span`` takes whichever matched.
_QUOTED_OR_BARE = r"""(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|(?P<value>[^\s'",;]+))"""
VALUE_GROUPS = ("value", "dq", "sq")


def secret_span(m: re.Match[str]) -> tuple[int, int]:
    """Where the secret part of a match is: its value group, or all of it. An assignment's bare
    value is read without the Markdown emphasis its line pairs ("**password: x**"): it took the
    closing "**", which the redaction then removed, and the bold never closed."""
    for g in VALUE_GROUPS:
        if g in m.re.groupindex and m.group(g) is not None:
            s, e = m.span(g)
            if g == "value" and "name" in m.re.groupindex and e > s:
                text = m.string
                if text[s] in "*~" or text[e - 1] in "*~":
                    s, e = emphasis_off(text, s, e)
            return s, e
    return m.span()


def secret_of(m: re.Match[str]) -> str:
    s, e = secret_span(m)
    return m.string[s:e]


# Order matters only where shapes overlap: the more specific comes first (``find_secret`` names
# the first that matches).
SHAPES: tuple[Shape, ...] = (
    _s(
        "a private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)",
        ("private key",),
    ),
    _s(
        "a PuTTY private key",
        # The whole file: its private lines and MAC, and what is around them.
        r"PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC:\s*[0-9a-fA-F]+|\Z)",
        ("putty-user-key-file",),
    ),
    _s(
        "an AWS access key",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
        ("akia", "asia", "agpa", "aida", "aroa"),
        back=0,
    ),
    _s(
        "an AWS secret key",
        r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{30,})",
        ("aws",),
        to_value=24,  # aws_secret_access_key, quoted, and "="
    ),
    _s(
        "a GitHub token",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        back=0,
    ),
    _s(
        "a GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{40,}\b", ("github_pat_",), back=0
    ),
    _s(
        "a GitLab token",
        r"\bgl(?:pat|dt|rt|ptt|cbt|imt|agent)-[A-Za-z0-9_-]{20,}",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "glagent-"),
        back=0,
    ),
    _s("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",), back=0),
    _s(
        "an OpenAI-style API key",
        r"\bsk-(?:proj-|svcacct-|or-v1-|or-)?[A-Za-z0-9_-]{20,}",
        ("sk-",),
        back=0,
    ),
    _s("a Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", ("xox",), back=0),
    _s(
        "a Slack webhook",
        r"https://hooks\.slack\.com/services/[\w/-]{20,}",
        ("hooks.slack.com",),
        back=8,
    ),
    _s(
        "a Discord webhook",
        r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
        ("/api/webhooks/",),
        back=48,
    ),
    _s("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}", ("aiza",), back=0),
    _s(
        "a Google OAuth secret or token",
        r"\b(?:GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{20,}|1//0[A-Za-z0-9_-]{30,})",
        ("gocspx-", "ya29.", "1//0"),
        back=0,
    ),
    _s(
        "a Stripe key",
        r"\b(?:sk|rk|pk|whsec)_(?:live|test)?_?[0-9A-Za-z]{16,}",
        ("_live_", "_test_", "whsec_"),
        back=5,
    ),
    _s("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}", ("hf_",), back=0),
    _s("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",), back=0),
    _s("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", ("pypi-age",), back=0),
    _s("a SendGrid key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", ("sg.",), back=0),
    _s("a Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", (":aa",), back=10),
    _s("a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", ("_v1_",), back=3),
    _s(
        "a HashiCorp Vault token",
        r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}",
        ("hvs.", "hvb.", "hvr."),
        back=0,
    ),
    _s(
        "a Vault token",
        r"(?i)\bvault[_ -]?token\b[\"']?\s*[:=]?\s*[\"']?(?P<value>s\.[A-Za-z0-9]{20,})",
        ("vault",),
        back=0,
    ),
    _s("an age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}", ("age-secret-key-",), back=0),
    _s(
        "a Shopify token",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        back=0,
    ),
    _s("a Tailscale key", r"\btskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]+", ("tskey-",), back=0),
    _s("a Databricks token", r"\bdapi[0-9a-f]{32}(?:-\d)?\b", ("dapi",), back=0),
    _s("a Postman key", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b", ("pmak-",), back=0),
    _s(
        "a Grafana token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        ("glsa_", "glc_"),
        back=0,
    ),
    _s(
        "a Linear key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", ("lin_api_", "lin_oauth_"), back=0
    ),
    _s("a Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.",), back=0),
    _s("a Mailgun key", r"\bkey-[0-9a-f]{32}\b", ("key-",), back=0),
    _s("a Square token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", ("sq0",), back=0),
    _s(
        "a Groq or Replicate key",
        r"\b(?:gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,})",
        ("gsk_", "r8_"),
        back=0,
    ),
    _s(
        "a JSON web token",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        ("eyj",),
        back=0,
        # Its signature comes after the header and payload: an identity provider's token runs
        # to 1-3 KB (web servers take headers of 8 KB at most), and within REACH alone one over
        # 512 characters was not found. A run of "-eyJ" costs 16 times a shape's usual try.
        reach=8192,
    ),
    _s(
        "a connection string with a password",
        # scheme://[user]:PASSWORD@host: the password may hold '@' and ':' (the last '@' before
        # a host ends it); the user may be empty (redis://:pw@host).
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/@\"'<>]*:(?P<value>[^\s\"'<>]+)@" + _URL_HOST,
        ("://",),
        back=32,
        run_end=url_run_end,
    ),
    _s(
        "an account key in a connection string",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)=(?P<value>[^;\s\"']{3,})",
        ("accountkey=", "sharedaccess", "password=", "pwd="),
        _value_ok,
        back=0,
        to_value=22,  # SharedAccessSignature=
    ),
    _s(
        "an Authorization header",
        r"(?i)\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:(?:basic|digest|bearer|token|bot|apikey|negotiate|ntlm|hmac|aws4-hmac-sha256)\s+)?"
        r"(?P<value>[^\s\"']{6,}(?:[ ,]+[A-Za-z]+=[^\s\"']+)*)",
        ("authorization",),
        _value_ok,
        back=6,
    ),
    _s("a bearer token", r"(?i)\bBearer\s+(?P<value>[A-Za-z0-9._~+/=-]{8,})", ("bearer",), back=0),
    _s("a clawmem token", r"\bcmt_[A-Za-z0-9_-]{40,}", ("cmt_",), back=0),
    _s(
        "a signature or token in a URL",
        # Azure SAS ``sig=``, S3/GCS presigned URLs, ``?access_token=``, ``&code=`` of OAuth.
        r"(?i)[?&;](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|"
        r"access_token|id_token|refresh_token|token|api_?key|key|code|secret|client_secret|"
        r"password|pwd)=(?P<value>[^&\s\"'#<>]{12,})",
        ("sig=", "signature=", "token=", "key=", "code=", "secret=", "password=", "pwd="),
        _strong_value,
        back=22,
        to_value=22,  # &x-amz-security-token=
    ),
    _s(
        "a Docker registry login",
        r"\"(?:auth|identitytoken|registrytoken)\"\s*:\s*\"(?P<value>[A-Za-z0-9+/=_.-]{8,})\"",
        ('"auth"', '"identitytoken"', '"registrytoken"'),
        back=0,
    ),
    _s(
        "a cookie",
        # Every value of a Cookie header: session ids, CSRF and auth cookies alike.
        r"(?i)\b(?:set-)?cookie[ \t]*:[ \t]*(?P<value>[^\s=;'\"]+=[^\n'\"]+)",
        ("cookie",),
        back=4,
    ),
    _s(
        "a password hash",
        # crypt(3) and htpasswd forms: $apr1$, $2y$ (bcrypt), $5$/$6$ (SHA-crypt), $y$
        # (yescrypt), $argon2id$, {SSHA}: an offline guess away from the password.
        r"(?:\$(?:apr1|2[abxy]|[156]|y|gy|7|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)\$"
        r"[A-Za-z0-9./+=$,-]{16,}|\{(?:SSHA|SHA|SMD5|SSHA256|SSHA512)\}[A-Za-z0-9+/]{20,}={0,2})",
        ("$apr1$", "$2a$", "$2b$", "$2x$", "$2y$", "$1$", "$5$", "$6$", "$y$", "$gy$", "$7$")
        + ("$argon2", "$scrypt$", "$pbkdf2", "{ssha", "{sha}", "{smd5}"),
        back=0,
    ),
    _s(
        "a one-time code",
        r"(?i)(?<![\w-])(?:[a-z]-)?(?P<value>\d{4,8})[ \t]+is[ \t]+your[ \t]+(?:[\w-]+[ \t]+){0,3}"
        r"(?:code|otp|pin|passcode|password|verification code)\b",
        ("is your",),
        back=16,
    ),
    _s(
        "an email address with its password",
        # "anna@gmail.com / Blue-Whale-77": the match starts at the "@" (the address before it is
        # not secret, and a start there costs one try).
        r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+[ \t]*/[ \t]*(?P<value>[^\s/]{5,})",
        ("@",),
        lambda m: (
            _strong_value(m) or (not secret_of(m).isalnum() and plausible_value(secret_of(m)))
        ),
        back=0,
    ),
    _s(
        "a secret assignment",
        # NAME = value, NAME: value, "name": "value": the name must name a secret (names_a_secret).
        r"(?<![/\\])(?P<name>[\"']?\b[A-Za-z][A-Za-z0-9_.-]{0,60}[\"']?)[ \t]*(?::=|=|:)[ \t]*"
        + _QUOTED_OR_BARE,
        ("pass", "pwd", "psw", "pw", "secret", "token", "key", "credential")
        + ("_pat", "-pat", "pat=", "pat:", "pat =", 'pat"', "pat'"),  # GH_PAT, not "path"
        _assignment,
        to_value=65,  # a quoted name of 63, then ":="
    ),
    _s(
        "a password given on a command line",
        r"(?:(?<=\s)|^)(?:--(?:password|passwd|pass|pwd|passphrase|token|api-key|apikey|secret|"
        r"client-secret|auth-token|access-token|http-password|ftp-password|proxy-password|"
        r"db-password|admin-password|root-password)|-passin\s+pass:|-passout\s+pass:|-pass\s+pass:)"
        r"(?:=|[ \t]+|(?<=:))[\"']?(?P<value>[^\s'\"]+)",
        tuple("--pass --pwd --token --api --apikey --secret --client --auth --access".split())
        + ("-password", "pass:"),
        _flag_value,
    ),
    _s(
        "a password given on a command line",
        # Tools that take the password glued to -p (mysql -pS3cret, 7z -pS3cret) or after a
        # flag of their own (sshpass -p, redis-cli -a, curl -u user:pass, smbclient -U user%pass).
        r"\b(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump|7z|7za|7zr)\b[^\n|;&]*?\s-p"
        r"|sshpass\b(?:\s+-[a-oq-z]\s*\S+)*\s+-p\s*"
        r"|redis-cli\b[^\n|;&]*?\s-a\s+"
        r"|(?:un)?zip\b[^\n|;&]*?\s-P\s+"
        r"|ldap\w+\b[^\n|;&]*?\s-w\s+"
        r"|(?:docker|podman|helm|nerdctl)\s+(?:\w+\s+)?login\b[^\n|;&]*?\s-p\s+"
        r"|curl\b[^\n|;&]*?\s(?:-u|--user|--proxy-user)\s*[\"']?[^\s:\"']*:"
        r"|smbclient\b[^\n|;&]*?\s-U\s*[\"']?[^\s%\"']+%)"
        r"[\"']?(?P<value>[^\s'\"]+)",
        tuple("mysql mariadb 7z sshpass redis-cli zip ldap login curl smbclient".split()),
        _flag_value,
    ),
)

# Shapes tried only around a run of digits (``NUMBER_RUN``): they have no letters to look for.
# Each is searched within ``back`` characters either side of the run.
NUMBER_SHAPES: tuple[Shape, ...] = (
    _s(
        "a card number",
        r"(?<![\d.,/-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\d-]|[.,]\d)",
        (),
        _card,
        back=3,
    ),
    # An IBAN's digits start at most 4 characters in and it has at most 34: around a run of
    # digits, ``back`` characters each side.
    Shape(
        "a bank account number (IBAN)",
        # No leading \b: a pattern that starts with a class is searched fast (_iban checks it).
        re.compile(r"[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b"),
        (),
        _iban,
        back=36,
    ),
    _s("a US social security number", r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])", (), _ssn, back=3),
    _s(
        "a Chinese resident id number",
        r"(?<![\dA-Za-z])[1-9]\d{16}[\dXx](?![\dA-Za-z])",
        (),
        _cn_id,
        back=3,
    ),
    _s(
        "a Korean resident registration number",
        r"(?<![\d-])\d{6}-[1-4]\d{6}(?![\d-])",
        (),
        _kr_rrn,
        back=3,
    ),
    _s("a BitLocker recovery key", r"\b\d{6}(?:-\d{6}){7}\b", (), back=3),
)
# Six digits or more, maybe grouped by spaces or dashes: cheap to find (the pattern starts with
# a digit class), and every number shape holds one.
NUMBER_RUN = re.compile(r"\d(?:[ -]?\d){5,}")

# Shapes with no needle, searched over the whole text: each pattern starts with a literal or a
# small class that the regular-expression engine skips to, so a search costs about what one
# needle does.
SCANNED: tuple[Shape, ...] = (
    Shape(
        "a Twilio API key",
        re.compile(r"SK[0-9a-f]{32}(?![A-Za-z0-9])"),
        check=_starts_a_word,
        hint=("SK", r"[0-9a-f]{32}"),
    ),
    Shape(
        "a .pgpass line",
        # hostname:port:database:username:password, a line of its own.
        re.compile(
            r"(?m)^[ \t]*[A-Za-z0-9_.*-]+:(?:\d{1,5}|\*):[A-Za-z0-9_.*-]+:[A-Za-z0-9_.*@-]+:"
            r"(?P<value>\S+)[ \t]*$"
        ),
        check=_pgpass,
        hint=("\n", r"[ \t]*[A-Za-z0-9_.*-]+:(?:\d{1,5}|\*):"),
    ),
)

# A Discord bot token: the bot's user id (a snowflake, 17 to 20 digits) in base64, a dot, six or
# seven characters, a dot, 27 to 40 more. Searched from its first dot (a pattern that starts
# with a literal is searched fast; one that starts with [MNO] tried every capital M, N and O,
# eight times as long), then its head is read back from there.
_DISCORD_TAIL = re.compile(r"\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])")
_DISCORD_HEAD = re.compile(r"[MNO][A-Za-z0-9_-]{22,26}")
DISCORD_HINT = (".", r"[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27}")


def discord_tokens(text: str) -> list[tuple[int, int]]:
    """The spans of Discord bot tokens in ``text``."""
    out: list[tuple[int, int]] = []
    if len(text) < 59:
        return out
    for m in _DISCORD_TAIL.finditer(text):
        start = m.start()
        while (
            start > 0
            and start > m.start() - 27
            and (text[start - 1].isalnum() or text[start - 1] in "_-")
        ):
            start -= 1
        if (start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_-")) and (
            _DISCORD_HEAD.fullmatch(text, start, m.start()) and _snowflake(text[start : m.start()])
        ):
            out.append((start, m.end()))
    return out


def _snowflake(head: str) -> bool:
    import base64  # here: only a token-shaped run pays for it

    try:
        uid = base64.b64decode(head + "=" * (-len(head) % 4), validate=False).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return False
    return uid.isdigit() and 17 <= len(uid) <= 20
