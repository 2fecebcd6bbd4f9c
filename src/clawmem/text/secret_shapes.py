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

from clawmem.text.secret_words import is_prose, plausible_value


@dataclass(frozen=True)
class Shape:
    kind: str  # what it is, in words: "a GitHub token"
    pattern: re.Pattern[str]  # a ``value`` group, if present, is the part that is secret
    # Lower-case strings at least one of which every match contains: a text holding none of them
    # is not searched (a substring test costs far less than a pattern that tries every position;
    # most text is ordinary talk, and transcripts run to megabytes). Empty: ``gate`` decides.
    needles: tuple[str, ...] = ()
    check: Callable[[re.Match[str]], bool] | None = None


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


def _card(m: re.Match[str]) -> bool:
    raw = m.group(0)
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
_SECRET_EXACT = frozenset({"pass", "pw", "pword", "psw"})
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
) -> Shape:
    return Shape(kind, re.compile(regex), needles, check)


# A value, quoted (spaces and all) or bare: ``secret_span`` takes whichever matched.
_QUOTED_OR_BARE = r"""(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|(?P<value>[^\s'",;]+))"""
VALUE_GROUPS = ("value", "dq", "sq")


def secret_span(m: re.Match[str]) -> tuple[int, int]:
    """Where the secret part of a match is: its value group, or all of it."""
    for g in VALUE_GROUPS:
        if g in m.re.groupindex and m.group(g) is not None:
            return m.span(g)
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
    ),
    _s(
        "an AWS secret key",
        r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{30,})",
        ("aws",),
    ),
    _s(
        "a GitHub token",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _s("a GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{40,}\b", ("github_pat_",)),
    _s(
        "a GitLab token",
        r"\bgl(?:pat|dt|rt|ptt|cbt|imt|agent)-[A-Za-z0-9_-]{20,}",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "glagent-"),
    ),
    _s("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    _s(
        "an OpenAI-style API key",
        r"\bsk-(?:proj-|svcacct-|or-v1-|or-)?[A-Za-z0-9_-]{20,}",
        ("sk-",),
    ),
    _s("a Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", ("xox",)),
    _s("a Slack webhook", r"https://hooks\.slack\.com/services/[\w/-]{20,}", ("hooks.slack.com",)),
    _s(
        "a Discord webhook",
        r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
        ("/api/webhooks/",),
    ),
    _s("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}", ("aiza",)),
    _s(
        "a Google OAuth secret or token",
        r"\b(?:GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{20,}|1//0[A-Za-z0-9_-]{30,})",
        ("gocspx-", "ya29.", "1//0"),
    ),
    _s(
        "a Stripe key",
        r"\b(?:sk|rk|pk|whsec)_(?:live|test)?_?[0-9A-Za-z]{16,}",
        ("_live_", "_test_", "whsec_"),
    ),
    _s("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}", ("hf_",)),
    _s("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    _s("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", ("pypi-age",)),
    _s("a SendGrid key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", ("sg.",)),
    _s("a Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", (":aa",)),
    _s("a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", ("_v1_",)),
    _s("a HashiCorp Vault token", r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}", ("hvs.", "hvb.", "hvr.")),
    _s(
        "a Vault token",
        r"(?i)\bvault[_ -]?token\b[\"']?\s*[:=]?\s*[\"']?(?P<value>s\.[A-Za-z0-9]{20,})",
        ("vault",),
    ),
    _s("an age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}", ("age-secret-key-",)),
    _s(
        "a Shopify token",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    _s("a Tailscale key", r"\btskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]+", ("tskey-",)),
    _s("a Databricks token", r"\bdapi[0-9a-f]{32}(?:-\d)?\b", ("dapi",)),
    _s("a Postman key", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b", ("pmak-",)),
    _s(
        "a Grafana token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        ("glsa_", "glc_"),
    ),
    _s("a Linear key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", ("lin_api_", "lin_oauth_")),
    _s("a Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.",)),
    _s("a Mailgun key", r"\bkey-[0-9a-f]{32}\b", ("key-",)),
    _s("a Square token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", ("sq0",)),
    _s(
        "a Groq or Replicate key",
        r"\b(?:gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,})",
        ("gsk_", "r8_"),
    ),
    _s(
        "a JSON web token",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        ("eyj",),
    ),
    _s(
        "a connection string with a password",
        # scheme://[user]:PASSWORD@host: the password may hold '@' and ':' (the last '@' before
        # a host ends it); the user may be empty (redis://:pw@host).
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/@\"'<>]*:(?P<value>[^\s\"'<>]+)"
        r"@[A-Za-z0-9_.\[\]-]+(?=[:/?#\s\"'<>),;]|$)",
        ("://",),
    ),
    _s(
        "an account key in a connection string",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)=(?P<value>[^;\s\"']{3,})",
        ("accountkey=", "sharedaccess", "password=", "pwd="),
        _value_ok,
    ),
    _s(
        "an Authorization header",
        r"(?i)\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:(?:basic|digest|bearer|token|bot|apikey|negotiate|ntlm|hmac|aws4-hmac-sha256)\s+)?"
        r"(?P<value>[^\s\"']{6,}(?:[ ,]+[A-Za-z]+=[^\s\"']+)*)",
        ("authorization",),
        _value_ok,
    ),
    _s("a bearer token", r"(?i)\bBearer\s+(?P<value>[A-Za-z0-9._~+/=-]{8,})", ("bearer",)),
    _s(
        "a secret assignment",
        # NAME = value, NAME: value, "name": "value": the name must name a secret (names_a_secret).
        r"(?<![/\\])(?P<name>[\"']?\b[A-Za-z][A-Za-z0-9_.-]{0,60}[\"']?)[ \t]*(?::=|=|:)[ \t]*"
        + _QUOTED_OR_BARE,
        ("pass", "pwd", "psw", "pw", "secret", "token", "key", "credential"),
        _assignment,
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
NUMBER_SHAPES: tuple[Shape, ...] = (
    _s("a card number", r"(?<![\d.,/-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\d-]|[.,]\d)", (), _card),
    _s("a US social security number", r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])", (), _ssn),
    _s(
        "a Chinese resident id number",
        r"(?<![\dA-Za-z])[1-9]\d{16}[\dXx](?![\dA-Za-z])",
        (),
        _cn_id,
    ),
    _s(
        "a Korean resident registration number", r"(?<![\d-])\d{6}-[1-4]\d{6}(?![\d-])", (), _kr_rrn
    ),
    _s("a BitLocker recovery key", r"\b\d{6}(?:-\d{6}){7}\b", ()),
)
# Six digits or more, maybe grouped by spaces or dashes: cheap to find (the pattern starts with
# a digit class), and every number shape holds one.
NUMBER_RUN = re.compile(r"\d(?:[ -]?\d){5,}")
