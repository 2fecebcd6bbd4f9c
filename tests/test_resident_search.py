"""The resident embedder answers a large index's vector leg for processes that hold no vectors
(issue 43): from its own copy of the index's vectors, never stale, and a recall says when it
could not (sqlite-vec then scans every vector). A real resident embedder on the real model, a
real index built from the fixture workspace with the model's vectors."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from clawmem.recall import legs
from clawmem.store import vector_matrix
from clawmem.store.index import Filters, Index

from .conftest import copy_indexed
from .test_resident import QUERY, borrowed, rt, spec_of  # noqa: F401
from .test_watch import wait_until

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the resident embedder is tested on Linux"
)


@pytest.fixture
def model(model_cache):
    from clawmem.embedders.default import default_model_path

    return default_model_path(model_cache)


@pytest.fixture
def served(rt, indexed_template, tmp_path, model, model_cache):  # noqa: F811
    """A copy of the indexed fixture, the resident embedder borrowed on the real model, the
    index opened read-only as a one-shot recall opens it, and the workspace's API object."""
    import clawmem

    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    b = borrowed(spec_of(model))
    idx = Index.open(ws / ".memory" / "index.sqlite", readonly=True)
    env = {"CLAWMEM_RUNTIME_DIR": str(rt), "CLAWMEM_CACHE_DIR": str(model_cache)}
    try:
        yield ws, b, idx, clawmem.open_workspace(ws, environ=env)
    finally:
        idx.close()


def assert_same_ranking(got: list, want: list, tol: float = 1e-5) -> None:
    """The same hits in the same order, but for units whose cosines tie within ``tol``: the
    resident embedder's kernel and sqlite-vec's round differently in the last digits (the CPU's
    SIMD decides them), so two near-equal units may trade places, and nothing else may."""
    assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=tol)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.chunk_id != w.chunk_id:
            tied = [
                h.chunk_id for j, h in enumerate(want) if j != i and abs(h.score - w.score) <= tol
            ]
            assert tied, (i, g, w)  # a swap between units that are not tied is a real difference


def _answered(b, idx, qvec, limit):
    """The resident embedder's hits, once its copy of the index's vectors is loaded."""
    box = []

    def ready() -> bool:
        hits, why = b.search_vectors(idx.path, qvec, limit)
        box[:] = [hits, why]
        return hits is not None

    try:
        wait_until(ready, timeout=60)
    except AssertionError as exc:
        # Why not, and the embedder's log: an embedder that ended says why there.
        rt = Path(os.environ["CLAWMEM_RUNTIME_DIR"])
        logs = {f.name: f.read_text()[-2000:] for f in rt.glob("*.log")}
        raise AssertionError(f"no hits within 60 s: {box[1]}; logs: {logs}") from exc
    return box[0]


def test_the_resident_embedder_answers_the_vector_leg_as_vec0_does(served, monkeypatch):
    _, b, idx, mem = served
    qvec = b.embed_query(QUERY)
    assert b.query_by.startswith("resident embedder"), b.query_by
    by_vec0 = legs.stored_leg(idx, qvec, Filters(), 10)
    got = _answered(b, idx, qvec, 10)
    assert_same_ranking([SimpleNamespace(chunk_id=c, score=s) for c, s in got], by_vec0)

    # Through the vector leg, as a one-shot recall of a large index runs it.
    monkeypatch.setattr(vector_matrix, "REMOTE_MIN_ROWS", 1)
    idx.read_memo.clear()
    hits = legs.stored_leg(idx, qvec, Filters(), 10, remote=b)
    assert_same_ranking(hits, by_vec0)
    assert legs.vector_search(idx) == "the resident embedder's copy of the vectors"
    assert legs.vector_notes(idx) == []
    # `clawmem status` says which answers a one-shot recall of this (now "large") index.
    st = mem.status()
    assert st.vectors["one_shot_search"].startswith("the resident embedder's copy"), st.vectors
    # A filter is answered by vec0 (the copy is asked only for unfiltered searches).
    idx.read_memo.clear()
    legs.stored_leg(idx, qvec, Filters(since="2025-01-01"), 10, remote=b)
    assert legs.vector_search(idx) == "sqlite-vec"


def test_after_an_edit_the_resident_embedder_never_answers_from_the_old_vectors(
    served, monkeypatch
):
    ws, b, idx, mem = served
    text = "The ibex on the ridge watched us eat lunch."
    qvec = b.embed_query(text)
    before = _answered(b, idx, qvec, 5)
    note = ws / "memory" / "2025-11-20.md"
    note.write_text(note.read_text() + f"\n{text}\n")
    mem.index()
    # The first question after the change is not answered from the old copy: the resident
    # embedder says why, and the recall says so (vec0 answered it).
    monkeypatch.setattr(vector_matrix, "REMOTE_MIN_ROWS", 1)
    idx.read_memo.clear()
    hits, why = b.search_vectors(idx.path, qvec, 5)
    assert hits is None and why, (hits, why)
    stored = legs.stored_leg(idx, qvec, Filters(), 5, remote=b)
    notes = legs.vector_notes(idx)
    if notes:  # the reload may already be done by now
        assert "sqlite-vec scanned every vector" in notes[0]
    st = mem.status()
    assert st.vectors["one_shot_search"].startswith(("degraded:", "the resident")), st.vectors
    new_id = stored[0].chunk_id
    assert new_id not in [c for c, _ in before]
    after = _answered(b, idx, qvec, 5)
    assert after[0][0] == new_id


def test_a_recall_asks_the_resident_embedder_beside_its_lexical_leg(served, monkeypatch):
    """A hybrid recall of a large index in a process holding no vectors asks the resident
    embedder's copy on the vector leg's thread, while the lexical leg ranks on the caller's,
    and ranks with its answer as with vec0's."""
    import threading

    from clawmem.embedders.resident import client

    _, b, idx, mem = served
    qvec = b.embed_query(QUERY)
    by_vec0 = legs.stored_leg(idx, qvec, Filters(), 80)
    _answered(b, idx, qvec, 80)  # the resident embedder holds the copy now
    threads: list[str] = []
    ask = client.Borrowed.search_vectors

    def asked(self, *a, **k):
        threads.append(threading.current_thread().name)
        return ask(self, *a, **k)

    monkeypatch.setattr(client.Borrowed, "search_vectors", asked)
    monkeypatch.setattr(vector_matrix, "REMOTE_MIN_ROWS", 1)
    res = mem.recall(QUERY, mode="hybrid", sync=False)
    assert res.vectors["search"] == "the resident embedder's copy of the vectors", res.vectors
    assert threads == ["clawmem-vector-leg"], threads
    assert not [d for d in res.degraded if "vector" in d], res.degraded
    # The same vector leg as vec0's, asked on the caller's thread.
    idx.read_memo.clear()
    assert_same_ranking(legs.stored_leg(idx, qvec, Filters(), 80, remote=b), by_vec0)


def test_the_resident_embedder_lets_go_of_a_removed_workspaces_vectors(served, model):
    """The resident embedder held the copy of a removed workspace's vectors, and the deleted
    index file open (its disk space with it), until it went idle: nobody asks about a workspace
    that is gone, and only a question threw a stale copy away. It lets go within a second."""
    import os
    import shutil

    from clawmem.embedders.resident import client

    ws, b, idx, _ = served
    _answered(b, idx, b.embed_query(QUERY), 5)
    info = client.describe(spec_of(model))
    index = str(idx.path)
    assert [h["index"] for h in info["held_vectors"]] == [index], info
    fds = Path(f"/proc/{info['pid']}/fd")

    def open_files() -> list[str]:
        out = []
        for fd in fds.iterdir():
            try:
                out.append(os.readlink(fd))
            except OSError:
                pass  # closed meanwhile
        return [f for f in out if f.startswith(str(ws))]

    assert open_files()
    idx.close()
    shutil.rmtree(ws)
    wait_until(lambda: client.describe(spec_of(model))["held_vectors"] == [], timeout=5)
    assert open_files() == []
