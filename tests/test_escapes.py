"""Nothing is read or written outside the workspace and the configured sessions folders, through
any link, by any command or MCP tool; what the scan leaves out, ``get`` refuses too.

Each case was found by trying it: ``retain --date`` through ``memory/<date>.md`` linked to a
``.netrc`` copied the password into the workspace and the index (``memory_get`` served it back);
with ``memory/`` itself a link out, retain wrote outside and reported success; ``get`` read
transcripts from hidden and linked folders the scan skips."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from clawmem.errors import WorkspaceError
from clawmem.markdown.workspace import writable_path

from .conftest import REPO, approve, cli

pytestmark = pytest.mark.usefixtures("lexical")

DAY = "2031-01-01"
NETRC = "machine example.org login peter password zebra-staple-91\n"
SESSIONS = REPO / "fixtures" / "sessions" / "openclaw"


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / ".netrc").write_text(NETRC, encoding="utf-8")
    return folder


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_retain_refuses_a_daily_log_linked_out_of_the_workspace(ws, outside):
    link = ws / "memory" / f"{DAY}.md"
    link.symlink_to(outside / ".netrc")
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY)
    assert r.code == 3, r.err
    assert f"memory/{DAY}.md is a symbolic link that leaves the workspace" in r.err
    assert (outside / ".netrc").read_text(encoding="utf-8") == NETRC
    assert link.is_symlink()  # not replaced by a copy of what it pointed at
    assert cli("-w", str(ws), "index").code == 0
    assert b"zebra-staple" not in _all_bytes(ws / ".memory")
    got = cli("-w", str(ws), "get", f"memory/{DAY}.md")
    assert got.code != 0 and "zebra-staple" not in got.out


def test_retain_refuses_a_memory_folder_linked_out_of_the_workspace(ws, outside):
    shutil.move(ws / "memory", outside / "memory")
    (ws / "memory").symlink_to(outside / "memory")
    before = _all_bytes(outside)
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY)
    assert r.code == 3 and "memory is a symbolic link that leaves the workspace" in r.err
    assert _all_bytes(outside) == before
    assert not (outside / "memory" / f"{DAY}.md").exists()


def test_a_memory_folder_linked_inside_the_workspace_is_written_where_it_lives(ws):
    """The scan walks a top-level folder linked inside the workspace; retain writes there."""
    shutil.move(ws / "memory", ws / "journal")
    (ws / "memory").symlink_to(ws / "journal")
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY, "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["source"] == f"memory/{DAY}.md#L4-L4"
    assert "the deploy is on Friday" in (ws / "journal" / f"{DAY}.md").read_text(encoding="utf-8")


def test_a_linked_file_inside_the_workspace_is_never_written_through(ws):
    target = ws / "memory" / "2025-11-27.md"
    (ws / "memory" / f"{DAY}.md").symlink_to(target)
    before = target.read_bytes()
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY)
    assert r.code == 3 and "is a symbolic link that is not followed" in r.err
    assert target.read_bytes() == before


def test_writable_path_is_the_one_rule(ws, outside):
    assert writable_path(ws, "bank/entities/Peter.md") == ws / "bank" / "entities" / "Peter.md"
    (ws / "bank" / "entities" / "Out.md").symlink_to(outside / ".netrc")
    (ws / "memory" / "deep").symlink_to(ws / "bank", target_is_directory=True)
    for rel in ("bank/entities/Out.md", "memory/deep/x.md"):
        with pytest.raises(WorkspaceError):
            writable_path(ws, rel)


def test_reflect_writes_no_page_through_a_link_out(ws, outside):
    shutil.move(ws / "bank" / "entities", outside / "entities")
    (ws / "bank" / "entities").symlink_to(outside / "entities", target_is_directory=True)
    before = _all_bytes(outside)
    r = cli("-w", str(ws), "reflect", "--json")
    assert r.code == 0, r.err
    warnings = json.loads(r.out)["warnings"]
    assert any("bank/entities is a symbolic link that leaves the workspace" in w for w in warnings)
    assert _all_bytes(outside) == before


def test_mcp_retain_refuses_a_log_linked_out(ws, outside, tmp_path):
    (ws / "memory" / f"{DAY}.md").symlink_to(outside / ".netrc")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "clawmem", "mcp", "-w", str(ws)],
        # The SDK passes a safe subset of the environment on: clawmem's settings go explicitly.
        env={k: v for k, v in os.environ.items() if k.startswith("CLAWMEM_") or k == "PYTHONPATH"},
    )

    async def main():
        with open(tmp_path / "err.log", "w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    kept = await s.call_tool("memory_retain", {"text": "x is y", "date": DAY})
                    got = await s.call_tool("memory_get", {"path": f"memory/{DAY}.md"})
                    return kept, got

    kept, got = anyio.run(main)
    assert kept.is_error and "symbolic link that leaves the workspace" in kept.content[0].text
    assert got.is_error and "zebra-staple" not in got.content[0].text
    assert (outside / ".netrc").read_text(encoding="utf-8") == NETRC


@pytest.mark.parametrize("how", ["hidden", "linked folder", "linked file"])
def test_get_refuses_a_transcript_the_scan_skips(ws, tmp_path, how):
    folder = tmp_path / "transcripts"
    shutil.copytree(SESSIONS, folder)
    (ws / "clawmem.toml").write_text(f'[sessions]\npaths = ["{folder}"]\n', encoding="utf-8")
    approve(ws)
    name = next(SESSIONS.glob("*.jsonl")).name
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(SESSIONS / name, elsewhere / name)
    if how == "hidden":
        (folder / ".private").mkdir()
        shutil.copy(SESSIONS / name, folder / ".private" / name)
        rel = f"sessions/.private/{name}"
    elif how == "linked folder":
        (folder / "sub").symlink_to(elsewhere, target_is_directory=True)
        rel = f"sessions/sub/{name}"
    else:
        (folder / "linked.jsonl").symlink_to(elsewhere / name)
        rel = "sessions/linked.jsonl"
    index = json.loads(cli("-w", str(ws), "index", "--json").out)
    assert rel not in {f["path"] for f in index.get("files", [])}
    r = cli("-w", str(ws), "get", rel)
    assert r.code == 3, (r.code, r.out)
    assert "not read in a sessions folder" in r.err or "not followed" in r.err


def test_retain_never_writes_through_a_hard_link(ws, outside):
    """A daily log that is a hard link (the same file as one outside the workspace, `ln`, a
    `cp -al` backup): retain appended in place, so the fact landed in the file outside too. Now
    it is refused, naming the file and the fix, and nothing changes on either side."""
    notes = outside / "notes.md"
    notes.write_text("# my own notes\n", encoding="utf-8")
    log = ws / "memory" / f"{DAY}.md"
    os.link(notes, log)
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY)
    assert r.code == 3, r.err
    assert f"memory/{DAY}.md: is a hard link" in r.err and "cp memory/" in r.err
    assert notes.read_text(encoding="utf-8") == "# my own notes\n"
    assert os.stat(log).st_ino == os.stat(notes).st_ino
    with pytest.raises(WorkspaceError):
        writable_path(ws, f"memory/{DAY}.md")
    assert writable_path(ws, "memory") == ws / "memory"  # a folder's link count is no link
    # Given a file of its own (the hint), retain writes it.
    shutil.copy(log, f"{log}.own")
    os.replace(f"{log}.own", log)
    assert cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY).code == 0
    assert notes.read_text(encoding="utf-8") == "# my own notes\n"
    # The copy a killed write linked into place and left beside it is ours, not a link.
    os.link(log, log.parent / f".{DAY}.md.k1ll3d.tmp")
    assert cli("-w", str(ws), "retain", "Kate prefers tea", "--date", DAY).code == 0
    assert not (log.parent / f".{DAY}.md.k1ll3d.tmp").exists()


@pytest.mark.parametrize("name", ["notes#1", "a?b", "100%25"])
def test_a_workspace_folder_named_with_uri_characters_is_that_folder(tmp_path, name):
    """A workspace in "notes#1" or "a?b": the index opened read-only was named by an unescaped
    URI, so SQLite opened (and, its flags lost after the "?", created) the file "notes" or "a"
    beside the workspace, and `forget --entity` failed with an internal error."""
    folder = tmp_path / name
    shutil.copytree(REPO / "fixtures" / "workspace", folder)
    assert cli("-w", str(folder), "index").code == 0
    r = cli("-w", str(folder), "forget", "--entity", "payments-service", "--dry-run", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["lines"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_clawmems_own_files_are_never_written_through_a_hard_link(ws, outside):
    """`.clawmem/writers` (who wrote each fact) or a lock's owner note that is a hard link to a
    file elsewhere: retain appended its writer line to that file, and a lock truncated it. Now
    the record is skipped (it never fails the write it describes) and the lock is refused."""
    mine = outside / "mine.txt"
    mine.write_text("my own lines\n", encoding="utf-8")
    (ws / ".clawmem").mkdir(exist_ok=True)
    os.link(mine, ws / ".clawmem" / "writers")
    r = cli("-w", str(ws), "retain", "the deploy is on Friday", "--date", DAY)
    assert r.code == 0, r.err
    assert mine.read_text(encoding="utf-8") == "my own lines\n"
    (ws / ".clawmem" / "writers").unlink()
    assert cli("-w", str(ws), "index").code == 0
    owner = ws / ".memory" / "write.lock.owner"
    owner.unlink(missing_ok=True)
    os.link(mine, owner)
    r = cli("-w", str(ws), "retain", "Kate prefers tea", "--date", DAY)
    assert r.code != 0 and "is a hard link" in r.err, r.err
    assert mine.read_text(encoding="utf-8") == "my own lines\n"


def test_a_hostile_line_sends_no_escape_sequence_to_the_terminal(ws):
    """A line written with terminal escape sequences (a clone can commit one): recall's terminal
    output showed them as they were (clear the screen, retitle the window, write the clipboard
    through OSC 52); now they are written out ("\\x1b"). --json keeps the text, escaped as JSON
    escapes it. (A file named so is left out by the scan.)"""
    line = "The quuxly launch \x1b]52;c;aGk=\x07 is \x1b[2J on Friday."
    (ws / "memory" / "quux.md").write_text(f"# x\n\n{line}\n", encoding="utf-8")
    r = cli("-w", str(ws), "recall", "quuxly", "-k", "1")
    assert r.code == 0, r.err
    assert "\x1b" not in r.out and "\x07" not in r.out
    assert "launch \\x1b]52;c;aGk=\\x07 is \\x1b[2J on" in r.out
    r = cli("-w", str(ws), "recall", "quuxly", "-k", "1", "--json")
    assert line in json.loads(r.out)["results"][0]["snippet"]


def test_a_line_that_reorders_itself_on_screen_is_written_out(ws):
    """Unicode's bidirectional overrides and isolates ("\u202e") show a line's words in
    another order than they are written (Trojan Source): a note a clone committed could read on
    screen as saying what it does not. recall writes them out for a person; right-to-left text
    itself (and its marks, U+200F) is shown as it is; --json keeps the text."""
    line = "The quuxly grant is \u202eexe.gnp\u202c for \u2067Ann\u2069, שלום\u200f."
    (ws / "memory" / "quux.md").write_text(f"# x\n\n{line}\n", encoding="utf-8")
    r = cli("-w", str(ws), "recall", "quuxly", "-k", "1")
    assert r.code == 0, r.err
    assert not any(c in r.out for c in "\u202e\u202c\u2067\u2069")
    assert "is \\u202eexe.gnp\\u202c for \\u2067Ann\\u2069, שלום\u200f." in r.out
    r = cli("-w", str(ws), "recall", "quuxly", "-k", "1", "--json")
    assert line in json.loads(r.out)["results"][0]["snippet"]


def test_check_and_the_error_line_send_no_escape_sequence_either(ws):
    """`clawmem check` quotes a malformed line's kind, and an error names the path it was given,
    as they are: an escape sequence in either reached the terminal."""
    (ws / "memory" / "bad.md").write_text(
        "# x\n\n## Retain\n- Q\x1b[2J: not a kind\n", encoding="utf-8"
    )
    r = cli("-w", str(ws), "check")
    assert r.code != 0 and 'memory/bad.md:4: unknown kind "Q\\x1b[2J"' in r.out, r.out
    assert "\x1b" not in r.out + r.err
    r = cli("-w", str(ws), "get", f"memory/{DAY}\x1b]0;x\x07.md")
    assert r.code != 0 and "\\x1b]0;x\\x07" in r.err
    assert "\x1b" not in r.err and "\x07" not in r.err
