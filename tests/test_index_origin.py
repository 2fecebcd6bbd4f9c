"""An index records where this machine built it (store/index.py, ``meta.origin``): a copy of the
file is foreign and rebuilt from the Markdown, taking nothing from it; clawmem's own rebuilds,
by either way of swapping, are never taken for foreign. Real files, the real CLI in-process, the
deterministic test embedder for the vectors."""

from __future__ import annotations

import json
import shutil

from clawmem.store.index import Index

from .conftest import cli


def index(ws) -> dict:
    r = cli("-w", str(ws), "index", "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_a_copied_workspace_is_rebuilt_once_and_its_vectors_are_not_reused(
    ws, tmp_path, hash_model
):
    first = index(ws)
    assert first["rebuilt"] and first["vectors_embedded"] > 0
    again = index(ws)  # built by renaming the first file into place: its own
    assert not again["rebuilt"], again
    forced = cli(
        "-w", str(ws), "index", "--force", "--json"
    )  # swapped by a copy into the live file
    assert forced.code == 0 and json.loads(forced.out)["vectors_reused"] > 0, forced.out
    assert not index(ws)["rebuilt"]

    copy = tmp_path / "copy"
    shutil.copytree(ws, copy)  # the Markdown's mtimes and the index's hashes as they were
    idx = Index.open(copy / ".memory" / "index.sqlite", readonly=True)
    assert idx.foreign()
    idx.close()
    st = cli("-w", str(copy), "status", "--json")
    assert "came from elsewhere" in json.loads(st.out)["state"], st.out
    r = index(copy)
    assert r["rebuilt"] and "came from elsewhere" in r["rebuild_reason"], r
    assert r["vectors_reused"] == 0 and r["vectors_embedded"] == first["vectors_embedded"], r
    assert not index(copy)["rebuilt"]
    # A leftover rebuild that came with a workspace is no source of vectors either (one that a
    # kill left here records itself, and is mined).
    other = tmp_path / "other"
    shutil.copytree(ws, other, ignore=shutil.ignore_patterns(".memory"))
    (other / ".memory").mkdir()
    shutil.copy(ws / ".memory" / "index.sqlite", other / ".memory" / "index.sqlite.rebuild-99999")
    r = index(other)
    assert r["vectors_reused"] == 0 and r["vectors_embedded"] == first["vectors_embedded"], r
    assert not (other / ".memory" / "index.sqlite.rebuild-99999").exists()
