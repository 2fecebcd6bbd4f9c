"""A question is read once (issue 32): ``text.query.Query.parse`` is the only place a recall
parses its question; the legs, the fusion, relevance and the entity page read its fields."""

from __future__ import annotations

import ast
import json
import re
import shutil
import sys
import threading
from datetime import date
from pathlib import Path

import pytest

from clawmem import open_workspace
from clawmem.embedders.testing import HashEmbedder
from clawmem.errors import BadArgument
from clawmem.text import textnorm
from clawmem.text.query import Query, asks_for_all, names
from clawmem.text.textnorm import build_query, fold
from clawmem.text.timeexpr import TimeRange, query_time_hint
from tests.conftest import cli

SRC = Path(__file__).resolve().parents[1] / "src" / "clawmem"
TODAY = date(2025, 12, 1)


def test_the_parsed_question_holds_each_parse_of_its_text():
    text = 'What did Peter say about "payment retries" and DEC-0054 last week?'
    q = Query.parse(text, TODAY)
    assert q.text == text
    assert q.folded == fold(text)
    assert q.words == ("what", "did", "peter", "say", "about", "payment", "retries", "and", "dec",
                       "0054", "last", "week")  # fmt: skip
    assert q.lex == build_query(text)
    assert '"payment retries"' in q.lex.terms
    assert q.quoted == ("payment retries",)
    assert q.time_hint == query_time_hint(text, TODAY) == TimeRange(date(2025, 11, 24), date(2025, 11, 30))  # fmt: skip
    assert q.names == tuple(names(text)) == ("peter", "dec 0054")
    assert q.asks_for_all is asks_for_all(text) is False
    assert q.entities == ()  # resolved against an index by the recall pipeline, not here


def test_no_time_hint_is_looked_for_without_a_day():
    assert Query.parse("what happened last week?", None).time_hint is None
    assert Query.parse("what happened last week?", TODAY).time_hint is not None


def test_a_question_that_asks_for_all_of_something():
    assert Query.parse("What are Kate's hobbies?", TODAY).asks_for_all
    assert not Query.parse("What is Kate's cat called?", TODAY).asks_for_all


def test_a_lone_surrogate_is_refused_naming_the_parameter():
    with pytest.raises(BadArgument) as err:
        Query.parse("where is \ud800 Peter", TODAY)
    assert "query" in str(err.value) and "surrogate" in str(err.value)


def test_the_parsed_question_cannot_be_changed():
    q = Query.parse("tell me about Peter", TODAY)
    with pytest.raises(AttributeError):
        q.text = "something else"  # type: ignore[misc]


# What counts as reading a request's text, whatever function does it (issue 42):
# - a call of any function of the text modules (``text/textnorm.py``, ``text/query.py``,
#   ``text/timeexpr.py``: folding, tokenising, names, times) or of ``re`` with the text, its
#   folded form or a piece of it (four characters or more, as typed, a capital among them)
#   among its arguments;
# - a method of ``str`` called on the text, its folded form or such a piece (``split``,
#   ``lower``, ``casefold``, ``replace``, ``strip``, ...), from any of clawmem's modules;
# - a regular expression's method or ``unicodedata.normalize`` called from a clawmem frame that
#   holds the text or its folded form.
# The requests are typed in a casing no note uses ("PeTeR", "KeNjI"), so that a piece of the
# question (a part of it with a capital) is told apart from a note's words that match it.
# Inside ``Query.parse`` that is the one reading; anywhere else it is a second one. The
# embedders are left out: a model reads the text it embeds (and each model call is counted on
# its own, ``model_calls``).
_TEXT_MODULES = {str(SRC / "text" / f) for f in ("textnorm.py", "query.py", "timeexpr.py")}
_RE = str(Path(re.__file__).parent)  # re.findall(pattern, text) and the like
_PARSE = Query.parse.__func__.__code__  # type: ignore[attr-defined]
_EMBEDDERS = str(SRC / "embedders")
_SRC = str(SRC)
_EMBED_QUERY = HashEmbedder.embed_query.__code__


class _Reads:
    """The readings of ``text`` during one request, on any thread: ``parses`` (runs of
    ``Query.parse`` on it), ``inside`` (tokenisations by that parse), ``outside`` (any other,
    with where), and ``model_calls`` (the test embedder asked for its vector)."""

    def __init__(self, text: str, where: tuple[str, ...] = (_SRC,)) -> None:
        self.text = text
        self.where = where  # the files whose calls of str and re methods are watched
        self.folded = fold(text)
        self.parses = 0
        self.inside = 0
        self.outside: list[str] = []
        self.model_calls = 0

    def _of_text(self, value: object) -> bool:
        if not isinstance(value, str):
            return False
        if value in (self.text, self.folded):
            return True
        # A piece: a part of the text as typed, with a capital in it (a note's folded words, "0054"
        # or "pick", can equal a lower-case part of the question without coming from it).
        return len(value.strip()) >= 4 and value in self.text and value != value.lower()

    def _reading(self, frame, what: str) -> None:
        walk = frame
        while walk is not None:
            code = walk.f_code
            if code is _PARSE:
                self.inside += 1
                return
            if code.co_filename.startswith(_EMBEDDERS):
                return  # the model reads the text it embeds
            walk = walk.f_back
        self.outside.append(f"{what} at {frame.f_code.co_filename}:{frame.f_lineno}")

    def __call__(self, frame, event, arg):
        code = frame.f_code
        if event == "call":
            if code is _PARSE:
                if frame.f_locals.get("text") == self.text:
                    self.parses += 1
                return
            if code is _EMBED_QUERY and frame.f_locals.get("text") == self.text:
                self.model_calls += 1
                return
            caller = frame.f_back
            by_re = code.co_filename.startswith(_RE) and caller is not None
            if by_re and not caller.f_code.co_filename.startswith(self.where):
                return  # the re module's own steps, or a library's
            if code.co_filename in _TEXT_MODULES or by_re:
                args = [frame.f_locals.get(n) for n in code.co_varnames[: code.co_argcount]]
                if any(self._of_text(v) for v in args):
                    self._reading(frame.f_back or frame, code.co_name)
            return
        if event != "c_call" or not code.co_filename.startswith(self.where):
            return
        if code.co_filename.startswith(_EMBEDDERS):
            return
        owner = getattr(arg, "__self__", None)
        name = getattr(arg, "__name__", "?")
        if isinstance(owner, str):
            if self._of_text(owner):
                self._reading(frame, f"str.{name}")
            return
        module = getattr(owner, "__name__", None) if owner is not None else None
        if isinstance(owner, re.Pattern) or module in ("re", "unicodedata"):
            held = frame.f_locals.values()
            if any(isinstance(v, str) and v in (self.text, self.folded) for v in held):
                self._reading(frame, f"{type(owner).__name__}.{name}")


def _watched(text: str, run, where: tuple[str, ...] = (_SRC,)) -> _Reads:
    reads = _Reads(text, where)
    threading.setprofile(reads)
    sys.setprofile(reads)
    try:
        run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return reads


def _one_parse(text: str, today: date | None) -> int:
    """The tokenisations one ``Query.parse`` of ``text`` makes (what a request may make)."""
    reads = _watched(text, lambda: Query.parse(text, today))
    assert reads.parses == 1 and reads.outside == []
    return reads.inside


def _read_once(reads: _Reads, text: str, today: date | None = TODAY) -> None:
    """``text`` was parsed once, and read nowhere else: its readings are one parse's."""
    assert reads.parses == 1, f"Query.parse ran {reads.parses} times"
    one = _one_parse(text, today)
    assert reads.inside == one, "one parse's readings (and the watch sees them)"
    assert reads.outside == [], "read again outside Query.parse:\n" + "\n".join(reads.outside)


@pytest.mark.parametrize(
    "text, kwargs",
    [
        # a time named: two rankings (the window's and everywhere's) share the one parse
        ("WhAt did PeTeR DeCiDe about the PaYmEnTs-SeRvIcE last week?", {"mode": "lexical"}),
        ("WhAt did PeTeR DeCiDe about the PaYmEnTs-SeRvIcE last week?", {"mode": "hybrid"}),
        # an entity's page leads: the entities are matched against the parsed words
        ("TeLl me about PeTeR and ThE CaStLe", {"mode": "hybrid", "expand": True}),
        ('WhIcH "ReTrY PoLiCy" did we pick for dEc-0054?', {"mode": "lexical", "budget": 200}),
        ("WhAt HaPpEnEd in NoVeMbEr 2025?", {"mode": "hybrid", "since": "2025-11-01"}),
    ],
)
def test_a_recall_reads_its_question_once(hash_indexed: Path, text: str, kwargs: dict):
    mem = open_workspace(hash_indexed, environ={}, embedder=HashEmbedder())
    res = None

    def run() -> None:
        nonlocal res
        res = mem.recall(text, today=TODAY, **kwargs)

    reads = _watched(text, run)
    assert res is not None and res.hits, "the question must find something for the test to mean it"
    _read_once(reads, text, None if "since" in kwargs else TODAY)  # a filter fixes the time
    assert reads.model_calls == (0 if kwargs["mode"] == "lexical" else 1)


def test_a_cli_recall_reads_its_question_once(hash_indexed: Path):
    text = "WhAt did PeTeR DeCiDe about the PaYmEnTs-SeRvIcE last week?"
    runs = []
    reads = _watched(
        text,
        lambda: runs.append(
            cli("-w", str(hash_indexed), "recall", text, "--mode", "lexical", "--json")
        ),
    )
    assert runs[0].code == 0, runs[0].err
    assert json.loads(runs[0].out)["results"]
    assert reads.parses == 1 and reads.inside
    assert reads.outside == [], "read again outside Query.parse:\n" + "\n".join(reads.outside)


@pytest.fixture
def with_team(hash_indexed: Path, tmp_path: Path) -> Path:
    """The fixture workspace reading a second one as the read scope ``team``."""
    from .conftest import FIXTURE, approve

    team = tmp_path / "team"
    shutil.copytree(FIXTURE, team)
    open_workspace(team, environ={"CLAWMEM_VECTORS": "0"}).index()
    (hash_indexed / "clawmem.toml").write_text('[scopes]\nteam = "../team"\n')
    approve(hash_indexed)
    return hash_indexed


def test_a_recall_with_read_scopes_reads_its_question_once(with_team: Path):
    """One request, two indexes: the question is read once, and the scope's search takes that
    reading (``pipeline.read_question``)."""
    mem = open_workspace(with_team, environ={}, embedder=HashEmbedder())
    text = "WhAt did PeTeR DeCiDe about the PaYmEnTs-SeRvIcE last week?"
    res = None

    def run() -> None:
        nonlocal res
        res = mem.recall(text, today=TODAY, mode="lexical")

    reads = _watched(text, run)
    assert res is not None and {h.scope for h in res.hits} >= {None, "team"}
    _read_once(reads, text)


@pytest.mark.parametrize(
    "text",
    [
        "WhAt did PeTeR DeCiDe about the PaYmEnTs-SeRvIcE and dEc-0054?",
        "HeY @KeNjI, WhIcH TrIpS has PeTeR TaKeN and what did the 東京 DePlOy CoSt?",
    ],
)
def test_a_context_request_reads_its_message_once(with_team: Path, text: str):
    """``context`` decides whether the message is trivial, searches twice (the notes, then the
    core file; each with the read scope) and scores each line against one reading of the
    message, and embeds it once: its null level takes the recall's vector."""
    from clawmem.recall.context import build_context

    mem = open_workspace(with_team, environ={}, embedder=HashEmbedder())
    out = []
    reads = _watched(text, lambda: out.append(build_context(mem.indexer, text, today=TODAY)))
    assert out[0].lines, "the message must find something for the test to mean it"
    _read_once(reads, text)
    assert reads.model_calls == 1, "the message's vector, shared by both searches and null level"


def test_an_mcp_search_reads_its_question_once(with_team: Path):
    """memory_search as the MCP server runs it (the tool catalogue, its argument check, the
    dispatch), with the read scope."""
    from clawmem.cli.mcp.dispatch import Tools

    mem = open_workspace(with_team, environ={}, embedder=HashEmbedder())
    text = "WhIcH TrIpS has PeTeR TaKeN?"
    out = []
    tools = Tools(mem)
    reads = _watched(text, lambda: out.append(tools.call("memory_search", {"query": text})))
    ok, data = out[0]
    assert ok and isinstance(data, dict) and data["results"], data
    _read_once(reads, text)
    assert reads.model_calls == 1


def test_the_watch_catches_a_reading_outside_the_parser():
    # The guard can fail: a fold, a lexical query, a split and a regular expression over the
    # question (or a word of it) outside Query.parse are each reported.
    text = "What did Peter decide?"

    def again() -> None:
        q = Query.parse(text, TODAY)
        fold(text)
        build_query(q.text)
        q.text.split()
        textnorm.word_tokens("Peter decide")
        re.findall(r"\w+", q.text)

    reads = _watched(text, again, (_SRC, __file__))
    assert reads.parses == 1
    got = [r.split(" ")[0] for r in reads.outside]
    assert got[0] == "fold", got
    assert {"build_query", "str.split", "word_tokens", "findall"} <= set(got), sorted(set(got))


# Below the parser, recall reads the question's fields, never these functions (AST check:
# a call of one of them in recall/ on anything would be a second reading of the question).
_QUESTION_PARSERS = {
    "build_query",
    "query_time_hint",
    "match_time_hint",
    "asks_for_all",
    "asks_for",
    "names",
    "date_phrases",
    "quoted_parts",
    "topic_words",
    "mentions",
    "without_names",
}


def _calls_in(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name in _QUESTION_PARSERS:
                found.add(name)
    return found


def test_recall_calls_no_question_parser():
    offenders = {
        p.relative_to(SRC).as_posix(): sorted(_calls_in(p))
        for p in sorted((SRC / "recall").rglob("*.py"))
        if _calls_in(p)
    }
    assert offenders == {}
    # ... and the check sees such a call where there is one.
    assert _calls_in(SRC / "text" / "query.py") >= {"build_query", "names", "asks_for_all"}


def test_a_date_written_with_digits_is_read_as_a_date_not_a_name():
    q = Query.parse("What did Paola cook on 22.01.2024?", TODAY)
    assert q.dates == ('"22 01 2024"',)
    assert q.names == ("paola",)
