"""Questions that ask for all of something: told apart by their form alone.

"What authors has Tim read?", "Which beauty treatments has Emi done?", "What are Kate's hobbies?",
"How many times did Nicolas call?", "Tell me about Peter": the answer is a list whose items were
said on many days, each in a line or two. Ranking such a question like any other spends the
reader's budget on one session's long context; ``fusion.Ranking``'s ``aggregate_*`` numbers make
it instead spread the hits over sessions and keep each short.
"""

from __future__ import annotations

import re

# "what/which (kind|types|sorts) of ... " and "what/which <plural noun>": the thing asked for is
# plural. A plural here is a word of four or more letters ending in s (not -ss, -us, -is: "boss",
# "bus", "this") or an irregular plural people ask about.
_WH = r"(?:what|which|where|who)"
_PLURAL = r"(?:[a-z]{2,}[^su\W]s|[a-z]+ies|people|children|men|women|friends)"
_FORMS = (
    re.compile(rf"^\s*{_WH}\s+(?:kinds?|types?|sorts?)\s+of\b", re.IGNORECASE),
    re.compile(rf"^\s*{_WH}(?:\s+[a-z]+)?\s+{_PLURAL}\b", re.IGNORECASE),
    re.compile(r"^\s*how\s+many\b", re.IGNORECASE),
    re.compile(
        r"^\s*(?:tell\s+me|what\s+do\s+(?:you|we)\s+know)\s+(?:\w+\s+)?about\b", re.IGNORECASE
    ),
    re.compile(r"\b(?:all|every|everything|list)\b.*\b(?:about|of|that|which)\b", re.IGNORECASE),
    re.compile(r"\b(?:hobbies|interests|favou?rites?)\b", re.IGNORECASE),
)
# "What is ..." / "What does ..." with a plural later on ("What does Kate think of cats?") asks for
# one thing: only the words right after the question word count, which the patterns above anchor.
_SINGLE = re.compile(
    rf"^\s*{_WH}\s+(?:is|was|does|did|do)\b(?!.*\b(?:hobbies|interests)\b)", re.IGNORECASE
)


def asks_for_all(question: str) -> bool:
    """Whether ``question`` asks for every item of something (see the module's docstring)."""
    text = question.strip()
    if not text:
        return False
    if _SINGLE.match(text) and not re.search(r"\b(?:hobbies|interests|favou?rites?)\b", text, re.I):
        return False
    return any(p.search(text) for p in _FORMS)


_SPEAKER = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?([^\W\d_][\w .'-]{0,40}?)(?:\*\*)?:\s")


def speaker(text: str) -> str | None:
    """Who said a chat line written "- Name: text" (a daily log's message), folded; else None."""
    from clawmem.text.textnorm import fold

    m = _SPEAKER.match(text)
    return fold(m.group(1)).strip() if m else None
