"""Questions that ask for all of something, and who said a chat line.

"What authors has Tim read?", "Which beauty treatments has Emi done?", "What are Kate's hobbies?",
"How many times did Nicolas call?", "Tell me about Peter": the answer is a list whose items were
said on many days, each in a line or two. ``fusion.Ranking``'s ``aggregate_*`` numbers rank such
a question another way: when it names someone, the question without the names is embedded too
and ranked as a third leg (``without_names``; ranking.py's ``_content_leg``), so the items asked
for rank above the lines that merely greet or mention the person. Such a question is told apart
by its form alone, when it is parsed (``text.query.asks_for_all``, read as
``Query.asks_for_all``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawmem.text.query import Query

_SPEAKER = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?([^\W\d_][\w .'-]{0,40}?)(?:\*\*)?:\s")


def speaker(text: str) -> str | None:
    """Who said a chat line written "- Name: text" (a daily log's message), folded; else None."""
    from clawmem.text.textnorm import fold

    m = _SPEAKER.match(text)
    return fold(m.group(1)).strip() if m else None


# A chat line as a daily log writes it, a list item "- Name: text": a structured abstract's
# "Background: ..." or a note's "Objective: ..." is no one speaking.
_CHAT_LINE = re.compile(r"^\s*[-*+]\s+(?:\*\*)?[^\W\d_][\w .'-]{0,40}?(?:\*\*)?:\s")


def is_chat_line(text: str) -> bool:
    """Whether ``text`` is someone's message in a chat log ("- Name: text")."""
    return _CHAT_LINE.match(text) is not None


# A possessive ending, however the apostrophe was typed (as text/query.py reads names).
_POSSESSIVE = re.compile(r"[’'`´ʼ‘]s$", re.IGNORECASE)


def without_names(text: str, names: tuple[str, ...]) -> str:
    """``text`` with the words of its names (``Query.names``, FTS phrases such as '"kate"') and
    their possessive ending left out: "What are Kate's hobbies?" -> "What are hobbies?"."""
    from clawmem.text.textnorm import fold

    drop = {w for n in names for w in n.strip('"').split()}
    kept = []
    for word in text.split():
        core = _POSSESSIVE.sub("", word.strip('.,;:!?"()“”')).strip("’'`´ʼ‘")
        if fold(core).strip() not in drop:
            kept.append(word)
    return " ".join(kept)


def without_names_if_asked(query: Query) -> str | None:
    """The text ranking's third leg embeds (ranking.py's ``_content_leg``): ``query`` without its
    names, when it asks for all of something and names someone; None when it does not, or when
    nothing but the names was asked ("Tell me about Peter": the third leg would embed "Tell me
    about"). A question naming no one has none: it would only count the vector leg twice."""
    from clawmem.text.textnorm import STOPWORDS, tokens

    if not (query.asks_for_all and query.names):
        return None
    text = without_names(query.text, query.names)
    if text == query.text or not any(t not in STOPWORDS for t in tokens(text)):
        return None
    return text
