"""Secrets in a table: a header that names a secret column (a CSV export's "Secret access key",
a Markdown table's "Password", "Mật khẩu") and the rows below it, whose cells in that column are
the secrets; and a Markdown row that names a secret in one cell and gives it in the next
(``| password | hunter2 |``). The name and the value are on different lines or in different
cells, so neither ``secret_shapes`` nor ``secret_words`` sees them together.

A table is read only from a line that holds one of ``NEEDLES`` and a separator (``|``, ``,``,
``;`` or a tab): ``redact`` finds the needles in its one pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clawmem.text.secret_shapes import names_a_secret
from clawmem.text.secret_words import CUE, is_prose, plausible_value

NEEDLES: tuple[str, ...] = tuple(
    (
        "pass|pwd|secret|token|key|credential|pin|cvv|cvc|mật khẩu|mat khau|hasło|haslo|"
        "passwort|kennwort|contraseña|contrasena|clave|mot de passe|senha|パスワード|密码|密碼|"
        "비밀번호|пароль|รหัสผ่าน|पासवर्ड"
    ).split("|")
)
_SEPARATORS = "|,;\t"
_RULE_ROW = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
_MAX_ROWS = 500


@dataclass(frozen=True)
class Cell:
    start: int
    end: int
    kind: str


@lru_cache(maxsize=4096)  # a table's header is read once per needle in it
def _secret_named(cell: str) -> str | None:
    """What a header or a row's name cell names: "password" (``Password``, ``Mật khẩu``,
    ``wifi pass``), "pin" (``PIN``, ``CVV``), "key" (``Secret access key``, ``Token``), or None
    (``Access key ID``, ``Password policy``)."""
    cell = cell.strip().strip("*_`").strip()
    if not cell or len(cell) > 40:
        return None
    m = CUE.fullmatch(cell)
    rule = (m.lastgroup or "").split("__")[0] if m else ""
    if rule in ("pin", "cvv"):
        return "pin"
    if rule == "password" or (names_a_secret(cell) and re.search(r"(?i)pass|pw", cell)):
        return "password"
    return "key" if rule == "strict" or names_a_secret(cell) else None


def _cells(text: str, start: int, end: int, sep: str) -> list[tuple[int, int]]:
    """The cells of the line ``text[start:end]``, as spans with their spaces trimmed."""
    spans = []
    pos = start
    if sep == "|":
        stripped = text[start:end].strip()
        if not stripped.startswith("|"):
            return []
        pos = text.index("|", start) + 1
        end = text.rindex("|", start, end) if stripped.endswith("|") else end
    while pos <= end:
        nxt = text.find(sep, pos, end)
        nxt = end if nxt < 0 else nxt
        a, b = pos, nxt
        while a < b and text[a] in " \t":
            a += 1
        while b > a and text[b - 1] in " \t\r":
            b -= 1
        spans.append((a, b))
        pos = nxt + 1
    return spans


def _separator(line: str) -> str | None:
    if line.lstrip().startswith("|"):
        return "|"
    counts = {s: line.count(s) for s in ",;\t"}
    best = max(counts, key=lambda s: counts[s])
    return best if counts[best] else None


def _line_at(text: str, i: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, i) + 1
    end = text.find("\n", i)
    return start, len(text) if end < 0 else end


_AMOUNT = re.compile(r"[\d,. ]+[kKmM]?")


def _is_value(cell: str, named: str) -> bool:
    """A cell under (or beside) a name is its secret: a password anything but words of talk
    ("see vault", "ask Peter"), a PIN three digits or more, a key or token eight characters or
    more with a digit or a symbol (a "Tokens" column of counts is not one)."""
    cell = cell.strip("\"'`")
    words = cell.split()
    if not words or not plausible_value(cell) or is_prose(words[0]):
        return False
    if named == "pin":
        return sum(c.isdigit() for c in cell) >= 3
    if named == "key":
        return (
            len(cell) >= 8
            and not _AMOUNT.fullmatch(cell)
            and any(not c.isalpha() for c in cell)
            and len(words) == 1
        )
    return True


def find_in_tables(text: str, needles_at: list[int]) -> list[Cell]:
    """Every secret cell of a table whose header, or a row, names a secret."""
    found: list[Cell] = []
    seen: set[int] = set()
    for i in needles_at:
        start, end = _line_at(text, i)
        if start in seen:
            continue
        seen.add(start)
        line = text[start:end]
        sep = _separator(line)
        if sep is None:
            continue
        cells = _cells(text, start, end, sep)
        names = [_secret_named(text[a:b]) for a, b in cells]
        if not any(names):
            continue
        if sep == "|":
            found += _row_pairs(text, cells, names)
        found += _columns(text, end, sep, names)
    return found


def _row_pairs(text: str, cells: list[tuple[int, int]], names: list[str | None]) -> list[Cell]:
    """``| password | hunter2 |``: a cell that names a secret and the value in the next."""
    out = []
    for k, named in enumerate(names[:-1]):
        a, b = cells[k + 1]
        if named and not names[k + 1] and _is_value(text[a:b], named):
            out.append(Cell(a, b, "a secret in a table row"))
    return out


def _columns(text: str, header_end: int, sep: str, names: list[str | None]) -> list[Cell]:
    """The cells of the named columns in the rows below a header (a Markdown rule row is
    skipped); the table ends at a line with another number of cells."""
    out = []
    width = len(names)
    pos = header_end + 1
    for _ in range(_MAX_ROWS):
        if pos > len(text):
            break
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if sep == "|" and _RULE_ROW.match(text, pos, end):
            pos = end + 1
            continue
        cells = _cells(text, pos, end, sep)
        if len(cells) != width:
            break
        for k, named in enumerate(names):
            a, b = cells[k]
            if named and b > a and _is_value(text[a:b], named):
                out.append(Cell(a, b, "a secret in a table column"))
        pos = end + 1
    return out
