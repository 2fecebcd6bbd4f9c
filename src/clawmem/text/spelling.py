"""A name written another way: "Muhammad" for the "Mohammed" the notes write, "Jakob" for "Jacob".

People spell names as they hear them, and transliterated names have many spellings. A question
about "Jakob" over notes that write "Jacob" is about someone the memory knows: recall must
neither refuse it as a question about a stranger (relevance's unknown names) nor miss the person's
own lines (the ranking's person boost).

Two well-known rules decide, with no number fitted to any data: the names sound alike (their
Metaphone keys, Lawrence Philips' phonetic code for English names, are the same: Muhammad,
Mohammed and Mohamad are all MHMT, Steven and Stephen STFN), or they differ by one typing slip
(one letter inserted, dropped, replaced, or two swapped: Damerau-Levenshtein distance 1, "Petr"
for "Peter", "Sara" for "Sarah"). Both need the same first letter and four letters at least, and a
sound key of three sounds at least: "Moon" and "Money" are both MN, "Paula" and "Pool" both PL.
Only names the notes use are compared (a chat line's speaker, an @mention, a capitalised word
inside a sentence), never every word of the index, where "Chase" would be one slip from "case".
Soundex was tried first and matched too much: it keeps four characters, so "Galveston" sounded
like "Globes" and "Mohammed" like "Monday".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from clawmem.text.textnorm import fold

MIN_LETTERS = 4
MIN_SOUNDS = 3

# An @mention, and a capitalised word that does not start its sentence or line.
_MENTION = re.compile(r"@([^\W\d_]+)")
_INNER_WORD = re.compile(r"(?<=[^\s.!?:\n*-]\s)([^\W\d_]+)\b")


def names_in(text: str) -> set[str]:
    """The folded names ``text`` writes as @mentions or capitalised words inside a sentence (who
    said a chat line is ``recall.aggregate.speaker``'s to tell)."""
    inner = [w for w in _INNER_WORD.findall(text) if w[0].isupper() and not w.isupper()]
    found = _MENTION.findall(text) + inner
    return {fold(n) for n in found if len(n) >= MIN_LETTERS}


def same_name(asked: str, written: str) -> bool:
    """Whether the folded word ``asked`` may be another spelling of the folded name ``written``."""
    if asked == written:
        return True
    if len(asked) < MIN_LETTERS or len(written) < MIN_LETTERS or asked[0] != written[0]:
        return False
    if not (asked.isalpha() and written.isalpha()):
        return False
    import jellyfish  # only when a name is unknown: not on a cold recall's usual path

    if jellyfish.damerau_levenshtein_distance(asked, written) <= 1:
        return True
    key = jellyfish.metaphone(asked)
    return len(key) >= MIN_SOUNDS and key == jellyfish.metaphone(written)


def spelled_as(asked: str, written: Iterable[str]) -> str | None:
    """The name among ``written`` that ``asked`` may be another spelling of, the closest first
    (fewest edits, then alphabetical, so the answer does not depend on the order given)."""
    matches = [w for w in set(written) if same_name(asked, w)]
    if not matches:
        return None
    import jellyfish

    return min(matches, key=lambda w: (jellyfish.damerau_levenshtein_distance(asked, w), w))
