"""The facade's results: frozen dataclasses read by attribute, whose ``to_dict()`` is exactly what
the CLI's ``--json`` prints (the same keys, in the same order, with the same values). The key
lists below are the JSON contract of docs/cli.md: a change to one is a change users see."""

import dataclasses
import json

import pytest

from clawmem import open_workspace

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")

STATUS_KEYS = [
    "workspace",
    "index_path",
    "index_exists",
    "index_bytes",
    "tokenizer",
    "files_on_disk",
    "sessions",
    "skipped",
    "merged_sections",
    "watcher",
    "resident_embedder",
    "query_path",
]
STATUS_INDEX_KEYS = [
    "schema_version",
    "chunker_version",
    "normalizer_version",
    "last_sync_at",
    "files",
    "chunks",
    "facts",
    "changed_on_disk",
    "problems",
    "links",
    "unreadable",
    "vectors",
]
RETAIN_KEYS = [
    "stored",
    "duplicate_of",
    "kind",
    "timestamp",
    "entities",
    "confidence",
    "content",
    "line_text",
    "source",
    "path",
    "line",
    "supersedes",
    "similar",
]


def _json(ws, *args: str):
    r = cli("-w", str(ws), *args)
    assert r.code in (0, 9), r.err  # 9: check found problems, as planted below
    return json.loads(r.out)


def _frozen(result) -> None:
    assert dataclasses.is_dataclass(result) and not isinstance(result, type)
    first = dataclasses.fields(result)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(result, first, None)


def test_status_without_and_with_an_index(ws):
    mem = open_workspace(ws)
    s = mem.status()
    _frozen(s)
    assert s.vectors is None and s.files is None and s.state.startswith("no index yet")
    assert list(s.to_dict()) == [*STATUS_KEYS, "clean", "state"]
    assert s.to_dict() == _json(ws, "status", "--json")

    assert cli("-w", str(ws), "index", "-q").code == 0
    s = mem.status()
    assert s.state == "clean" and s.files == s.files_on_disk
    assert list(s.to_dict()) == [*STATUS_KEYS, *STATUS_INDEX_KEYS, "clean", "state"]
    assert s.to_dict() == _json(ws, "status", "--json")


def test_get_links_graph_entities_and_check(ws):
    (ws / "memory" / "2025-11-27.md").open("a", encoding="utf-8").write(
        "\n## Retain\n- X not a kind\n"
    )
    assert cli("-w", str(ws), "index", "-q").code == 0
    mem = open_workspace(ws)

    got = mem.get("memory/2025-11-27.md#L26-L26")
    _frozen(got)
    assert (got.from_line, got.to_line) == (26, 26)
    assert list(got.to_dict()) == ["path", "from", "to", "total_lines", "citation", "text"]
    assert got.to_dict() == _json(ws, "get", "memory/2025-11-27.md#L26-L26", "--json")

    links = mem.links("Peter")
    _frozen(links)
    assert links.path == "bank/entities/Peter.md" and links.outgoing and links.backlinks
    _frozen(links.outgoing[0])
    _frozen(links.backlinks[0])
    assert list(links.backlinks[0].to_dict())[:2] == ["from", "line"]
    assert list(links.to_dict()) == ["path", "outgoing", "backlinks", "notes"]
    assert links.to_dict() == _json(ws, "links", "Peter", "--json")

    graph = mem.graph()
    _frozen(graph)
    assert list(graph.to_dict()) == ["nodes", "edges", "unlinked_notes", "broken_links"]
    _frozen(graph.nodes[0])
    _frozen(graph.edges[0])
    assert list(graph.to_dict()["edges"][0]) == ["source", "target", "type", "count", "line"]
    assert graph.to_dict() == _json(ws, "graph", "--format", "json")

    rows = mem.entities()
    _frozen(rows[0])
    assert list(rows[0].to_dict()) == ["entity", "facts", "last_mention", "page"]
    assert [r.to_dict() for r in rows] == _json(ws, "entities", "--json")

    problems = mem.check()
    _frozen(problems[0])
    assert any(p.problem == "fact" and p.text == "- X not a kind" for p in problems)
    assert list(problems[0].to_dict()) == ["path", "line", "text", "message", "problem"]
    assert [p.to_dict() for p in problems] == _json(ws, "check", "--json")


def test_retain_and_model_status(ws):
    mem = open_workspace(ws)
    fact = mem.retain("Peter drinks green tea", entities=["Peter"], day="2025-12-04")
    _frozen(fact)
    assert fact.stored and fact.entities == ("Peter",) and fact.path == "memory/2025-12-04.md"
    assert list(fact.to_dict()) == RETAIN_KEYS
    again = _json(
        ws, "retain", "Peter drinks green tea", "-e", "Peter", "--date", "2025-12-04", "--json"
    )
    assert again == {**fact.to_dict(), "stored": False, "duplicate_of": fact.source}

    info = mem.model_status()
    _frozen(info)
    assert info.state.startswith("unusable") and info.identity is None  # vectors are off
    assert "identity" not in info.to_dict() and "index_match" not in info.to_dict()
    assert info.to_dict() == _json(ws, "model", "status", "--json")
