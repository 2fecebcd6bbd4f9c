"""The JSON that scripts read is pinned byte for byte (issue 42): ``recall --json`` and
``status --json`` on the fixture workspace, indexed with the deterministic test embedder. Every
result's JSON form follows one rule (``text/records.py``); a change of a key, of their order or
of a value's form shows here as a diff of the pinned file.

What a run cannot repeat is set to a fixed value before comparing: the workspace's folder, the
clock (``seconds``, ``last_sync_at``) and the size of the SQLite file. The recall is lexical:
its scores are SQLite's BM25 and the fusion's arithmetic, not digits a CPU's vector kernels
decide. To pin a deliberate change: ``PIN_JSON=1 pytest tests/test_json_pinned.py``, then
read the diff of ``tests/data/pinned/`` before committing it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import cli

PINNED = Path(__file__).parent / "data" / "pinned"
QUERIES = (
    "What does DEC-0054 decide?",
    "How long should messages to Peter be?",
    "Which trips has Peter taken?",
    "決済サービスの東京リージョンへの本番デプロイはいつ完了しましたか？",
)
# What differs from run to run, written as it is pinned.
VOLATILE = re.compile(r'"(seconds|last_sync_at|index_bytes)": [0-9.e+-]+')


def _stable(out: str, ws: Path) -> str:
    """``out`` as the program wrote it, but for the volatile values and the workspace's folder."""
    out = VOLATILE.sub(lambda m: f'"{m.group(1)}": 0', out)
    return out.replace(json.dumps(str(ws))[1:-1], "<workspace>")


def _check(name: str, text: str) -> None:
    path = PINNED / name
    if os.environ.get("PIN_JSON"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no pinned {name}: run with PIN_JSON=1 once"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed (PIN_JSON=1 re-pins it)"


@pytest.mark.parametrize("i", range(len(QUERIES)))
def test_recall_json_is_pinned(hash_indexed: Path, i: int):
    ws = hash_indexed
    r = cli("-w", str(ws), "recall", QUERIES[i], "--mode", "lexical", "--json", "--explain")
    assert r.code == 0, r.err
    assert json.loads(r.out)["results"], "a pinned recall that finds nothing pins little"
    _check(f"recall-{i}.json", _stable(r.out, ws))


def test_status_json_is_pinned(hash_indexed: Path, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("CLAWMEM_RESIDENT_EMBEDDER", "0")
    # No model file (the run's cache holds the real one once a test converted it): the test
    # embedder stands in for it, whichever tests ran before.
    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(tmp_path / "no-model"))
    r = cli("-w", str(hash_indexed), "status", "--json")
    assert r.code == 0, r.err
    _check("status.json", _stable(r.out, hash_indexed))
