"""Unicode-correct text for the lexical index, and safe FTS5 queries built from user text.

SQLite's tokenizers are not enough on their own: ``unicode61`` keeps a whole CJK run as one token
and cannot fold Vietnamese ``đ``. So clawmem normalises text itself, identically for documents and
queries, and FTS5 only ever sees the normalised form:

* NFKC, case folding, and removal of combining marks (``Hà Nội`` → ``ha noi``, ``đ`` → ``d``);
* every run of CJK characters becomes overlapping bigrams (``東京駅`` → ``東京 京駅``), the usual
  n-gram answer for scripts written without spaces.

User text never reaches ``MATCH`` raw: each query term is reduced to tokens and emitted as a quoted
phrase, so quotes, parentheses, ``AND``, ``NOT``, ``*``, ``-`` and ``:`` are inert.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from clawmem.errors import BadArgument

# Bump when the output of `search_text` changes: the index must then be rebuilt.
NORMALIZER_VERSION = 1

# Folding the combining marks away does not cover letters that are distinct code points.
_EXTRA_FOLD = str.maketrans(
    {"đ": "d", "ł": "l", "ø": "o", "ħ": "h", "ı": "i", "æ": "ae", "œ": "oe"}
)

_CJK = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # Compatibility Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\u31f0-\u31ff\uff66-\uff9f"  # Katakana extensions, half-width Katakana
)


@cache
def _cjk_run() -> re.Pattern[str]:
    # Compiled on first use: its ranges take ~3 ms to compile, and ASCII text (most queries, so
    # a cold `clawmem recall`: issue 16) never needs it.
    return re.compile(f"[{_CJK}]+")


def is_cjk(token: str) -> bool:
    """Whether ``token`` is all CJK (a bigram of ``search_text``, or one character)."""
    return not token.isascii() and _cjk_run().fullmatch(token) is not None


# What FTS5's unicode61 tokenizer treats as token characters: letters and digits. `_` splits.
_TOKEN = re.compile(r"[^\W_]+")

# Function words and the words questions are made of. They are left out of lexical queries (a
# question's "when did … do" says nothing about which note answers it) unless a query has nothing
# else; BM25's IDF would weigh them low anyway, but each one drags thousands of rows into ranking.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing done for from had has
    have having how i if in into is it its itself me my myself of on or our ours so than that the
    their theirs them themselves then there these they this those to too was we were what when
    where which while who whom whose why will with would you your yours yourself about tell show
    find give any all some please also just very much many more most other such own same should
    shall may might must ever each both few further here once only again against between during
    before after above below up down out off over under until he him his she her hers herself
    himself let lets get got us ok okay kind sort""".split()
)


def fold(text: str) -> str:
    """Case- and accent-insensitive form of ``text`` (same length semantics are not kept)."""
    if text.isascii():
        # The same result as below (NFKC/NFD/NFC leave ASCII alone, it has no accents and
        # casefold() is lower() there), without a Python step per character: most text indexed
        # (notes in English, transcripts) is ASCII, and folding dominated indexing time.
        return text.lower()
    return _fold_unicode(text)


def _fold_unicode(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    decomposed = unicodedata.normalize("NFD", text)
    # Kana voicing marks (U+3099/U+309A) are part of the letter, not an accent: keep them.
    stripped = "".join(
        ch for ch in decomposed if not unicodedata.combining(ch) or ch in "\u3099\u309a"
    )
    return unicodedata.normalize("NFC", stripped).translate(_EXTRA_FOLD)


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def search_text(text: str) -> str:
    """The form of ``text`` that is stored in (and queried against) the FTS5 table."""
    folded = fold(text)
    if folded.isascii():
        return folded  # no CJK run to split
    return _cjk_run().sub(lambda m: f" {_bigrams(m.group())} ", folded)


def tokens(text: str) -> list[str]:
    """``text``'s tokens as the lexical index holds them: folded, split at every character that
    is not a letter or a digit (``_`` and ``-`` too), a CJK run as its bigrams."""
    return _TOKEN.findall(search_text(text))


# A word of ``word_tokens``: letters and digits, joined by ``-`` or ``_`` into one.
_JOINED_WORD = re.compile(r"[^\W_]+(?:[-_][^\W_]+)*")


def word_tokens(text: str) -> list[str]:
    """``text``'s folded words with identifiers kept whole (``dec-0054``, ``payment_processor``,
    ``payments-service``), each CJK run in a word as its bigrams (one character as itself), then
    the word's other parts. The words a line and a message are compared by (recall/context.py's
    lexical score), where ``tokens`` would split an identifier into parts that match anywhere."""
    out: list[str] = []
    for w in _JOINED_WORD.findall(fold(text)):
        runs = [] if w.isascii() else _cjk_run().findall(w)
        if not runs:
            out.append(w)
            continue
        for run in runs:
            out.extend([run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)])
        out.extend(_cjk_run().sub(" ", w).split())
    return out


@dataclass(frozen=True)
class LexQuery:
    """FTS5 MATCH expressions derived from a user's query."""

    terms: tuple[str, ...]  # one quoted FTS5 phrase per meaningful user term
    all_terms: str | None  # every term must match (only to tell whether any unit has them all)
    any_terms: str | None  # what recall ranks: any term may match, BM25 weighs them
    strong: str | None  # identifiers and quoted phrases, all required: such hits come first
    dropped: tuple[str, ...]  # stopwords left out


def _phrase(toks: list[str]) -> str:
    # Tokens contain only letters and digits, so wrapping in quotes is always safe.
    return '"' + " ".join(toks) + '"'


_QUOTED = re.compile(r'"([^"]+)"')
# An English possessive or contraction at the end of a typed word ("Peter's", "Kate’s", "she's",
# "we'll"): the apostrophe splits it into two tokens, and the phrase "peter s" matches only text
# that says "Peter's" too, never the lines Peter wrote ("Peter: …") or those that name her. The
# word is what was asked about. ("don't" keeps its "t": "don" alone is not the word.) People type
# the apostrophe as whatever key is nearest: the straight ' and the typographic ’ and ʼ, but also
# ‘, the acute accent ´ (German keyboards) and the backtick ` ("Kate`s travel list", as a
# question of a chat was typed).
_APOSTROPHES = "'’ʼ‘´`"
_CLITIC = re.compile(f"[{_APOSTROPHES}](?:s|d|ll|re|ve|m)(?=[^\\w{_APOSTROPHES}]*$)", re.IGNORECASE)
# A term typed as an identifier: words joined by _ . / : (payment_processor, v2.3.1,
# src/memory/hybrid.ts), words joined by - with a digit among them (DEC-0054, IL-6, COVID-19), or
# letters mixed with digits (v2, p53, 88213a). Plain numbers and words are not, and neither is a
# hyphenated compound of letters alone ("long-term", "self-renewal", "sci-fi"): that is a word of
# the language, and forcing every unit that holds it above the rest cost SciFact's training claims
# 0.013 nDCG@10 (0.707 -> 0.720): 211 of its 809 claims had such a compound. Such a compound
# still matches as a phrase of adjacent tokens; quote it ("payments-service") to require it first.
IDENTIFIER = re.compile(r"\w+(?:[_./:]\w+)+|(?=[\w-]*\d)\w+(?:-\w+)+|(?=\w*\d)(?=\w*[^\W\d])\w+")


def quoted_parts(query: str) -> list[str]:
    """The parts of ``query`` written in double quotes, as written."""
    return [m.group(1) for m in _QUOTED.finditer(query)]


# "How long did the rehearsal take?", "how long does the backup last": the closing verb is the
# question's form, as "how long" is (the answer says "ran for forty minutes", "took an hour"), so it
# is left out like a stopword; searched, it ranked an unrelated line that says "take" ("I can take
# the template") first among the lines of the rehearsal's section, which all match its heading
# (rrf-v18).
_FORM_VERB = re.compile(
    r"^\s*how\s+long\b.*\b(take|takes|took|taken|last|lasts|lasted)[\s?.!]*$", re.IGNORECASE
)


# A question's light verb in a phrasal verb ("why did the API go down?", "what went wrong?",
# "when did the idea come up?", "who took over the team?"): the pair means what neither word
# says (fail, arise, lead), the
# particle is a stopword or no topic, and the verb alone is no topic either; a note that says
# "go" means something else by it ("Stack: Go, Postgres"; "make" the build tool). Searched,
# "go" ranked a project page's lead first on its heading and the language's name, above the
# paragraph that says why the API fell over (rrf-v20). So such a verb is left out like a
# stopword when typed in lower case (a capital is a name: "what do we use Go for?") in a
# question, said once ("where did the go bag go?" keeps "go"), right before one of
# ``_PARTICLES``. A light verb in its own sense stays: "when did Sam go to Porto?", "where
# did they go skiing?" are answered by lines that say "go" and "going" (porter's stem), and
# leaving every "go" and "went" out of questions lost first hits on notes kept from chats
# (benchmarks/analysis.md). "do", "get", "give", "have" and "let" are stopwords already.
_LIGHT_VERBS = frozenset(
    """go goes going went gone make makes making made come comes coming came put puts putting
    take takes taking took taken""".split()
)
_PARTICLES = frozenset("down up out off over back away through around wrong ahead".split())
_QUESTION_LEAD = re.compile(
    r"^\s*(?:(?:in|on|at|from|to|for|with|by|since|until|and|so|but)\s+)?(?:who|whom|whose|what|"
    r"when|where|which|why|how|did|does|do|is|are|was|were|can|could|will|would|should|has|have|"
    r"had)\b",
    re.IGNORECASE,
)


def is_question(query: str) -> bool:
    """Whether ``query`` is typed as a question: it ends with "?" or opens with a question word
    or an auxiliary ("why did …", "did Ana …", "in which city …")."""
    return query.rstrip().endswith("?") or _QUESTION_LEAD.match(query) is not None


def light_verbs(query: str) -> set[str]:
    """The light verbs ``build_query`` leaves out of ``query`` (``_LIGHT_VERBS``): in a question,
    typed in lower case, said once, right before a particle (``_PARTICLES``)."""
    if not is_question(query):
        return set()
    typed = [w.strip(".,;:!?()[]{}'\"") for w in query.split()]
    folded = tokens(query)
    return {
        w
        for w, nxt in zip(typed, typed[1:], strict=False)
        if w in _LIGHT_VERBS and w.islower() and nxt.lower() in _PARTICLES and folded.count(w) == 1
    }


def build_query(query: str) -> LexQuery:
    """The FTS5 expressions of ``query`` (a step of ``text.query.Query.parse``, which calls it
    once per recall)."""
    phrases: list[str] = []
    strong: list[str] = []
    loose: list[str] = []  # extra terms: the bigrams of long CJK runs, each on its own
    stop: list[str] = []
    seen: set[str] = set()
    quoted = quoted_parts(query)
    rest = _QUOTED.sub(" ", query)
    form = _FORM_VERB.match(rest)
    form_verb = form.group(1).lower() if form else None
    if form_verb is not None and tokens(rest).count(form_verb) > 1:
        form_verb = None  # also a word of the topic: "how long did her last visit last?"
    light = light_verbs(rest)  # rrf-v20
    raws = [(q, True) for q in quoted] + [(r, False) for r in rest.split()]
    for raw, is_quoted in raws:
        if not is_quoted:
            raw = _CLITIC.sub("", raw)
        toks = tokens(raw)
        if not toks:
            continue
        if len(toks) == 1 and len(toks[0]) == 1 and not is_cjk(toks[0]):
            # A single Latin letter matches everything: noise, not a term.
            continue
        if len(toks) == 1 and is_cjk(toks[0]) and len(toks[0]) == 1:
            phrase = _phrase(toks) + "*"  # one CJK character: match the bigrams it starts
        else:
            phrase = _phrase(toks)
        if phrase in seen:
            continue
        seen.add(phrase)
        if len(toks) > 2 and all(is_cjk(t) for t in toks):
            loose.extend(_phrase([t]) for t in toks)
        if (
            len(toks) == 1
            and not is_quoted
            and (toks[0] in STOPWORDS or toks[0] == form_verb or toks[0] in light)
        ):
            stop.append(phrase)
            continue
        phrases.append(phrase)
        if is_quoted or IDENTIFIER.fullmatch(raw.strip(".,;:!?()[]{}'\"")):
            strong.append(phrase)
    if not phrases:
        # A query made only of stopwords ("who are you") still deserves a lexical try.
        phrases, stop = stop, []
    if not phrases:
        return LexQuery((), None, None, None, ())
    alternatives = list(dict.fromkeys(phrases + loose))
    return LexQuery(
        terms=tuple(phrases),
        all_terms=" AND ".join(phrases),
        any_terms=" OR ".join(alternatives),
        strong=" AND ".join(strong) if strong else None,
        dropped=tuple(stop),
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def require_text(value: str | None, param: str) -> None:
    """Refuse a string with a lone surrogate (JSON's ``"\\ud800"``, as an agent's tool call may
    send): it is not Unicode text, and neither SQLite nor a UTF-8 Markdown file can hold it."""
    if value is None:
        return
    m = _SURROGATE.search(value)
    if m:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise BadArgument(
            param,
            ascii(shown),
            f"a lone surrogate (U+{ord(m.group()):04X}) at character {m.start() + 1} is not text",
            hint="send the text as valid UTF-8 (pair or drop the surrogate)",
        )
