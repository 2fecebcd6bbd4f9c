"""Credentials in text: recognising them (retain refuses them) and redacting them (everything
clawmem indexes, caches or prints from a transcript or a note passes through ``redact`` first).

One list of shapes, one owner. A shape either covers the whole match (a token that is a secret
by its form, ``ghp_…``) or only its ``value`` group (``password = hunter2…``: the word
"password" stays, so a reader still sees what was there). Redaction keeps every newline, so line
numbers and citations of the text around a secret do not move. See docs/redaction.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REDACTED = "[redacted]"


@dataclass(frozen=True)
class Shape:
    kind: str  # what it is, in words: "a GitHub token"
    pattern: re.Pattern[str]  # a ``value`` group, if present, is the part that is secret
    # Lower-case strings at least one of which every match contains: a text holding none of them
    # is not searched (a substring test costs far less than a pattern that tries every word
    # boundary; most text is ordinary talk, and transcripts run to megabytes).
    needles: tuple[str, ...] = ()


def _shape(kind: str, regex: str) -> Shape:
    return Shape(kind, re.compile(regex), NEEDLES[kind])


NEEDLES: dict[str, tuple[str, ...]] = {
    "a private key": ("private key",),
    "an AWS access key": ("akia", "asia", "agpa", "aida", "aroa"),
    "an AWS secret key": ("aws",),
    "a GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "a GitHub fine-grained token": ("github_pat_",),
    "a GitLab token": ("glpat-",),
    "an Anthropic API key": ("sk-ant-",),
    "an OpenAI-style API key": ("sk-",),
    "a Slack token": ("xox",),
    "a Slack webhook": ("hooks.slack.com",),
    "a Google API key": ("aiza",),
    "a Stripe key": ("_live_", "_test_"),
    "a Hugging Face token": ("hf_",),
    "an npm token": ("npm_",),
    "a PyPI token": ("pypi-age",),
    "a SendGrid key": ("sg.",),
    "a Telegram bot token": (":aa",),
    "a DigitalOcean token": ("_v1_",),
    "a JSON web token": ("eyj",),
    "a connection string with a password": ("://",),
    "an account key in a connection string": (
        "accountkey=",
        "sharedaccesskey=",
        "password=",
        "pwd=",
    ),
    "a bearer token": ("bearer",),
    "a password or token assignment": ("pass", "pwd", "secret", "key", "token"),
    "a password given on a command line": ("--pass", "--token", "--api-key"),
}


# Order matters only where shapes overlap: the more specific comes first.
SHAPES: tuple[Shape, ...] = (
    _shape(
        "a private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)",
    ),
    _shape("an AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    _shape(
        "an AWS secret key",
        r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{30,})",
    ),
    _shape("a GitHub token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b"),
    _shape("a GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"),
    _shape("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
    _shape("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _shape("an OpenAI-style API key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}"),
    _shape("a Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    _shape("a Slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}"),
    _shape("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    _shape("a Stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    _shape("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    _shape("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _shape("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    _shape("a SendGrid key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    _shape("a Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
    _shape("a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    _shape(
        "a JSON web token",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    ),
    _shape(
        "a connection string with a password",
        # scheme://user:PASSWORD@host — databases, brokers, any URL with credentials in it.
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/@\"'<>]+:(?P<value>[^\s@/\"'<>]{3,})@[^\s\"'<>]",
    ),
    _shape(
        "an account key in a connection string",
        r"(?i)\b(?:AccountKey|SharedAccessKey|Password|Pwd)=(?P<value>[^;\s\"']{6,})",
    ),
    _shape("a bearer token", r"(?i)\bBearer\s+(?P<value>[A-Za-z0-9._~+/=-]{16,})"),
    _shape(
        "a password or token assignment",
        r"(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|secret|api[_-]?key|apikey|"
        r"access[_-]?token|auth[_-]?token|token|client[_-]?secret|private[_-]?key)\b[\"']?"
        r"\s*[:=]\s*[\"']?(?P<value>[^\s'\",;]{8,})",
    ),
    _shape(
        "a password given on a command line",
        r"(?:\s|^)(?:--password|--passwd|--token|--api-key)[= ](?P<value>[^\s'\"]{6,})",
    ),
)


_ALL_NEEDLES = tuple(sorted({n for needles in NEEDLES.values() for n in needles}))


def _candidates(text: str) -> list[Shape]:
    """The shapes whose needles ``text`` holds (each needle looked for once)."""
    low = text.lower()
    present = {n for n in _ALL_NEEDLES if n in low}
    if not present:
        return []
    return [s for s in SHAPES if not present.isdisjoint(s.needles)]


def find_secret(text: str) -> str | None:
    """What kind of credential ``text`` seems to contain, or None."""
    for shape in _candidates(text):
        if shape.pattern.search(text):
            return shape.kind
    return None


def _blank(secret: str) -> str:
    # Keep the newlines a secret spanned (a PEM block): the lines after it keep their numbers.
    return REDACTED + "\n" * secret.count("\n")


def redact(text: str) -> str:
    """``text`` with every credential replaced by ``[redacted]`` (newlines kept)."""
    if not text:
        return text
    for shape in _candidates(text):
        if not shape.pattern.search(text):
            continue

        def sub(m: re.Match[str]) -> str:
            if "value" in m.re.groupindex and m.group("value") is not None:
                s, e = m.span("value")
                whole = m.group(0)
                off = m.start()
                return whole[: s - off] + _blank(m.group("value")) + whole[e - off :]
            return _blank(m.group(0))

        text = shape.pattern.sub(sub, text)
    return text
