"""Smoke tests of the benchmark harness (benchmarks/): metrics, the OpenClaw baseline, the question
set, the synthetic generator, and a tiny lexical end-to-end run. Fast; no embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks import metrics as M
from benchmarks.common import EVAL
from benchmarks.systems.openclaw import (
    OpenClawIndex,
    bm25_rank_to_score,
    build_fts_query,
    chunk_markdown,
)

REPO = Path(__file__).resolve().parents[1]


def _len(path, n):
    return 9  # every line is 9 characters + newline = 10


def test_evidence_recall_reads_best_first_within_budget():
    gold = [[{"path": "a.md", "start": 5, "end": 6}]]
    # 10 characters per line: a 30-character budget reads three lines.
    assert M.evidence_recall([("a.md", 5, 7)], gold, _len, 30) == 1.0
    assert M.evidence_recall([("a.md", 1, 4), ("a.md", 5, 6)], gold, _len, 30) == 0.0
    # A result that does not fit is read line by line up to the budget.
    assert M.evidence_recall([("a.md", 3, 8)], gold, _len, 30) == 0.5
    # Lines already read cost nothing the second time.
    assert (
        M.evidence_recall([("a.md", 1, 2), ("a.md", 1, 2), ("a.md", 5, 6)], gold, _len, 40) == 1.0
    )


def test_alternatives_and_items():
    gold = [
        [{"path": "a.md", "start": 1, "end": 1}, {"path": "b.md", "start": 3, "end": 3}],
        [{"path": "c.md", "start": 2, "end": 3}],
    ]
    res = [("b.md", 3, 3), ("x.md", 1, 1), ("c.md", 3, 3)]
    assert M.recall_at_k(res, gold, 1) == 0.5
    assert M.recall_at_k(res, gold, 3) == 1.0
    assert M.reciprocal_rank(res, gold) == 1.0
    assert M.reciprocal_rank([("x.md", 1, 1), ("c.md", 2, 2)], gold) == 0.5
    # Item 1 fully read via its alternative, item 2 half read.
    assert M.evidence_recall(res, gold, _len, 1000) == pytest.approx(0.75)


def test_ndcg_and_doc_recall():
    qrels = {"d1": 1, "d2": 1}
    assert M.ndcg_at_k(["d1", "d2", "x"], qrels) == pytest.approx(1.0)
    assert 0 < M.ndcg_at_k(["x", "d1"], qrels) < 1
    assert M.doc_recall_at_k(["d1", "x"], qrels, 100) == 0.5
    assert M.dedupe_docs(["a", "b", "a", "c"]) == ["a", "b", "c"]


def test_openclaw_chunking_and_query_are_the_classic_ones():
    text = "\n".join("x" * 99 for _ in range(40))  # 40 lines of 100 characters with the newline
    chunks = chunk_markdown(text)
    assert chunks[0][:2] == (1, 16)  # 16 × 100 = 1,600 characters
    assert chunks[1][0] == 13  # carried back until ≥ 320 characters: 4 lines
    assert (
        build_fts_query("Hà Nội payment_processor?")
        == '"H" AND "N" AND "i" AND "payment_processor"'
    )
    assert build_fts_query("東京リージョン") is None
    assert bm25_rank_to_score(-7.3) == 1.0  # raw FTS5 ranks are negative: every hit scores 1.0


def test_openclaw_keyword_only_hits_never_pass_min_score(tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2025-11-11.md").write_text(
        "# Notes\n\nThe payment_processor retries.\n"
    )
    oc = OpenClawIndex(tmp_path)
    assert oc.keyword("payment_processor", 24)  # the keyword leg finds it ...
    assert oc.search("payment_processor") == []  # ... but 0.3 × 1.0 < 0.35 drops it


def test_synthetic_workspace_is_deterministic(tmp_path):
    from benchmarks.datasets.synth import generate, queries

    a = generate(tmp_path / "a", 40, seed=3)
    b = generate(tmp_path / "b", 40, seed=3)
    assert a == b
    fa = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.md"))
    fb = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.md"))
    assert fa == fb
    assert all((tmp_path / "a" / p).read_bytes() == (tmp_path / "b" / p).read_bytes() for p in fa)
    assert queries(5) == queries(5)


@pytest.mark.skipif(
    not (EVAL / "memorybank").is_dir(),
    reason="evaluation data not present",
)
def test_committed_question_set_verifies():
    from benchmarks.datasets.workspaces import agentmem_files
    from benchmarks.questions.build import load, verify

    qs = load()
    assert len(qs) >= 150
    cats = {q["category"] for q in qs}
    assert {
        "paraphrase",
        "identifier",
        "entity",
        "temporal",
        "multi-hop",
        "vietnamese",
        "cjk",
        "none",
    } <= cats
    assert verify(qs, agentmem_files()) == []


def test_tiny_lexical_end_to_end(tmp_path, monkeypatch):
    from benchmarks.datasets.synth import generate
    from benchmarks.systems.clawmem import open_clawmem
    from benchmarks.systems.searchers import (
        BM25Searcher,
        ClawmemSearcher,
        OpenClawSearcher,
        clawmem_chunks,
    )

    monkeypatch.delenv("CLAWMEM_WORKSPACE", raising=False)
    root = tmp_path / "ws"
    generate(root, 30, seed=5)
    mem = open_clawmem(root, vectors=False)
    mem.index()
    chunks, vecs = clawmem_chunks(mem.index_path)
    assert chunks and vecs is None
    target = chunks[len(chunks) // 2]
    word = max(target.text.split(), key=len).strip("`*,.;:()")
    systems = [
        ClawmemSearcher(mem, "lexical"),
        BM25Searcher(chunks),
        OpenClawSearcher(root, None, None),
    ]
    for s in systems:
        res = s.search(word, k=5)
        assert isinstance(res, list) and not s.errors
    res = systems[0].search(word, k=5)
    assert res and all(a <= b for _, a, b in res)


@pytest.mark.skipif(
    not (EVAL / "realtalk").is_dir(),
    reason="evaluation data not present",
)
def test_realtalk_conversion_points_gold_at_the_evidence_messages():
    """Every REALTALK chat becomes daily logs whose gold lines are exactly the evidence messages
    (a wrong line would score a system on the wrong text)."""
    import json

    from benchmarks.datasets.realtalk import chat_files, convert

    for path in chat_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        by_id = {
            m["dia_id"]: m
            for key, msgs in data.items()
            if key.startswith("session_") and isinstance(msgs, list)
            for m in msgs
        }
        chat = convert(path)
        assert chat.questions and len(chat.messages) == len(by_id)
        lines = {rel: text.split("\n") for rel, text in chat.files.items()}
        asked = [q for q in data["qa"] if any(e in by_id for e in q.get("evidence") or [])]
        assert len(asked) == len(chat.questions)
        for raw, q in zip(asked, chat.questions, strict=True):
            assert raw["question"] == q["question"]
            ids = [e for e in raw["evidence"] if e in by_id]
            for ev, item in zip(ids, q["gold"], strict=True):
                (alt,) = item
                m = by_id[ev]
                words = " ".join(m["clean_text"].split())
                line = lines[alt["path"]][alt["start"] - 1]
                assert alt["start"] == alt["end"]
                assert line.startswith(f"- {m['speaker']}: {words}".rstrip()), (ev, line)
                day = m["date_time"][:10].split(".")
                assert alt["path"] == f"memory/{day[2]}-{day[1]}-{day[0]}.md"


def test_report_merge_takes_each_part_from_its_last_run_and_keeps_other_models_beside():
    from benchmarks.report import merge

    def run(started, embedder, **parts):
        return {"meta": {"started": started, "embedder": embedder}, **parts}

    e5, mini = "llama.cpp:e5:1:384:a", "llama.cpp:minilm:2:384:b"
    merged = merge(
        [
            run("1", e5, realtalk={"n": 1}, speed={"n": 1}),
            run("2", e5, speed={"n": 2}),
            run("3", mini, scifact={"n": 3}),  # another model's SciFact: beside, not instead
            run("4", e5, scifact={"n": 4}),
        ]
    )
    assert merged["realtalk"] == {"n": 1, "embedder": e5}
    assert merged["speed"] == {"n": 2}
    assert merged["scifact"] == {"n": 4, "embedder": e5}
    assert merged["scifact_models"] == [{"n": 3, "embedder": mini}]
    assert [(m["started"], m["parts"]) for m in merged["runs"]] == [
        ("1", ["realtalk", "speed"]),
        ("2", ["speed"]),
        ("3", ["scifact-model"]),
        ("4", ["scifact"]),
    ]
    # A run whose every part was measured again later is not named at all.
    again = merge([run("1", e5, speed={"n": 1}), run("2", e5, speed={"n": 2})])
    assert [m["started"] for m in again["runs"]] == ["2"]


def test_paired_interval_resamples_the_same_questions_for_both_systems():
    from benchmarks.metrics import interval, paired_interval

    a = [0.0, 0.5, 1.0, 1.0, 0.25, 0.0, 0.75, 1.0]
    mean, lo, hi = paired_interval(a)
    assert mean == pytest.approx(0.5625)
    assert lo < mean < hi
    assert paired_interval(a) == (mean, lo, hi)  # seeded: a re-render writes the same text
    # Paired: a system that gains exactly 0.1 on every question differs by exactly 0.1 in every
    # resample, however much the questions themselves vary.
    b = [x + 0.1 for x in a]
    assert paired_interval(b, a) == pytest.approx((0.1, 0.1, 0.1))
    # Questions without gold evidence (NaN) are left out, as the means leave them out.
    assert paired_interval([float("nan"), 1.0, 1.0])[0] == 1.0
    assert interval((0.1, -0.02, 0.2), signed=True) == "+0.100 (-0.020 to +0.200)"
    assert interval((0.627, 0.596, 0.658)) == "0.627 (0.596-0.658)"


@pytest.mark.skipif(not (EVAL / "realtalk").is_dir(), reason="evaluation data not present")
def test_mixed_workspace_places_every_message_on_a_known_line_of_its_kind(tmp_path):
    """The mixed workspace (issue 45) puts each REALTALK message on a line of the unit kind its
    session was dealt, so a question's gold is that line; its near misses name this workspace's
    people and none of the source chat's."""
    import json

    from benchmarks.datasets.mixed import (
        KINDS,
        build_layout,
        load_chat,
        name_mapping,
        question_names,
        swap_names,
    )

    ws = build_layout(1, tmp_path)
    data = load_chat(1)
    by_id = {
        m["dia_id"]: m
        for key, msgs in data.items()
        if key.startswith("session_") and isinstance(msgs, list)
        for m in msgs
    }
    kinds = {p.kind for p in ws.placed.values()}
    assert set(KINDS) - {"fact"} <= kinds and kinds & {"fact", "opinion"}
    files = {**ws.files, **{f"team:{k}": v for k, v in ws.scope_files.items()}}
    for dia, p in ws.placed.items():
        words = " ".join(by_id[dia]["clean_text"].split())
        if p.kind == "transcript":
            rel = p.path.removeprefix("sessions/")
            entry = json.loads(ws.transcript_files[rel].split("\n")[p.line - 1])
            content = entry["message"]["content"]
            said = content if isinstance(content, str) else content[0]["text"]
            assert words in said and ws.transcript_text[(p.path, p.line)] == said
            continue
        line = files[p.path].split("\n")[p.line - 1]
        assert words in line, (dia, p, line)
        if p.kind == "task":
            assert line.startswith(("- [ ] ", "- [x] "))
        if p.kind in ("fact", "opinion"):
            assert line.startswith(("- W @", "- O(c=0.7) @"))
        if p.kind == "link":
            assert line.startswith("- [[")
    assert sorted(question_names(data)) == ["Elise", "Kate"]  # the persona names, not "Emi"
    # A person of both chats is never asked about under their own name (their life may be here).
    swap = name_mapping(["Akib", "Fahim"], ["Akib", "Muhhamed"])
    assert swap == {"Akib": "Muhhamed", "Fahim": "Akib"}
    assert swap_names("Did Akib call Fahim?", swap) == "Did Muhhamed call Akib?"


SUITE = '''"""A suite written by a newcomer: one module, nothing else edited."""
PART = "tiny"
TITLE = "a tiny suite"


def run(settings):
    return {"mode": settings.mode, "vectors": settings.vectors}


def section(results):
    target = {"target": "tiny ran", "value": results["mode"], "met": True}
    return f"## Tiny\\n\\nran in {results['mode']} mode, vectors {results['vectors']}", [target]
'''


def test_a_suite_is_one_module(tmp_path, monkeypatch):
    """A module in benchmarks/suites/ with PART, TITLE, run and section is offered by --only, run
    by `python -m benchmarks` and rendered into the report (here from a folder added to the
    suites package's path, so the test writes nothing into the repository)."""
    import json

    import benchmarks.suites as suites
    from benchmarks.__main__ import main

    folder = tmp_path / "suites"
    folder.mkdir()
    (folder / "tiny_suite.py").write_text(SUITE, encoding="utf-8")
    monkeypatch.setattr(suites, "__path__", [*suites.__path__, str(folder)])
    assert "tiny" in suites.registered()
    out, raw = tmp_path / "report.md", tmp_path / "results.json"
    assert main(["--only", "tiny", "--no-vectors", "--json", str(raw), "--out", str(out)]) == 0
    assert json.loads(raw.read_text())["tiny"] == {"mode": "quick", "vectors": False}
    report = out.read_text(encoding="utf-8")
    assert "## Tiny\n\nran in quick mode, vectors False" in report
    assert "| tiny ran | quick | met |" in report
    # Two suites cannot claim one part.
    (folder / "tiny_again.py").write_text(SUITE, encoding="utf-8")
    with pytest.raises(ValueError, match="PART 'tiny' is taken"):
        suites.registered()


def test_a_child_run_gives_its_last_json_line_and_a_failure_its_stderr():
    """The scale suite's children (the index phases, the hybrid A/B) run through one helper:
    the JSON object a child prints last is its answer; a child that fails raises with the end of
    what it wrote to stderr."""
    import os

    from benchmarks.suites.scale import run_child

    env = dict(os.environ)
    code = "import json, sys; print('warming up'); print(json.dumps({'args': sys.argv[1:]}))"
    assert run_child(code, ["a", "b c"], env) == {"args": ["a", "b c"]}
    with pytest.raises(RuntimeError, match="the child says no"):
        run_child("import sys; sys.exit('the child says no')", [], env)
    # A child that prints nothing (an IndexError before), or no JSON object last, or hangs.
    with pytest.raises(RuntimeError, match="printed nothing; its stderr ends: quiet"):
        run_child("import sys; sys.stderr.write('quiet')", [], env)
    with pytest.raises(RuntimeError, match="no JSON object: 'done'"):
        run_child("print('done')", [], env)
    with pytest.raises(RuntimeError, match="ran past 1 s and was killed"):
        run_child("import time; time.sleep(30)", [], env, timeout=1)


@pytest.mark.skipif(not (EVAL / "realtalk").is_dir(), reason="evaluation data not present")
def test_the_fitting_scripts_chats_are_built_indexed_and_closed_in_turn(tmp_path, monkeypatch):
    """answer_match's and relevance's fits read REALTALK's tuning chats through one generator:
    each chat's workspace indexed, with every chat at hand for its foreign questions, and closed
    before the next is opened (relevance's loop never closed one)."""
    from benchmarks.datasets import realtalk
    from benchmarks.fitting.chats import indexed_chats

    monkeypatch.setattr(realtalk, "WORK", tmp_path)  # built here, not in bench-results/
    seen = []
    for chat, every, mem in indexed_chats([2, 1], None):
        assert sorted(every) == list(range(1, 11)) and every[chat.number] is chat
        hits = mem.recall(chat.questions[0]["question"], k=3, sync=False).hits
        assert hits and hits[0].path.startswith("memory/")
        seen.append((chat.number, mem))
    assert [n for n, _ in seen] == [2, 1]
    assert all(m.indexer._kept is None for _, m in seen)  # each closed: no index connection kept
