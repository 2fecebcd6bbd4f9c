"""Correct and forget with the real model (issue 41): hybrid recall, a rebuild and a git merge,
as a user runs them. The lexical plumbing of the same verbs is in tests/test_carry.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import cli
from .test_carry import LINE, forget_here_append_there, two_clones

# LINE is "- W @Peter @Andy: Peter booked flights to Marrakech …".

OLD = "memory/2025-11-27.md#L26-L26"  # "- W @Peter: Currently in Marrakech (Nov 27–Dec 1, 2025) …"


def js(ws: Path, *args: str) -> dict:
    r = cli("-w", str(ws), *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def cites(res: dict) -> list[str]:
    return [h["citation"] for h in res["results"]]


def test_a_correction_is_recalled_first_and_as_of_shows_the_old(indexed):
    new = js(indexed, "correct", OLD, "Peter is in Essaouira until Dec 1, 2025, after Marrakech.")
    now = js(indexed, "recall", "where is Peter staying at the end of November?", "-k", "6")
    assert now["mode"] == "hybrid" and now["vectors"]["state"] != "off"
    got = cites(now)
    if OLD in got:  # the old fact, when shown, comes right after its correction
        assert got.index(new["source"]) == got.index(OLD) - 1
    else:
        assert new["source"] in got
    before = js(indexed, "recall", "where is Peter?", "--as-of", "2025-11-28", "-k", "6")
    assert new["source"] not in cites(before)


def test_forgotten_stays_out_of_a_hybrid_recall_and_a_rebuild(indexed):
    query = "when did Peter book the flights to Marrakech?"
    assert LINE in cites(js(indexed, "recall", query, "-k", "6"))
    path = indexed / "memory/2025-11-16.md"
    raw = path.read_text(encoding="utf-8").splitlines(keepends=True)[11]
    done = js(indexed, "forget", LINE, "--yes")
    assert done["applied"] and done["vectors_dropped"] >= 1
    assert LINE not in cites(js(indexed, "recall", query, "-k", "20"))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[11] = raw  # pasted back by hand: a rebuild still leaves it out
    path.write_text("".join(lines), encoding="utf-8")
    assert cli("-w", str(indexed), "index", "--force").code == 0
    res = js(indexed, "recall", query, "-k", "20")
    assert all("booked flights" not in h["snippet"] for h in res["results"])
    page = (indexed / "bank/entities/Andy.md").read_text(encoding="utf-8")
    assert cli("-w", str(indexed), "reflect").code == 0
    assert "booked flights" not in (indexed / "bank/entities/Andy.md").read_text(encoding="utf-8")
    assert "booked flights" not in page


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_forget_across_a_git_merge_with_the_real_model(indexed, tmp_path):
    ws = indexed
    other = two_clones(ws, tmp_path)
    # The clone starts from a copy of this index, as a copied workspace would: not built there,
    # so its first read rebuilds it from the Markdown (docs/storage.md, "An index from elsewhere").
    (other / ".memory").mkdir(exist_ok=True)
    shutil.copy(ws / ".memory/index.sqlite", other / ".memory/index.sqlite")
    text = forget_here_append_there(ws, other, "- the hotel shuttle leaves at 9")
    assert "booked flights" not in text and "hotel shuttle" in text
    res = js(other, "recall", "when did Peter book the flights to Marrakech?", "-k", "20")
    assert res["vectors"]["state"] != "off"
    assert all("booked flights" not in h["snippet"] for h in res["results"])
