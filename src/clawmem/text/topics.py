"""The words a statement is *about*, and how much two statements share them.

Supersession (recall), opinions, episodes and summaries compare statements this way. It lives apart
from ``factlog`` (which reads every fact of the Markdown) so that recall's supersession check does
not import the Retain grammar: a cold lexical `clawmem recall` must start fast (issue 16).
"""

from __future__ import annotations

from functools import lru_cache

from clawmem.text.textnorm import STOPWORDS, tokens

# Words that say *that* someone holds a view rather than *what* the view is about. Two opinions
# sharing only these ("Peter prefers …", "Peter prefers …") are not about the same thing.
OPINION_WORDS = frozenset(
    """think thinks thought believe believes feel feels want wants prefer prefers preferred like
    likes love loves hate hates convinced sure now more less much still after only very really
    also just even seems says said go goes get gets""".split()
)


def _stem(word: str) -> str:
    # Plural and third-person "s" only: enough for "line"/"lines", "reply"/"replies".
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _is_cjk_bigram(word: str) -> bool:
    return ord(word[0]) >= 0x2E80


@lru_cache(maxsize=1 << 16)
def _about(word: str) -> str:
    """What one folded word adds to ``topic_words``: itself (CJK), its stem, or "" (nothing).
    Cached: an episode page weighs every sentence of a conversation (2,000 messages: ~10,000
    sentences), and the same few thousand words recur in them."""
    if _is_cjk_bigram(word):
        return word
    if len(word) < 3 or word in STOPWORDS or word in OPINION_WORDS:
        return ""
    return _stem(word)


def topic_words(text: str, entities: tuple[str, ...] | frozenset[str] = ()) -> frozenset[str]:
    """The words a statement is *about*: folded (any script, CJK as bigrams), without stopwords,
    opinion verbs, the entities' own names and words shorter than three letters."""
    words = tokens(text)
    if entities:
        skip: set[str] = set()
        for name in entities:
            skip.update(tokens(name))
        words = [w for w in words if w not in skip or _is_cjk_bigram(w)]
    out = {_about(w) for w in words}
    out.discard("")
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0
