"""`clawmem context`: the auto-inject block for an agent's turn. Trivial messages cost nothing,
irrelevant ones inject nothing, relevant lines come cited, core MEMORY.md first, within budget."""

from __future__ import annotations

import json
import re

import pytest

from clawmem.recall.context import HEADER, build_context, lexical_score, trivial_reason
from clawmem.recall.pipeline import estimate_tokens
from clawmem.text.query import Query, mentions, topic_words

from .conftest import cli, cli_subprocess

CITED = re.compile(r"^- \[([^\]#]+)#L(\d+)(?:-L(\d+))?\] (.+)$")
FACT = re.compile(r"^[WBOS](?:\(c=[\d.]+\))?(?: @\S+)*: (.+?)(?: \(\d{4}-\d\d-\d\d\))?$")


@pytest.mark.parametrize(
    "message",
    [
        "ok",
        "thanks!",
        "Hi there :)",
        "ok, sounds good, go ahead",
        "yes please",
        "ありがとう",
        "cảm ơn",
    ],
)
def test_trivial_messages(message):
    words = Query.parse(message, None).topic_words
    assert trivial_reason(words, set()) is not None, words


def test_meaningful_words_and_specific_terms():
    assert topic_words("Where is Peter this week?") == ["peter", "week"]
    assert topic_words("Đặt lịch họp Hà Nội") == ["dat", "lich", "hop", "ha", "noi"]
    # Identifiers stay whole; CJK runs are read as bigrams, small katakana (U+31F0-31FF) too.
    assert topic_words("did DEC-0054 touch payment_processor?") == [
        "dec-0054",
        "touch",
        "payment_processor",
    ]
    assert topic_words("東京のデプロイ") == ["東京", "京の", "のデ", "デプ", "プロ", "ロイ"]
    assert topic_words("ㇰㇱㇲ") == ["ㇰㇱ", "ㇱㇲ"]
    assert mentions("ask @Linh about @payments-service") == ["linh", "payments-service"]
    # A short message that names an identifier or an entity is not trivial.
    assert trivial_reason(["dec-0054"], {"dec-0054"}) is None
    assert trivial_reason(["peter"], {"peter"}) is None
    assert "fewer than 3" in trivial_reason(["peter"], set())
    assert lexical_score("Keep WhatsApp replies concise", ["whatsapp", "reply"], set()) == 0.5
    assert lexical_score("EU deploys per DEC-0054", ["dec-0054"], {"dec-0054"}) == 0.5
    assert lexical_score("nothing in common", ["whatsapp"], set()) == 0.0


def _lines(out: str, ws) -> list[tuple[str, int, str]]:
    """(path, first line, text) of each line of the block, checked against the file it cites."""
    rows = out.strip().splitlines()
    assert rows[0] == HEADER
    parsed = []
    for row in rows[1:]:
        m = CITED.match(row)
        assert m, row
        path, start, text = m.group(1), int(m.group(2)), m.group(4)
        end = int(m.group(3) or start)
        cited = (ws / path).read_text(encoding="utf-8").splitlines()[start - 1 : end]
        cited = " ".join(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", x).strip() for x in cited)
        fact = FACT.match(text)
        assert text == cited or (fact and fact.group(1) in cited), (row, cited)
        parsed.append((path, start, text))
    return parsed


def test_context_is_cited_core_first_and_within_budget(ws, lexical):
    r = cli("-w", str(ws), "context", "Where do EU deploys of payments-service go? DEC-0054?")
    assert r.code == 0, r.err
    lines = _lines(r.out, ws)
    assert lines[0][:2] == ("MEMORY.md", 14)  # the core file leads when it is relevant
    assert estimate_tokens(r.out) <= 200 + 10

    small = cli(
        "-w",
        str(ws),
        "context",
        "Where do EU deploys of payments-service go?",
        "--json",
        "--budget",
        "90",  # the header and one ~190-character line; not the two more that also match
    )
    data = json.loads(small.out)
    assert data["injected"] and data["budget"]["used"] <= 90
    assert data["budget"]["dropped"] >= 1
    assert data["text"] == "\n".join(
        [HEADER, *(f"- [{x['citation']}] {x['text']}" for x in data["lines"])]
    )


def test_trivial_and_irrelevant_messages_print_nothing(ws, lexical):
    for message in ("thanks!", "ok go ahead", "Please write a limerick about autumn leaves"):
        r = cli("-w", str(ws), "context", message)
        assert (r.code, r.out) == (0, ""), (message, r.err)
    data = json.loads(cli("-w", str(ws), "context", "thanks!", "--json").out)
    assert data["injected"] is False and data["skipped"].startswith("trivial message")
    assert data["lines"] == [] and data["text"] == ""
    # A short question naming a known entity is not trivial.
    data = json.loads(cli("-w", str(ws), "context", "where is Peter?", "--json").out)
    assert data["skipped"] is None


def test_hook_reads_claude_code_json_and_never_blocks_the_prompt(ws, tmp_path):
    hook_input = json.dumps(
        {
            "session_id": "abc",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(ws),
            "prompt": "How should I send Peter the long release notes on WhatsApp?",
        }
    )
    env = {"CLAWMEM_VECTORS": "0"}
    r = cli_subprocess("-w", str(ws), "context", "--hook", input=hook_input, env=env)
    assert r.code == 0, r.err
    assert any(path == "MEMORY.md" and lineno == 8 for path, lineno, _ in _lines(r.out, ws))
    plain = cli_subprocess("-w", str(ws), "context", "-", input="ok thanks", env=env)
    assert (plain.code, plain.out) == (0, "")
    # A broken set-up reports itself on stderr with exit 1: exit 2 would block the user's prompt.
    broken = cli_subprocess(
        "-w", str(tmp_path / "nowhere"), "context", "--hook", input=hook_input, env=env
    )
    assert broken.code == 1 and broken.out == ""
    assert broken.err.startswith("clawmem: error: ")
    assert cli("-w", str(tmp_path / "nowhere"), "context", "where is Peter?").code == 3


def test_bad_options(ws, lexical):
    assert cli("-w", str(ws), "context", "payments", "--budget", "0").code == 2
    assert cli("-w", str(ws), "context", "payments", "--min-score", "1.5").code == 2


def test_context_with_the_real_model(indexed):
    from clawmem import open_workspace

    mem = open_workspace(indexed)
    res = build_context(mem.indexer, "The cat was sleeping on the mat by the front door again")
    assert res.injected, res.to_dict()
    assert any("Miso" in ln.text for ln in res.lines)
    assert not res.degraded
    # Nothing in these notes is about this: nothing is injected.
    off = build_context(mem.indexer, "Please write a limerick about autumn leaves in the rain")
    assert not off.injected, off.to_dict()
    peter = build_context(mem.indexer, "how long should my WhatsApp answers to Peter be?")
    assert peter.lines[0].citation in {"MEMORY.md#L7", "MEMORY.md#L8"}


def test_a_page_line_is_left_for_the_fact_it_restates(tmp_path, lexical):
    """ "Tell me about Kate": her generated page leads the hits, and her facts follow. The block
    reads each fact once, from the fact's own line, not again from the page's copy of it."""
    ws = tmp_path / "notes"
    assert cli("init", str(ws)).code == 0
    for line in ("W @Kate: Kate moved to Porto in March", "O(c=0.8) @Kate: Kate prefers tea"):
        assert cli("-w", str(ws), "retain", line).code == 0
    assert cli("-w", str(ws), "reflect").code == 0
    r = cli("-w", str(ws), "context", "tell me about Kate", "--json")
    assert r.code == 0, r.err
    lines = json.loads(r.out)["lines"]
    assert len(lines) == 2 and all(ln["path"].startswith("memory/") for ln in lines), lines
    assert sorted("Porto" in ln["text"] for ln in lines) == [False, True]


@pytest.mark.parametrize(
    "planted",
    ["[" * 200_000, "[[1.0, 2.0]]", json.dumps([[0.5, 0.5]] * 8), '{"a": 1}'],
    ids=["nested", "one-short", "another-length", "an-object"],
)
def test_a_probe_cache_from_elsewhere_is_embedded_again(ws, hash_model, monkeypatch, planted):
    """The probes' vectors are kept in .memory/, which a cloned repository may commit: a file
    nested 200,000 deep (RecursionError) or of vectors of another length than the model's
    (zip's ValueError) made every prompt's context an internal error. Such a file is embedded
    again and rewritten."""
    import clawmem.recall.context as context

    monkeypatch.setenv("CLAWMEM_RESIDENT_EMBEDDER", "0")
    monkeypatch.setattr(context, "_probe_vectors", {})
    first = cli("-w", str(ws), "context", "what do we use postgres for in payments?")
    assert first.code == 0, first.err
    [cache] = (ws / ".memory").glob("context-probes-*.json")
    good = json.loads(cache.read_text())
    cache.write_text(planted)
    monkeypatch.setattr(context, "_probe_vectors", {})
    again = cli("-w", str(ws), "context", "what do we use postgres for in payments?")
    assert again.code == 0, again.err
    assert again.out == first.out
    assert json.loads(cache.read_text()) == good
