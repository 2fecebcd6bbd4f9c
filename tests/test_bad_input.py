"""Inputs the soak's fuzzing (benchmarks/soak/fuzz.py) found crashing, kept as regressions."""

from __future__ import annotations

import pytest

from clawmem.errors import BadArgument
from clawmem.memory import open_workspace

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")


@pytest.mark.parametrize("query", ["\ud800", "a\udfffb", "payment \ud83c ledger"])
def test_a_lone_surrogate_in_a_query_is_a_clear_error(ws, query):
    # JSON's "\ud800" (an agent's tool call) decodes to a lone surrogate: it used to reach
    # SQLite's UTF-8 encoder and crash with UnicodeEncodeError.
    mem = open_workspace(ws)
    mem.index()
    with pytest.raises(BadArgument, match=r"^query=.*a lone surrogate \(U\+D[89A-F]"):
        mem.recall(query, mode="lexical")
    with pytest.raises(BadArgument, match=r"^entity="):
        mem.recall("payment", mode="lexical", entity=query)
    assert mem.recall("payment ledger \U0001f600", mode="lexical") is not None  # a pair is text


def test_a_lone_surrogate_in_a_retained_fact_writes_nothing(ws):
    mem = open_workspace(ws)
    mem.index()
    before = {p: p.read_bytes() for p in (ws / "memory").glob("*.md")}
    with pytest.raises(BadArgument, match=r"^text=.*lone surrogate"):
        mem.retain("The \ud800 count was 3.", day="2025-11-20")
    with pytest.raises(BadArgument, match=r"^entities="):
        mem.retain("The count was 3.", entities=["Pe\udc00ter"], day="2025-11-20")
    assert {p: p.read_bytes() for p in (ws / "memory").glob("*.md")} == before


def test_invalid_utf8_in_a_command_line_query_is_a_one_line_error(ws):
    # Python hands undecodable argv bytes over as lone surrogates (surrogateescape).
    r = cli("-w", str(ws), "recall", "a\udced\udca0\udc80b")
    assert r.code == 2, r.err
    first, *rest = r.err.splitlines()
    assert first.startswith("clawmem: error: query=") and "lone surrogate" in first
    assert len(rest) <= 1 and "Traceback" not in r.err
