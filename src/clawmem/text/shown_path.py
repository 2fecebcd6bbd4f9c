"""A workspace path as clawmem shows it: redacted like any other text it prints. A file may be
named with a credential (``memory/ghp_….md``, an export named after its token), and its name
reaches ``recall``, ``get``, ``context``, ``status`` and the MCP tools in every citation. This
module is the one place a path is made fit to show; the path itself stays what it is on disk
(the index keys rows by it, and ``get`` reads it).

Most paths are plain (``memory/2025-11-27.md``, ``bank/entities/Peter.md``): those are shown as
they are without importing the redaction rules, which a cold ``recall`` never needs.
"""

from __future__ import annotations

import re

# A part of a path or a citation (between "/", ".", "_", "-", ":", "#" or a space) that no rule
# can read as a secret on its own: a word of letters, a number of eight digits or fewer (a date,
# a counter), a citation's line (L12), a group of at most 12 lower-case hex digits (a session's
# UUID in an episode page's name: 7f3c2a10-5b4e-…; no key shape is that short).
_PLAIN_PART = re.compile(r"[A-Za-z]{1,24}|\d{1,8}|L\d{1,8}|[0-9a-f]{1,12}|")
_PARTS = re.compile(r"[/._:# -]")
# Lower-case starts of the words the rules read as a cue ("password", "token", "mk", "pin", …):
# a path of plain parts none of which starts with one cannot hold a secret said in words either
# (a cue starts a word: "opinions" holds no PIN).
# tests/test_redaction.py keeps this in step with secret_words.NEEDLES.
CUE_PIECES: tuple[str, ...] = tuple(
    """pass pw pin puk key token secret login logon sign cred phrase mnemonic otp code cvv cvc
    csc mk ssn auth cookie sig wort clave senha has parol combination security national
    passport licen nino bsn pesel dni nie nif cpf inn snils fiscale aadhaar cccd cmnd id tax
    identity ausweis steuer card contrase geheimzahl kata mat mot sifre wachtwoord zugangsdaten
    account acct user mail""".split()
)


def is_plain(path: str) -> bool:
    """Whether ``path`` cannot hold a credential, decided without the rules."""
    if not path.isascii():
        return False
    parts = _PARTS.split(path)
    if sum(p.isalpha() for p in parts) >= 12:  # room for seed words (words, not numbers)
        return False
    if not all(_PLAIN_PART.fullmatch(p) for p in parts):
        return False
    return not any(p.lower().startswith(CUE_PIECES) for p in parts)


def shown_path(path: str) -> str:
    """``path`` with any credential in it replaced by ``[redacted]``."""
    if is_plain(path):
        return path
    from clawmem.text.redact import redact  # here: only a path that may hold one needs it

    # Each folder and file name is read as a line of its own ("memory/password is x.md": the
    # cue starts its name), and the path is put back together.
    return "/".join(redact(path.replace("/", "\n")).split("\n"))
