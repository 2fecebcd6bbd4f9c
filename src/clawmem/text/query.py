"""The question, read once: everything recall needs to know from the text of a query.

A search engine parses its query once, at the entrance, and hands the parsed query down; so does
clawmem. ``Query.parse`` is the only place a recall reads its question's text: its steps are the
lexical query (``textnorm.build_query``: FTS5 terms and phrases), the quoted parts, the time it
names (``timeexpr.query_time_hint``), its names and identifiers (``names``), and whether it asks
for all of something (``asks_for_all``) and, then, the question without its names
(``without_names``), the words of it that can carry a topic and its @mentions (``topic_words``,
``mentions``: what ``context`` weighs a line by). The legs, the fusion, relevance, the entity page,
read scopes and ``context`` read the fields; none of them folds, splits or matches the question
again (tests/test_query.py counts the tokenisations of one request's text).

What needs the index (the known entities the question names) is resolved once by the recall
pipeline (``recall.entities.resolve``) into ``Query.entities``: this module does no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from clawmem.text.textnorm import (
    IDENTIFIER,
    STOPWORDS,
    LexQuery,
    build_query,
    fold,
    is_cjk,
    quoted_parts,
    require_text,
    tokens,
    word_tokens,
)
from clawmem.text.timeexpr import TimeRange, query_time_hint

# Words as entity names are matched: runs of letters and digits of the folded text.
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Query:
    """One recall's question, parsed. Build it with ``Query.parse``."""

    text: str  # as asked (the vector leg embeds it as it is)
    folded: str  # case- and accent-folded (textnorm.fold)
    words: tuple[str, ...]  # the folded words, as entity names are matched against them
    lex: LexQuery  # the FTS5 terms and phrases of the lexical leg
    quoted: tuple[str, ...]  # the parts written in double quotes, as written
    time_hint: TimeRange | None  # the time the question names ("last week"), if looked for
    # its names and identifiers, folded, their words joined by a space: "peter", "dec 0054"
    # (``names``; ``phrase`` makes one the FTS phrase that finds it)
    names: tuple[str, ...]
    # those of them written as a proper name: "Marco", "Porto" (``names``, ``proper_only``)
    proper: tuple[str, ...]
    dates: tuple[str, ...]  # FTS phrases of the dates it writes with digits (``date_phrases``)
    asks_for_all: bool  # whether it asks for every item of something (``asks_for_all``)
    asks: str | None  # what it asks for by its form: "when", "count", … (``asks_for``)
    # Its lexical terms that name the form of what it asks rather than a topic: "due" and
    # "deadline" of a "when", "wrong" of a "why" (``form_terms``; rrf-v21).
    form_terms: tuple[str, ...]
    # The text ranking's third leg embeds: the question without its names, when it asks for all
    # of something, names someone and asks more than the names (``without_names``); else None.
    unnamed: str | None
    # The words that can carry a topic, folded, in order, without repeats (``topic_words``),
    # and the @mentions, folded, as written ("payments-service"): ``context`` reads them.
    topic_words: tuple[str, ...]
    mentions: tuple[str, ...]
    # The known entities it names, longest first: set by the recall pipeline from its index
    # (recall/entities.py), when an entity's page may lead the hits.
    entities: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, today: date | None) -> Query:
        """``text`` read once. ``today`` is the day a time named in the question is read
        against; None when the recall's own filters fix the time (no hint is looked for).
        Text that is not Unicode (a lone surrogate) is refused (``BadArgument``, ``query``)."""
        require_text(text, "query")
        folded = fold(text)
        found = tuple(names(text))
        everything = asks_for_all(text)
        lex, asks = build_query(text), asks_for(text)
        return cls(
            text=text,
            folded=folded,
            words=tuple(_WORD.findall(folded)),
            lex=lex,
            quoted=tuple(quoted_parts(text)),
            time_hint=query_time_hint(text, today) if today is not None else None,
            names=found,
            proper=tuple(names(text, proper_only=True)),
            dates=tuple(date_phrases(text)),
            asks_for_all=everything,
            asks=asks,
            form_terms=form_terms(lex, asks),
            unnamed=without_names(text, found) if everything and found else None,
            topic_words=tuple(topic_words(text)),
            mentions=tuple(mentions(text)),
        )


def words_of(text: str) -> tuple[str, ...]:
    """``text``'s folded words, as ``Query.words`` holds a question's (an entity's name is
    matched word for word against them)."""
    return tuple(_WORD.findall(fold(text)))


# ---------------------------------------------------------------------------- names

# Capitalised words that are not names: the calendar's, in the languages the fixture speaks.
_CALENDAR = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday mon tue tues wed thu thur thurs fri sat sun today yesterday tomorrow""".split()
)
_NAME_WORD = re.compile(r"[^\s\"“”(),;:!?]+")
_SENTENCE_END = (".", "!", "?", "。", "！", "？")
# A date written with digits (27.11.2025, 2025-11-27, 2025/11, 10.01): the time it names is in
# the logs' file names and headings (recall's time hint reads it), rarely in their text, so it is
# neither a name the memory lacks nor an unseen term. "study/work" (letters on both sides of a
# slash) offers alternatives; it is no identifier.
_DATE = re.compile(
    r"(?<![\w./-])(?:\d{4}[./-]\d{1,2}(?:[./-]\d{1,2})?|\d{1,2}[./-]\d{1,2}(?:[./-]\d{2,4})?)"
    r"(?![\w/-]|\.\d)"
)
_ALTERNATIVES = re.compile(r"[^\W\d_]+(?:/[^\W\d_]+)+")
# A day of the month written as an ordinal ("on April 29th", "May 2nd") is a time too.
_ORDINAL = re.compile(r"\d{1,2}(?:st|nd|rd|th)", re.IGNORECASE)


def phrase(name: str) -> str:
    """The FTS phrase of a name of ``Query.names``: "dec 0054" -> '"dec 0054"'."""
    return f'"{name}"'


def names(query: str, *, proper_only: bool = False) -> list[str]:
    """The question's names and identifiers, folded, their words joined by a space: words
    written with a capital that do not start a sentence (not a month or a weekday), @mentions,
    and identifiers (DEC-0054, v2.3.1), but not dates (22.01.2024, the 29th) nor words joined by
    a slash (study/work). "What did Marco cook on 3 Jan?" -> ['marco'].

    ``proper_only`` keeps the proper names: a word of letters written with a capital and then
    small letters ("Marco", "Porto"), the way people and places are written, or an @mention. An
    acronym, a name with inner capitals or digits and a hyphenated compound ("USA", "ComYMV",
    "IL-10", "Africa-trained") are kept out: a claim that names a gene or a measure may write it
    otherwise than the text that answers it, a question about someone the memory never heard of
    rarely can be answered by it (recall/relevance.py reads both)."""
    out: list[str] = []
    for m in _NAME_WORD.finditer(query):
        raw = m.group(0).strip(".,'’`´")
        word = re.sub(r"[’'`´](?:s|d|ll|re|ve|m)$", "", raw, flags=re.IGNORECASE)
        before = query[: m.start()].rstrip()
        starts = not before or before.endswith(_SENTENCE_END)
        toks = tokens(word.lstrip("@"))
        if not toks:
            continue
        if _DATE.fullmatch(word) or _ORDINAL.fullmatch(word) or _ALTERNATIVES.fullmatch(word):
            continue
        named = word.startswith("@") or bool(IDENTIFIER.fullmatch(word))
        if not named and word[:1].isupper() and not starts:
            named = fold(word) not in _CALENDAR and not (len(toks) == 1 and toks[0] in STOPWORDS)
        if named and proper_only:
            bare = word.lstrip("@")
            named = bare.isalpha() and (
                word.startswith("@") or (bare[:1].isupper() and bare[1:].islower())
            )
        if named:
            name = " ".join(toks)
            if name not in out:
                out.append(name)
    return out


def date_phrases(query: str) -> list[str]:
    """The FTS phrases of the dates written with digits in ``query``: "10.01.2024" ->
    ['"10 01 2024"']."""
    return list(
        dict.fromkeys('"' + " ".join(tokens(m.group(0))) + '"' for m in _DATE.finditer(query))
    )


# ---------------------------------------------------------------------------- asks for all

# Questions that ask for all of something, told apart by their form alone: "What books has Jon
# read?", "Which museums has Lia visited?", "What are Ana's hobbies?", "How many times did
# Jon call?", "Tell me about Peter". The answer is a list whose items were said on many days;
# recall/aggregate.py says what the ranking does with such a question.
#
# "what/which (kind|types|sorts) of ... " and "what/which <plural noun>", maybe after a
# preposition ("In which countries ..."), and "what are some <plural noun>": the thing asked for is
# plural. A plural here is a word of four or more letters ending in s (not -ss, -us, -is: "boss",
# "bus", "this"; not "does" or "goes": "What time does the bus leave?") or an irregular plural
# people ask about. A verb in the same place still reads as one ("What shop serves sushi?").
_WH = r"(?:what|which|where|who)"
_PLURAL = (
    r"(?!(?:does|goes|has|was|is)\b)"  # a verb after the question word: "What time does ..."
    r"(?:[a-z]{2,}[^su\W]s|[a-z]+ies|people|children|men|women|friends)"
)
# A preposition may lead: "In which countries did Ana relax?", "From what stores ...".
_LEAD = r"(?:(?:in|from|at|on|to|for|with|by|of|under|about)\s+)?"
_FORMS = (
    re.compile(rf"^\s*{_LEAD}{_WH}\s+(?:kinds?|types?|sorts?)\s+of\b", re.IGNORECASE),
    re.compile(rf"^\s*{_LEAD}{_WH}(?:\s+[a-z]+)?\s+{_PLURAL}\b", re.IGNORECASE),
    re.compile(rf"^\s*{_WH}\s+(?:are|were)\s+some\s+(?:[a-z]+\s+)?{_PLURAL}\b", re.IGNORECASE),
    re.compile(r"^\s*how\s+many\b", re.IGNORECASE),
    re.compile(
        r"^\s*(?:tell\s+me|what\s+do\s+(?:you|we)\s+know)\s+(?:\w+\s+)?about\b", re.IGNORECASE
    ),
    re.compile(r"\b(?:all|every|everything|list)\b.*\b(?:about|of|that|which)\b", re.IGNORECASE),
    re.compile(r"\b(?:hobbies|interests|favou?rites?)\b", re.IGNORECASE),
)
# "What is ..." / "What does ..." with a plural later on ("What does Ana think of cats?") asks for
# one thing: only the words right after the question word count, which the patterns above anchor.
_SINGLE = re.compile(
    rf"^\s*{_WH}\s+(?:is|was|does|did|do)\b(?!.*\b(?:hobbies|interests)\b)", re.IGNORECASE
)


# What a question asks for by its form (``asks_for``), read once, as ``Query.asks``, for
# recall/answer_match.py.
# A question word may follow a preposition ("In which city …", "Since when …").
_FORM_LEAD = r"^\s*(?:(?:in|on|at|from|to|for|with|by|since|until|during|of|about)\s+)?"
_PERIOD = r"(?:time|date|day|year|month|week|season)"
_PLACE_NOUNS = (
    r"(?:city|cities|country|countries|place|places|town|towns|state|states|location|locations|"
    r"restaurant|restaurants|destination|destinations|park|parks|beach|beaches|store|stores|"
    r"shop|shops|school|university|college|neighbou?rhood)"
)
# "what is", "what's", "what was" (however the apostrophe was typed).
_WHAT_IS = r"what(?:['’]s|\s+(?:is|was|are|were))"
# In this order: "how long ago" asks when, "how long" a number, "what made …" why.
_ASKS = (
    (
        "when",
        re.compile(
            _FORM_LEAD
            + rf"(?:when\b|(?:what|which)\s+{_PERIOD}\b|how\s+long\s+ago\b|since\s+when\b"
            + rf"|{_WHAT_IS}\s+the\s+(?:deadline|due\s+date)\b)",
            re.I,
        ),
    ),
    (
        "count",
        re.compile(
            _FORM_LEAD + r"(?:how\s+(?:many|much|long|often|old|far|big|tall)\b"
            r"|what\s+(?:number|percentage|amount|age)\b)",
            re.I,
        ),
    ),
    (
        "why",
        re.compile(
            _FORM_LEAD + r"(?:why\b|what\s+(?:made|makes|caused|causes|led|motivated|inspired)\b"
            r"|for\s+what\s+reason\b|what\s+(?:is|was|are|were)\s+the\s+reasons?\b"
            # rrf-v21: what went wrong, broke or happened to a thing asks what a cause line says;
            # what happened to a person ("to Marit on Friday") asks for an event, not a cause
            r"|what\s+(?:went|goes|has\s+gone|had\s+gone)\s+wrong\b"
            rf"|{_WHAT_IS}\s+wrong\s+with\b|what\s+broke\b"
            r"|what\s+happened\s+(?:to|with)\s+(?:the|our|my|your|their|this|that|its)\b)",
            re.I,
        ),
    ),
    (
        "where",
        re.compile(_FORM_LEAD + rf"(?:where\b|(?:what|which)\s+(?:\w+\s+)?{_PLACE_NOUNS}\b)", re.I),
    ),
    (
        "who",
        re.compile(
            _FORM_LEAD + r"(?:who|whom|whose)\b|(?:what|which)\s+(?:person|people|friends?)\b", re.I
        ),
    ),
)


def asks_for(question: str) -> str | None:
    """What ``question`` asks for by its form: "when", "count", "why", "where", "who", or None
    (what, which, yes or no). "When did Ana move?" -> "when"; "How many books …" -> "count"."""
    for kind, pattern in _ASKS:
        if pattern.search(question):
            return kind
    return None


# Words that say what form the answer takes, not what it is about: "when is the report due?",
# "what is the deadline for …" ask for a day, "what went wrong with …" for a cause. A line that
# states the day or the cause ("by Friday", "Root cause: …") seldom repeats them, so when no unit
# holds one, it is no word of the question the memory lacks: counted as one, it shrank the
# lexical leg's weight (legs.seen_share) and raised ``unseen`` in relevance (rrf-v21).
_FORM_WORDS = {
    "when": frozenset("due deadline deadlines".split()),
    "why": frozenset("wrong broke happened reason reasons".split()),
}


def form_terms(lex: LexQuery, asks: str | None) -> tuple[str, ...]:
    """The terms of ``lex`` (unquoted, no identifier) that name the form ``asks`` asks for
    (``_FORM_WORDS``): '"due"' of "When is the report due?"."""
    words = _FORM_WORDS.get(asks or "", frozenset())
    strong = set(lex.strong.split(" AND ")) if lex.strong else set()
    return tuple(t for t in lex.terms if t.strip('"') in words and t not in strong)


def asks_for_all(question: str) -> bool:
    """Whether ``question`` asks for every item of something (see the comment above)."""
    text = question.strip()
    if not text:
        return False
    if _SINGLE.match(text) and not re.search(r"\b(?:hobbies|interests|favou?rites?)\b", text, re.I):
        return False
    return any(p.search(text) for p in _FORMS)


# ---------------------------------------------------------------------------- without names

# A possessive ending, however the apostrophe was typed (as ``names`` reads it).
_POSSESSIVE = re.compile(r"[’'`´ʼ‘]s$", re.IGNORECASE)


def without_names(text: str, found: tuple[str, ...]) -> str | None:
    """``text`` with the words of its names ``found`` (``names``) and their possessive ending
    left out, as ranking's third leg embeds it (recall/aggregate.py): "Which trips has Peter
    taken?" -> "Which trips has taken?". None when nothing is left out, or nothing but the names
    was asked ("Tell me about Peter" would embed "Tell me about")."""
    drop = {w for n in found for w in n.split()}
    kept = []
    for word in text.split():
        core = _POSSESSIVE.sub("", word.strip('.,;:!?"()“”')).strip("’'`´ʼ‘")
        if fold(core).strip() not in drop:
            kept.append(word)
    rest = " ".join(kept)
    if rest == text or not any(t not in STOPWORDS for t in tokens(rest)):
        return None
    return rest


# ---------------------------------------------------------------------------- topic words

# Words that carry no topic: English function words plus greetings and acknowledgements in the
# languages of the fixture workspace. Kept small and explicit; a message made only of these is
# trivial (recall/context.py).
_TRIVIAL_WORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in
    into is it its me my of on or our so than that the their them then there these they this to
    was we were what when where which who why will with would you your about tell show find give
    any all some please pls thx ty thanks thank hi hello hey yo ok okay k kk yes yeah yep yup no
    nope nah sure cool great nice good fine awesome perfect lol haha hmm morning evening night bye
    cheers done got it agreed alright right well just also too very really much more go ahead
    continue again now then here let us lets do that sounds works
    chao cam on vang da duoc roi danke merci gracias ciao arigato arigatou""".split()
)
_TRIVIAL_CJK = ("ありがとう", "こんにちは", "おはよう", "はい", "了解", "谢谢", "你好", "好的")


def topic_words(text: str) -> list[str]:
    """The words of ``text`` that can carry a topic (``textnorm.word_tokens``: identifiers
    whole, CJK as bigrams), folded, in order, without repeats: no greeting, acknowledgement or
    function word, no single Latin letter. "Where is Peter this week?" -> ['peter', 'week']."""
    seen: dict[str, None] = {}
    for phrase in _TRIVIAL_CJK:
        text = text.replace(phrase, " ")
    for tok in word_tokens(text):
        if tok in _TRIVIAL_WORDS or (len(tok) == 1 and not is_cjk(tok)):
            continue
        seen.setdefault(tok, None)
    return list(seen)


_MENTION = re.compile(r"@([^\W_][\w-]*)")


def mentions(text: str) -> list[str]:
    """The @mentions of ``text``, folded, as written: "ask @Linh about @payments-service" ->
    ['linh', 'payments-service']."""
    return [fold(m) for m in _MENTION.findall(text)]
