"""What an unlucky user meets: a log the index skips, an entity name no file system takes, a full
disk on the first index, a binary file named ``.md``. Each is a clear error or handled, never a
silent wrong result or a crash."""

from __future__ import annotations

import json

import pytest

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")

DAY = "2031-01-01"


# ---------------------------------------------------------------------------- retain says stored
# only when the fact will be recallable


def test_retain_refuses_a_log_the_index_skips_for_a_nul_byte(ws):
    log = ws / "memory" / f"{DAY}.md"
    log.write_bytes(b"# notes\n\x00 pasted from a binary\n")
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY)
    assert r.code == 7, r.err
    assert "not stored" in r.err and "binary content (NUL bytes)" in r.err
    assert "not be recallable" in r.err
    assert log.read_bytes() == b"# notes\n\x00 pasted from a binary\n"


def test_retain_refuses_a_log_that_would_be_over_max_file_bytes(ws):
    (ws / "clawmem.toml").write_text("max_file_bytes = 200\n", encoding="utf-8")
    log = ws / "memory" / f"{DAY}.md"
    log.write_text("# notes\n\n" + "a long line of notes\n" * 9, encoding="utf-8")
    before = log.read_bytes()
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY)
    assert r.code == 7 and "would be over max_file_bytes=200" in r.err, r.err
    assert log.read_bytes() == before
    # Under the limit the same fact is stored, and recallable.
    (ws / "clawmem.toml").write_text("max_file_bytes = 5000\n", encoding="utf-8")
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY, "--json")
    assert r.code == 0 and json.loads(r.out)["stored"], r.err
    found = json.loads(cli("-w", str(ws), "recall", "deploy Friday", "--json").out)
    assert found["results"][0]["source"].startswith(f"memory/{DAY}.md#L")
