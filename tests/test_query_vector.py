"""A recall in a fresh process asks a running watcher for its query's vector instead of loading
the model itself (~1.5 s for the default model): the watcher's model, the same file, gives the
same vector, and a watcher that cannot answer only costs the recall its own model load.

The watcher is a real `python -m clawmem watch` process and the recall a real CLI process, both
on the real default model (what is compared is the model's vector, so it must be the model).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from clawmem import open_workspace
from clawmem.embedders.resident import protocol
from clawmem.embedders.testing import HashEmbedder
from clawmem.ingest import journal

from .conftest import cli_subprocess, copy_indexed
from .test_watch import daemons, stop_process, wait_until  # noqa: F401 - daemons is a fixture

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the watcher's socket serves Linux only"
)

QUERY = "Who is Peter and where did we have lunch?"


def recall_json(ws: Path, *extra: str, env: dict | None = None) -> dict:
    r = cli_subprocess("-w", str(ws), "recall", QUERY, "--json", *extra, env=env)
    assert r.code == 0, r.err
    return json.loads(r.out)


def ranked(res: dict) -> list[tuple[str, int, int, float]]:
    return [
        (h["path"], h["start_line"], h["end_line"], round(h["score"], 6)) for h in res["results"]
    ]


def test_a_cold_recall_gets_its_query_vector_from_the_watcher(indexed_template, tmp_path, daemons):  # noqa: F811
    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    mem = open_workspace(ws)
    key = mem.open_index().get_meta("embedder")
    d = daemons(ws, "--debounce-ms", "100")
    # The watcher loads its model after it starts; until then it says it has none.
    wait_until(lambda: protocol.ask_vector(mem.memory_dir, key, "x")[0] is not None, timeout=60)

    served = recall_json(ws)
    assert served["vectors"]["query_by"] == "watcher"
    assert served["vectors"]["state"] == "ok" and served["ranking"].startswith("rrf")
    assert served["index"]["fresh_by"] == "watcher"

    # A stopped watcher answers nothing: the recall asks the user's resident embedder, or with
    # that turned off loads the model itself; the vector (and so every hit and score) is the
    # same each way.
    stop_process(d.proc.pid)
    try:
        own = recall_json(ws, env={"CLAWMEM_RESIDENT_EMBEDDER": "0"})
        # (The NumPy query path off: this is about the resident embedder's vector.)
        shared = recall_json(ws, env={"CLAWMEM_QUERY_PATH": "0"})
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    assert own["vectors"]["query_by"].startswith("this process (the watcher did not answer")
    assert own["vectors"]["state"] == "ok" and not own["degraded"]
    assert ranked(own) == ranked(served) and ranked(served)
    assert shared["vectors"]["query_by"].startswith("resident embedder (pid ")
    assert ranked(shared) == ranked(served)

    # The watcher's vector is the model's vector for the query, bit for bit.
    raw, why = protocol.ask_vector(mem.memory_dir, key, QUERY)
    assert raw is not None, why
    local = mem.embedder().embed_query(QUERY)
    assert np.array_equal(np.frombuffer(raw, dtype="<f4"), local)


def test_a_recall_configured_for_another_model_does_not_take_the_watchers_vector(
    indexed_template,
    tmp_path,
    daemons,  # noqa: F811
):
    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    mem = open_workspace(ws)
    key = mem.open_index().get_meta("embedder")
    daemons(ws, "--debounce-ms", "100")
    wait_until(lambda: protocol.ask_vector(mem.memory_dir, key, "x")[0] is not None, timeout=60)
    # A query prefix makes another vector space: the index's vectors do not match this model,
    # and the recall says so, as it does without a watcher, instead of using the watcher's.
    r = cli_subprocess(
        "-w", str(ws), "recall", QUERY, "--json", env={"CLAWMEM_QUERY_PREFIX": "search: "}
    )
    res = json.loads(r.out)
    assert res["vectors"]["state"] == "mismatch", res["vectors"]
    assert "query_by" not in res["vectors"]


def test_the_socket_answers_only_for_its_own_model_and_keeps_vouching(tmp_path):
    """Plumbing, in-process: the journal's socket with the test embedder."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    mem = open_workspace(ws, environ={})
    mem.prepare_memory_dir()
    emb = HashEmbedder()
    j = journal.Journal(mem.root, mem.memory_dir, mem.cfg, embedder=lambda: emb)
    j.start()
    try:
        raw, why = protocol.ask_vector(mem.memory_dir, emb.identity.key(), "where is the ibex")
        assert why == "" and raw is not None
        assert np.array_equal(np.frombuffer(raw, dtype="<f4"), emb.embed_query("where is the ibex"))

        raw, why = protocol.ask_vector(mem.memory_dir, "llama.cpp:other:0:384:x", "ibex")
        assert raw is None and f"the watcher's model is {emb.identity.key()}" in why

        too_long = "ibex " * 2000
        raw, why = protocol.ask_vector(mem.memory_dir, emb.identity.key(), too_long)
        assert raw is None and "too long" in why

        # A garbled request gets an answer, and the journal goes on answering freshness.
        reply, why = protocol.exchange(
            mem.memory_dir / protocol.WATCHER_SOCKET, b"{not json", 1.0, who="watcher"
        )
        assert reply == {"why": "the request was unreadable"}
        j.caught_up(j.begin())
        assert journal.ask(mem.memory_dir, journal.scan_key(mem.root, mem.cfg)) == (True, "")
    finally:
        j.close()

    # No model in the watcher (vectors off there): a clear why, no vector.
    j = journal.Journal(mem.root, mem.memory_dir, mem.cfg, embedder=lambda: None)
    j.start()
    try:
        raw, why = protocol.ask_vector(mem.memory_dir, emb.identity.key(), "ibex")
        assert raw is None and "no embedding model" in why
    finally:
        j.close()
