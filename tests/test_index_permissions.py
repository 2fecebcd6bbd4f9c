"""An index folder another user can write is not read: that user could plant an index.

`.memory/` or `index.sqlite` (or its WAL) writable by every user, or a group with other members,
or owned by someone else: an index there may hold texts no Markdown file says, under real
citations, with its hashes matching the Markdown and its recorded origin forged (the planter can
read the inode of the file they made). Every command refuses it with one line naming the file and
the fix; following the fix works. Each case runs the CLI as a user does, in a fresh process.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from .conftest import FIXTURE, cli_subprocess

ENV = {"CLAWMEM_VECTORS": "0"}


@pytest.fixture
def indexed(tmp_path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws, ignore=shutil.ignore_patterns(".memory"))
    os.chmod(ws, 0o755)
    assert cli_subprocess("-w", str(ws), "index", env=ENV).code == 0
    return ws


def refused(ws: Path, culprit: Path, why: str, fix: str) -> None:
    for args in (("status",), ("recall", "castle-01", "--json")):
        r = cli_subprocess("-w", str(ws), *args, env=ENV)
        assert r.code == 3, (args, r.code, r.err)
        assert r.out == "" and "Traceback" not in r.err
        first = r.err.splitlines()[0]
        assert first.startswith(f"clawmem: error: {culprit}: {why}"), r.err
        assert fix in r.err, r.err


def recalls(ws: Path) -> None:
    r = cli_subprocess("-w", str(ws), "recall", "castle-01", "--json", env=ENV)
    assert r.code == 0, r.err
    assert json.loads(r.out)["results"]


def test_an_index_folder_every_user_can_write_is_refused(indexed):
    memory = indexed / ".memory"
    memory.chmod(0o777)
    refused(indexed, memory, "is writable by every user (mode 0777)", f"chmod go-w {memory}")
    # The fix, as the hint gives it.
    memory.chmod(0o755)
    for p in memory.glob("index.sqlite*"):
        p.unlink()
    assert cli_subprocess("-w", str(indexed), "index", env=ENV).code == 0
    recalls(indexed)


def test_an_index_file_every_user_can_write_is_refused(indexed):
    index = indexed / ".memory" / "index.sqlite"
    index.chmod(0o666)
    refused(indexed, index, "is writable by every user (mode 0666)", f"rm -f {index} ")
    index.unlink()
    recalls(indexed)  # rebuilt from the Markdown, as a file of the user's own


def test_a_planted_wal_is_refused_before_sqlite_replays_it(indexed):
    wal = indexed / ".memory" / "index.sqlite-wal"
    wal.write_bytes(b"")
    wal.chmod(0o646)
    refused(indexed, wal, "is writable by every user (mode 0646)", "clawmem index")


def test_a_workspace_others_can_write_anyway_is_not_refused(indexed):
    """On a disk without Unix permissions (/mnt/c under WSL: every file 0777) the notes are as
    exposed as the index: refusing the index would protect nothing and stop everything."""
    indexed.chmod(0o777)
    (indexed / ".memory").chmod(0o777)
    (indexed / ".memory" / "index.sqlite").chmod(0o666)
    recalls(indexed)


def test_a_new_index_folder_is_the_users_alone_whatever_the_umask(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws, ignore=shutil.ignore_patterns(".memory"))
    os.chmod(ws, 0o755)
    old = os.umask(0o002)
    try:
        assert cli_subprocess("-w", str(ws), "index", env=ENV).code == 0
    finally:
        os.umask(old)
    assert (ws / ".memory").stat().st_mode & 0o022 == 0
    assert (ws / ".memory" / "index.sqlite").stat().st_mode & 0o022 == 0
    recalls(ws)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_an_index_file_another_user_owns_is_refused(indexed):
    index = indexed / ".memory" / "index.sqlite"
    os.chown(index, 54321, 54321)
    refused(indexed, index, "belongs to user id 54321", "clawmem index")
