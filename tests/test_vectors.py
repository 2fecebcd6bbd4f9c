"""Semantic and hybrid recall with the real model (multilingual-e5-small → GGUF → llama.cpp) and
real sqlite-vec. The fixture workspace is embedded once per session and copied per test. Tests of
plumbing (vector storage, the cache, filters inside the vector leg, fusion) use the deterministic
test embedder instead (``hash_indexed``, ``hash_model``): they do not depend on meaning."""

import json
import shutil
import sqlite3

import pytest

from clawmem import open_workspace

from .conftest import cli


def recall(ws, query, *extra):
    r = cli("-w", str(ws), "recall", query, "--json", *extra)
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_paraphrase_finds_the_cat(indexed):
    res = recall(indexed, "a feline resting on a rug", "-k", "3")
    assert res["ranking"] == "rrf-v20" and res["degraded"] == []
    assert any("Miso" in (h.get("content") or h["snippet"]) for h in res["results"][:2])
    vec = recall(indexed, "a feline resting on a rug", "--mode", "vector", "-k", "3")
    assert vec["ranking"] == "vector-cosine"
    assert "Miso" in (vec["results"][0].get("content") or vec["results"][0]["snippet"])


@pytest.mark.parametrize(
    "ident", ["DEC-0054", "payment_processor", "v2.3.1", "src/memory/hybrid.ts"]
)
def test_exact_identifier_still_comes_first(indexed, ident):
    res = recall(indexed, ident, "--explain")
    top = res["results"][0]
    assert res["relaxed"] is False and top["explain"]["lexical_rank"] is not None
    assert ident.lower() in (top["snippet"] + (top.get("content") or "")).lower()


def test_explain_shows_both_legs(hash_indexed):
    res = recall(hash_indexed, "Hetzner migration", "--explain")
    legs = [h["explain"] for h in res["results"]]
    assert any(e["lexical_rank"] and e["vector_rank"] for e in legs)
    human = cli("-w", str(hash_indexed), "recall", "Hetzner migration", "--explain").out
    assert "lexical rank" in human and "vector rank" in human


def test_weighted_fusion_is_available_for_comparison(hash_indexed, monkeypatch):
    monkeypatch.setenv("CLAWMEM_FUSION", "weighted")
    res = recall(hash_indexed, "DEC-0054")
    assert res["ranking"] == "weighted-v16" and res["results"]


def test_status_reports_the_embedder(indexed):
    st = json.loads(cli("-w", str(indexed), "status", "--json").out)
    v = st["vectors"]
    assert v["backend"] == "sqlite-vec" and v["sqlite_vec"].startswith("v0.1")
    assert v["dims"] == 384 and v["pending"] == 0 and v["indexed"] == st["chunks"] + st["facts"]
    emb = v["configured_embedder"]
    assert emb["model"] == "multilingual-e5-small-q4_0" and len(emb["model_sha256"]) == 64
    assert v["model_path"].endswith(".gguf") and v["state"] == "ok"


def test_forced_rebuild_reuses_every_vector(hash_indexed):
    r = json.loads(cli("-w", str(hash_indexed), "index", "--force", "--json").out)
    assert r["rebuilt"] and r["vectors_embedded"] == 0 and r["vectors_pending"] == 0
    assert r["vectors_reused"] == r["units"]


def test_edit_embeds_only_changed_text(indexed):
    log = indexed / "memory" / "2025-11-14.md"
    log.write_text(
        log.read_text(encoding="utf-8") + "\nA brand new paragraph about kayaks.\n",
        encoding="utf-8",
    )
    r = json.loads(cli("-w", str(indexed), "index", "--json").out)
    assert r["files_indexed"] == 1
    assert (
        1 <= r["vectors_embedded"] <= 2
    )  # the edited chunk only; untouched ones came from the cache
    assert (
        recall(indexed, "canoe", "--mode", "vector", "-k", "1")["results"][0]["path"]
        == "memory/2025-11-14.md"
    )


def test_lexical_rows_usable_before_vectors_and_pending_reported(ws, hash_model):
    r = json.loads(cli("-w", str(ws), "index", "--no-embed", "--json").out)
    assert r["vectors_pending"] == r["units"]
    res = recall(ws, "DEC-0054", "--no-sync")
    assert res["results"] and res["vectors"]["pending"] == r["units"]
    assert any("pending" in d for d in res["degraded"])


def test_model_switch_rebuilds_vectors_never_mixes(hash_indexed):
    # Plumbing (which vectors are used, reused, re-embedded), so the test embedder: its identity
    # changes with the configured prefixes exactly as a real model's does.
    (hash_indexed / "clawmem.toml").write_text(
        'query_prefix = "search: "\ndocument_prefix = "note: "\n'
    )
    res = recall(hash_indexed, "DEC-0054", "--no-sync")
    assert res["vectors"]["state"] == "mismatch" and res["ranking"] == "lexical-bm25"
    r = json.loads(cli("-w", str(hash_indexed), "index", "--json").out)
    # A new vector space: nothing is reused from the old one, everything is embedded again.
    assert r["vectors_reused"] == 0 and r["vectors_embedded"] > 0 and r["vectors_pending"] == 0
    assert r["vectors_embedded"] == r["units"] or r["vectors_embedded"] > 100  # a new vector space
    assert recall(hash_indexed, "a feline resting on a rug")["vectors"]["state"] == "ok"
    con = sqlite3.connect(hash_indexed / ".memory" / "index.sqlite")
    keys = con.execute(
        "select embedder, count(*) from embedding_cache group by embedder"
    ).fetchall()
    con.close()
    assert len(keys) == 1 and keys[0][1] > 100  # the old model's vectors wait in the cache
    (hash_indexed / "clawmem.toml").unlink()  # and switching back embeds nothing
    back = json.loads(cli("-w", str(hash_indexed), "index", "--json").out)
    assert (
        back["vectors_embedded"] == 0
        and back["vectors_reused"] > 100
        and back["vectors_pending"] == 0
    )


def test_rebuild_without_a_model_keeps_the_vectors(hash_indexed, monkeypatch):
    monkeypatch.setenv("CLAWMEM_VECTORS", "0")
    r = json.loads(cli("-w", str(hash_indexed), "index", "--force", "--json").out)
    assert r["rebuilt"] and r["vectors_pending"] == 0 and r["vectors_reused"] == r["units"]
    monkeypatch.delenv("CLAWMEM_VECTORS")
    again = json.loads(cli("-w", str(hash_indexed), "index", "--json").out)
    assert again["vectors_embedded"] == 0


def test_numpy_fallback_when_sqlite_vec_is_off(tmp_path, monkeypatch, shared_model):
    from .conftest import FIXTURE

    ws = tmp_path / "small"
    for rel in (
        "MEMORY.md",
        "memory/2025-11-17.md",
        "memory/2025-11-20.md",
        "bank/entities/Kenji.md",
    ):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURE / rel, ws / rel)
    assert cli("-w", str(ws), "index").code == 0  # with sqlite-vec
    monkeypatch.setenv("CLAWMEM_DISABLE_SQLITE_VEC", "1")
    r = cli("-w", str(ws), "index", "--json")
    assert r.code == 0, r.err
    rep = json.loads(r.out)
    assert rep["rebuilt"] and "vectors were stored for sqlite-vec" in rep["rebuild_reason"]
    assert rep["vectors_pending"] == 0
    res = recall(ws, "a feline resting on a rug", "-k", "3")
    assert any("NumPy" in d for d in res["degraded"])
    assert res["ranking"] == "rrf-v20"
    assert any("Miso" in (h.get("content") or h["snippet"]) for h in res["results"])
    st = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert (
        st["vectors"]["backend"] == "numpy"
        and "CLAWMEM_DISABLE_SQLITE_VEC" in st["vectors"]["fallback_reason"]
    )
    # and back: the plain vectors are carried into a new sqlite-vec index without re-embedding
    monkeypatch.delenv("CLAWMEM_DISABLE_SQLITE_VEC")
    back = json.loads(cli("-w", str(ws), "index", "--json").out)
    assert back["rebuilt"] and back["vectors_embedded"] == 0 and back["vectors_pending"] == 0


def test_missing_model_degrades_visibly(indexed, monkeypatch):
    monkeypatch.setenv("CLAWMEM_MODEL", "/nonexistent/model.gguf")
    res = recall(indexed, "a feline resting on a rug")
    assert res["vectors"]["state"] == "off"
    assert "/nonexistent/model.gguf" in res["vectors"]["reason"]
    assert res["ranking"] == "lexical-bm25"
    st = cli("-w", str(indexed), "status")
    assert "/nonexistent/model.gguf" in st.out


def test_corrupt_model_file_is_named(indexed, tmp_path, monkeypatch):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 100)
    monkeypatch.setenv("CLAWMEM_MODEL", str(bad))
    r = cli("-w", str(indexed), "index")
    assert r.code == 0  # lexical indexing still works
    assert "broken.gguf" in r.err


def test_filters_inside_vector_search(hash_indexed):
    res = recall(
        hash_indexed,
        "deployment plans",
        "--mode",
        "vector",
        "--since",
        "2025-11-20",
        "--until",
        "2025-11-21",
        "-k",
        "5",
    )
    assert len(res["results"]) == 5
    for h in res["results"]:  # recorded in the window, or a fact valid during it
        valid = (
            h.get("valid_from")
            and h["valid_from"] <= "2025-11-21"
            and (h["valid_to"] or "9") >= "2025-11-20"
        )
        assert "2025-11-20" <= h["timestamp"] <= "2025-11-21" or valid, h
    res = recall(hash_indexed, "deployment plans", "--mode", "vector", "--kind", "W", "-k", "5")
    assert all(h["kind"] == "W" for h in res["results"])
    res = recall(
        hash_indexed, "deployment plans", "--mode", "vector", "--entity", "Kenji", "-k", "5"
    )
    assert all(
        h["path"] == "bank/entities/Kenji.md" or "Kenji" in h.get("entities", [])
        for h in res["results"]
    )


def test_overlapping_results_are_deduplicated(hash_indexed):
    res = recall(hash_indexed, "payments-service double charge incident", "-k", "10")
    seen = []
    for h in res["results"]:
        for p, s, e in seen:
            assert not (p == h["path"] and not (h["end_line"] < s or h["start_line"] > e))
        seen.append((h["path"], h["start_line"], h["end_line"]))


def test_retain_is_recallable_semantically_at_once(indexed):
    r = cli(
        "-w",
        str(indexed),
        "retain",
        "Peter adopted a small grey kitten named Pixel",
        "--entity",
        "Peter",
    )
    assert r.code == 0, r.err
    res = recall(indexed, "new pet cat", "--mode", "vector", "-k", "3", "--no-sync")
    assert any("Pixel" in (h.get("content") or h["snippet"]) for h in res["results"])


def _small_workspace(tmp_path, files):
    from .conftest import FIXTURE

    ws = tmp_path / "small"
    for rel in files:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURE / rel, ws / rel)
    return ws


def test_ctrl_c_keeps_committed_vectors_and_next_run_resumes(tmp_path, shared_model):
    import os
    import signal
    import subprocess
    import sys
    import time

    ws = _small_workspace(
        tmp_path,
        ["MEMORY.md", "memory/2025-11-12.md", "memory/2025-11-18.md", "memory/2025-11-24.md"],
    )
    # Enough embedding left after the first commits that the interrupt lands mid-embedding even
    # on a fast, idle machine (the fixture's 20 short units were all embedded in ~0.5 s, before
    # the signal): 40 more distinct units of ~150 tokens each, 4 a commit, and a tight poll.
    words = "supplier crate invoice harbour ledger forklift pallet customs".split()
    (ws / "memory" / "2025-11-25.md").write_text(
        "# 2025-11-25\n\n"
        + "".join(
            "- "
            + " ".join(f"{words[(i + j) % len(words)]} {i * 97 + j}" for j in range(30))
            + ".\n\n"
            for i in range(40)
        )
    )
    env = {**os.environ, "CLAWMEM_EMBED_BATCH": "4"}
    first = json.loads(cli("-w", str(ws), "index", "--no-embed", "--json").out)
    total = first["vectors_pending"]
    assert total >= 60
    # A child inherits an ignored SIGINT (and Python then leaves it ignored, as it must for a
    # `nohup clawmem index &`); a test runner's worker process may be ignoring it. The child gets
    # the disposition a terminal gives it: whatever handler is installed here becomes the default
    # across exec.
    parent_sigint = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "clawmem", "-w", str(ws), "index"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        signal.signal(signal.SIGINT, parent_sigint)
    db = ws / ".memory" / "index.sqlite"
    deadline = time.time() + 120
    done = 0
    while time.time() < deadline and done < 8:
        time.sleep(0.02)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        done = con.execute("select count(*) from chunks where embedded = 1").fetchone()[0]
        con.close()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (err, out[-300:], done, total, parent_sigint)
    assert "interrupted" in err
    import sqlean  # the stdlib's SQLite 3.40 misreports WITHOUT ROWID tables written by 3.50

    con = sqlean.connect(db)
    kept = con.execute("select count(*) from chunks where embedded = 1").fetchone()[0]
    assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
    con.close()
    assert 8 <= kept < total
    again = json.loads(cli("-w", str(ws), "index", "--json").out)
    assert again["vectors_embedded"] == total - kept and again["vectors_pending"] == 0


def test_cache_keeps_removed_texts_within_its_cap(tmp_path, monkeypatch, hash_model):
    ws = _small_workspace(
        tmp_path, ["memory/2025-11-17.md", "memory/2025-11-20.md", "memory/2025-11-21.md"]
    )
    assert cli("-w", str(ws), "index").code == 0
    moved = (ws / "memory" / "2025-11-21.md").read_bytes()
    (ws / "memory" / "2025-11-21.md").unlink()
    monkeypatch.setenv("CLAWMEM_CACHE_MAX_ENTRIES", "3")
    r = json.loads(cli("-w", str(ws), "index", "--json").out)
    assert r["files_removed"] == 1
    st = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert (
        st["vectors"]["cache_entries"] == 3
    )  # orphans kept for reuse, but never more than the cap
    monkeypatch.delenv("CLAWMEM_CACHE_MAX_ENTRIES")
    (ws / "memory" / "2025-11-21.md").write_bytes(moved)  # an undo
    r = json.loads(cli("-w", str(ws), "index", "--json").out)
    assert r["vectors_reused"] >= 1 and r["vectors_reused"] + r["vectors_embedded"] == r["units"]


def test_decay_prefers_recent_notes_but_not_evergreen(hash_indexed, monkeypatch):
    from datetime import date

    mem = open_workspace(hash_indexed)
    plain = mem.recall("Peter WhatsApp replies", k=40, sync=False, today=date(2025, 12, 1))
    monkeypatch.setenv("CLAWMEM_DECAY_HALF_LIFE_DAYS", "3")
    decayed = open_workspace(hash_indexed).recall(
        "Peter WhatsApp replies", k=40, sync=False, today=date(2025, 12, 1)
    )
    days = lambda res: [h.day for h in res.hits if h.day]  # noqa: E731
    assert days(plain) != days(decayed)
    before = {h.citation: h for h in plain.hits}
    compared = {"evergreen": 0, "dated": 0}
    for h in decayed.hits:
        if h.citation not in before or h.via is not None or before[h.citation].via is not None:
            continue  # a note reached through a link scores by its place below the direct hits
        if h.day is None or h.path.startswith("bank/"):
            assert h.score == pytest.approx(before[h.citation].score)  # never decayed
            compared["evergreen"] += 1
        else:
            assert h.score < before[h.citation].score  # older than today: halved every 3 days
            compared["dated"] += 1
    assert compared["evergreen"] and compared["dated"]


def test_a_time_hinted_recall_embeds_the_question_once(hash_indexed):
    """A question naming a time is ranked twice (its window and everywhere), on one query vector."""
    from datetime import date

    from clawmem.embedders.testing import HashEmbedder

    calls = []

    class Counting(HashEmbedder):
        def embed_query(self, text):
            calls.append(text)
            return super().embed_query(text)

    mem = open_workspace(hash_indexed, environ={}, embedder=Counting())
    res = mem.recall("what happened with payments on Nov 12?", sync=False, today=date(2025, 12, 1))
    assert any("names a time" in n for n in res.notes)  # the two-search path was taken
    assert calls == ["what happened with payments on Nov 12?"]


def test_texts_back_in_the_index_leave_the_cache(tmp_path, hash_model):
    """A deleted file's vectors wait in the cache; once its text is back (an undo), they are
    adopted and leave the cache: nothing is stored twice."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    log = ws / "memory" / "2025-01-01.md"
    log.write_text("# Day\n\n- an alpaca in the garden\n\n- a heron by the pond\n")
    mem = open_workspace(ws, environ={})
    mem.index()
    text = log.read_text()
    log.unlink()
    mem.index()
    cached = mem.status().vectors["cache_entries"]
    assert cached >= 2
    log.write_text(text)
    report = mem.index()
    assert report.reused == cached and report.embedded == 0
    assert mem.status().vectors["cache_entries"] == 0


def test_vector_lookups_by_hash_search_the_hash_index(tmp_path, hash_model):
    """Every sync looks vectors up by text hash: once per cache entry (adopt_cached) and once per
    new unit (_cached_vector). Searched through chunks(embedded), where nearly every row is 1,
    each lookup walked the whole table (37-65 ms at 100k units, so a cache of a few hundred old
    texts made every sync take seconds). The plan is checked, not a time."""
    from clawmem.store import vectors as I

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-01-01.md").write_text("# Day\n\n- an alpaca\n\n- a heron\n")
    mem = open_workspace(ws, environ={})
    mem.index()
    idx = mem.open_index()
    try:
        for sql in (I.LIVE_BY_SHA, I.DROP_ADOPTED):
            plan = [r[3] for r in idx.conn.execute("EXPLAIN QUERY PLAN " + sql, ("x",))]
            assert any("chunks_sha" in step for step in plan), (sql, plan)
            assert not any("chunks_embedded" in step for step in plan), (sql, plan)
    finally:
        idx.close()


def test_a_fact_valid_in_the_window_is_found_by_the_vector_leg(hash_indexed):
    """Recorded on Nov 27, valid Nov 27-Dec 1: a window of Nov 30 finds it through the validity
    it states (the partial index chunks_valid), not through the day it was written."""
    res = recall(
        hash_indexed,
        "Marrakech trip",
        "--mode",
        "vector",
        "--since",
        "2025-11-30",
        "--until",
        "2025-11-30",
        "-k",
        "10",
    )
    assert any(
        h.get("valid_from") == "2025-11-27" and h["timestamp"] < "2025-11-30"
        for h in res["results"]
    ), res["results"]
    idx = open_workspace(hash_indexed).open_index()
    try:
        plan = idx.conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM chunks c WHERE c.valid_from IS NOT NULL "
            "AND c.valid_from <= ?",
            ("2025-11-30",),
        ).fetchall()
    finally:
        idx.close()
    assert any("chunks_valid" in r[3] for r in plan), plan
