"""A question is read once (issue 32): ``text.query.Query.parse`` is the only place a recall
parses its question; the legs, the fusion, relevance and the entity page read its fields."""

from __future__ import annotations

import ast
import json
import shutil
import sys
import threading
from datetime import date
from pathlib import Path

import pytest

from clawmem import open_workspace
from clawmem.embedders.testing import HashEmbedder
from clawmem.errors import BadArgument
from clawmem.text import query as query_module
from clawmem.text import textnorm, timeexpr
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


# The functions that read a question's text. Each may run on the whole question only inside
# ``Query.parse`` (they also run on parts of it, and on documents, which is not re-parsing).
_PARSERS = {
    f.__code__
    for f in (
        textnorm.fold,
        textnorm.search_text,
        textnorm.tokens,
        textnorm.build_query,
        textnorm.quoted_parts,
        textnorm.require_text,
        timeexpr.query_time_hint,
        timeexpr.match_time_hint,
        query_module.names,
        query_module.date_phrases,
        query_module.asks_for_all,
        query_module.words_of,
    )
}
_PARSE = Query.parse.__func__.__code__  # type: ignore[attr-defined]
_EMBEDDERS = str(SRC / "embedders")


class _Reads:
    """Every call, on any thread, of a parser above with ``text`` as its first argument, and
    whether ``Query.parse`` was on the stack when it was made."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.parses = 0
        self.outside: list[str] = []
        self.inside = 0

    def __call__(self, frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code is _PARSE:
            if frame.f_locals.get("text") == self.text:
                self.parses += 1
            return
        if code not in _PARSERS:
            return
        first = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
        if first not in (self.text, fold(self.text)):
            return
        caller = frame.f_back
        while caller is not None and caller.f_code is not _PARSE:
            if caller.f_code.co_filename.startswith(_EMBEDDERS):
                return  # the vector leg's model reads the text as it reads any (HashEmbedder)
            caller = caller.f_back
        if caller is None:
            back = frame.f_back
            where = f"{back.f_code.co_filename}:{back.f_lineno}" if back else "?"
            self.outside.append(f"{code.co_name} called from {where}")
        else:
            self.inside += 1


def _watched(text: str, run) -> _Reads:
    reads = _Reads(text)
    threading.setprofile(reads)
    sys.setprofile(reads)
    try:
        run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return reads


@pytest.mark.parametrize(
    "text, kwargs",
    [
        # a time named: two rankings (the window's and everywhere's) share the one parse
        ("What did Peter decide about the payments-service last week?", {"mode": "lexical"}),
        ("What did Peter decide about the payments-service last week?", {"mode": "hybrid"}),
        # an entity's page leads: the entities are matched against the parsed words
        ("tell me about Peter and The Castle", {"mode": "hybrid", "expand": True}),
        ('which "retry policy" did we pick for DEC-0054?', {"mode": "lexical", "budget": 200}),
        ("what happened in November 2025?", {"mode": "hybrid", "since": "2025-11-01"}),
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
    assert reads.parses == 1, f"Query.parse ran {reads.parses} times"
    assert reads.inside, "the profiler saw the parse's own steps (else it sees nothing)"
    assert reads.outside == [], "parsed again outside Query.parse:\n" + "\n".join(reads.outside)


def test_a_cli_recall_reads_its_question_once(hash_indexed: Path):
    text = "what did Peter decide about the payments-service last week?"
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
    assert reads.outside == [], "parsed again outside Query.parse:\n" + "\n".join(reads.outside)


def test_a_recall_with_read_scopes_reads_its_question_once(hash_indexed: Path, tmp_path: Path):
    """One request, two indexes: the question is read once, and the scope's search takes that
    reading (``pipeline.read_question``)."""
    from .conftest import FIXTURE, approve

    team = tmp_path / "team"
    shutil.copytree(FIXTURE, team)
    open_workspace(team, environ={"CLAWMEM_VECTORS": "0"}).index()
    (hash_indexed / "clawmem.toml").write_text('[scopes]\nteam = "../team"\n')
    approve(hash_indexed)
    mem = open_workspace(hash_indexed, environ={}, embedder=HashEmbedder())
    text = "What did Peter decide about the payments-service last week?"
    res = None

    def run() -> None:
        nonlocal res
        res = mem.recall(text, today=TODAY, mode="lexical")

    reads = _watched(text, run)
    assert res is not None and {h.scope for h in res.hits} >= {None, "team"}
    assert reads.parses == 1, f"Query.parse ran {reads.parses} times"
    assert reads.outside == [], "parsed again outside Query.parse:\n" + "\n".join(reads.outside)


def test_a_context_request_reads_its_message_once(hash_indexed: Path):
    """``context`` searches twice (the notes, then the core file) on one reading of the message."""
    from clawmem.recall.context import build_context

    mem = open_workspace(hash_indexed, environ={}, embedder=HashEmbedder())
    text = "What did Peter decide about the payments-service and DEC-0054?"
    out = []
    reads = _watched(text, lambda: out.append(build_context(mem.indexer, text, today=TODAY)))
    assert out[0].lines, "the message must find something for the test to mean it"
    assert reads.parses == 1, f"Query.parse ran {reads.parses} times"


def test_the_watch_catches_a_parse_outside_the_parser():
    # The guard can fail: a fold of the question outside Query.parse is reported.
    text = "What did Peter decide?"
    reads = _watched(text, lambda: (Query.parse(text, TODAY), fold(text), build_query(text)))
    assert reads.parses == 1
    assert [r.split(" ")[0] for r in reads.outside] == ["fold", "build_query", "quoted_parts"]


# Below the parser, recall reads the question's fields, never these functions (AST check:
# a call of one of them in recall/ on anything would be a second reading of the question).
_QUESTION_PARSERS = {
    "build_query",
    "query_time_hint",
    "match_time_hint",
    "asks_for_all",
    "names",
    "date_phrases",
    "quoted_parts",
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
