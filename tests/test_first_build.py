"""Recall while another process builds the first index: lexical results as soon as the build has
swapped its database in, without waiting for the vectors (issue 11)."""

import json
import os
import shutil
import threading
import time

from clawmem.files.locking import try_write_lock

from .conftest import FIXTURE, adopt_index, cli


def test_recall_waits_for_lexical_rows_not_for_vectors(tmp_path, lexical):
    built = tmp_path / "built"
    shutil.copytree(FIXTURE, built)
    assert cli("-w", str(built), "index").code == 0
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    lock = try_write_lock(ws / ".memory")  # "clawmem index" is running in another process
    assert lock is not None

    def swap_in():  # ... and swaps its first database in a moment later, then embeds on
        time.sleep(0.5)
        tmp = ws / ".memory" / "index.sqlite.new"
        shutil.copy(built / ".memory" / "index.sqlite", tmp)
        os.replace(adopt_index(tmp), ws / ".memory" / "index.sqlite")  # as sync.swap_in does

    t = threading.Thread(target=swap_in)
    t.start()
    try:
        started = time.monotonic()
        r = cli("-w", str(ws), "recall", "DEC-0054", "--json")
        waited = time.monotonic() - started
    finally:
        t.join()
        lock.release()
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert res["results"] and waited < 30
    assert any("another process is building the index" in n for n in res.get("notes", []))
