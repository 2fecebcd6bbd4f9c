"""`clawmem index` loads the model only when there is text to embed (~1.5 s for the default
model): a sync that changed nothing (a pre-commit hook, cron, `index` out of habit) and a sync
without embedding (the git hook) read the vectors' identity from the model file instead. With
text to embed, the Markdown is synced first and the units embedded once the model is loaded.

On the real default model: what is tested is whether that model is loaded and used.
"""

from __future__ import annotations

import json
from pathlib import Path

from clawmem import open_workspace

from .conftest import cli_subprocess, copy_indexed


def copy(indexed_template: Path, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    return ws


def append(ws: Path, text: str) -> None:
    with open(ws / "memory" / "2025-11-04.md", "a", encoding="utf-8") as fh:
        fh.write(f"\n## Late note\n\n{text}\n")


def test_an_index_with_nothing_to_embed_never_loads_the_model(indexed_template, tmp_path):
    ws = copy(indexed_template, tmp_path)
    mem = open_workspace(ws)
    report = mem.index()
    assert (report.files_indexed, report.embedded, report.pending) == (0, 0, 0)
    assert mem.indexer.supply.loaded is None
    assert mem.indexer.supply.error is None

    # The git hook's sync (no embedding) of an edited file: synced, pending, still no model.
    append(ws, "Zoltan moved the backup window to 03:00 on castle-01.")
    report = mem.index(embed=False)
    assert report.files_indexed == 1 and report.pending >= 1
    assert mem.indexer.supply.loaded is None


def test_an_index_with_a_few_units_to_embed_embeds_them_in_the_resident_embedder(
    indexed_template, tmp_path
):
    ws = copy(indexed_template, tmp_path)
    append(ws, "Zoltan moved the backup window to 03:00 on castle-01.")
    mem = open_workspace(ws)
    report = mem.index()
    assert report.files_indexed == 1 and report.embedded >= 1 and report.pending == 0
    assert mem.indexer.supply.loaded is None  # the user's resident embedder embedded them
    hits = mem.recall("When is the backup window on castle-01?", mode="vector", k=3).hits
    assert any("Zoltan" in h.text for h in hits)


def test_an_index_with_text_to_embed_loads_the_model_and_embeds_it(
    indexed_template, tmp_path, monkeypatch
):
    monkeypatch.setenv("CLAWMEM_RESIDENT_EMBEDDER", "0")
    ws = copy(indexed_template, tmp_path)
    append(ws, "Zoltan moved the backup window to 03:00 on castle-01.")
    mem = open_workspace(ws)
    report = mem.index()
    assert report.files_indexed == 1 and report.embedded >= 1 and report.pending == 0
    emb = mem.indexer.supply.loaded
    assert emb is not None
    idx = mem.indexer.open_for_read()
    assert idx.get_meta("embedder") == emb.identity.key()
    mem.indexer.release(idx)
    hits = mem.recall("When is the backup window on castle-01?", mode="vector", k=3).hits
    assert any("Zoltan" in h.text for h in hits)


def test_the_cli_reports_the_deferred_embedding(indexed_template, tmp_path):
    ws = copy(indexed_template, tmp_path)
    r = cli_subprocess("-w", str(ws), "index", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["vectors_embedded"] == 0
    append(ws, "Zoltan moved the backup window to 03:00 on castle-01.")
    r = cli_subprocess("-w", str(ws), "index", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["files_indexed"] == 1 and data["vectors_embedded"] >= 1
    assert data["vectors_pending"] == 0 and "vectors_off_reason" not in data


def test_the_loaded_models_identity_wins_over_the_files_metadata(ws, hash_model, monkeypatch):
    """Should a model file's metadata promise another vector space than the loaded model gives,
    the units are embedded in the model's space, not left pending under the promised one."""
    import clawmem.embedders.model_choice
    from clawmem.embedders.testing import HashEmbedder

    promised = HashEmbedder(query_prefix="promised: ").identity
    monkeypatch.setattr(
        clawmem.embedders.model_choice, "configured_identity", lambda root, cfg: promised
    )
    mem = open_workspace(ws, environ={})
    report = mem.index()
    assert report.embedded > 0 and report.pending == 0
    idx = mem.indexer.open_for_read()
    assert idx.get_meta("embedder") == mem.indexer.supply.loaded.identity.key()
    assert idx.get_meta("embedder") != promised.key()
    mem.indexer.release(idx)
