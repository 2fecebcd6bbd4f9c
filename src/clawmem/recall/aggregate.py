"""Questions that ask for all of something, and who said a chat line.

"What authors has Tim read?", "Which beauty treatments has Emi done?", "What are Kate's hobbies?",
"How many times did Nicolas call?", "Tell me about Peter": the answer is a list whose items were
said on many days, each in a line or two. Ranking such a question like any other spends the
reader's budget on one session's long context; ``fusion.Ranking``'s ``aggregate_*`` numbers make
it instead spread the hits over sessions and keep each short. Such a question is told apart by its
form alone, when it is parsed (``text.query.asks_for_all``, read as ``Query.asks_for_all``).
"""

from __future__ import annotations

import re

_SPEAKER = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?([^\W\d_][\w .'-]{0,40}?)(?:\*\*)?:\s")


def speaker(text: str) -> str | None:
    """Who said a chat line written "- Name: text" (a daily log's message), folded; else None."""
    from clawmem.text.textnorm import fold

    m = _SPEAKER.match(text)
    return fold(m.group(1)).strip() if m else None
