"""Inputs the soak's fuzzing (benchmarks/soak/fuzz.py) found crashing, kept as regressions."""

from __future__ import annotations

import pytest

from clawmem.errors import BadArgument, WorkspaceError
from clawmem.memory import open_workspace

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")


@pytest.mark.parametrize("query", ["\ud800", "a\udfffb", "payment \ud83c ledger"])
def test_a_lone_surrogate_in_a_query_is_a_clear_error(ws, query):
    # JSON's "\ud800" (an agent's tool call) decodes to a lone surrogate: it used to reach
    # SQLite's UTF-8 encoder and crash with UnicodeEncodeError.
    mem = open_workspace(ws)
    mem.index()
    with pytest.raises(BadArgument, match=r"^query=.*a lone surrogate \(U\+D[89A-F]"):
        mem.recall(query, mode="lexical")
    with pytest.raises(BadArgument, match=r"^entity="):
        mem.recall("payment", mode="lexical", entity=query)
    assert mem.recall("payment ledger \U0001f600", mode="lexical") is not None  # a pair is text


def test_a_lone_surrogate_in_a_retained_fact_writes_nothing(ws):
    mem = open_workspace(ws)
    mem.index()
    before = {p: p.read_bytes() for p in (ws / "memory").glob("*.md")}
    with pytest.raises(BadArgument, match=r"^text=.*lone surrogate"):
        mem.retain("The \ud800 count was 3.", day="2025-11-20")
    with pytest.raises(BadArgument, match=r"^entities="):
        mem.retain("The count was 3.", entities=["Pe\udc00ter"], day="2025-11-20")
    assert {p: p.read_bytes() for p in (ws / "memory").glob("*.md")} == before


def test_invalid_utf8_in_a_command_line_query_is_a_one_line_error(ws):
    # Python hands undecodable argv bytes over as lone surrogates (surrogateescape).
    r = cli("-w", str(ws), "recall", "a\udced\udca0\udc80b")
    assert r.code == 2, r.err
    first, *rest = r.err.splitlines()
    assert first.startswith("clawmem: error: query=") and "lone surrogate" in first
    assert len(rest) <= 1 and "Traceback" not in r.err


def test_a_queries_file_with_invalid_utf8_names_the_line(ws, tmp_path):
    queries = tmp_path / "q.txt"
    queries.write_bytes(b'{"query": "payment"}\nok line\n\xed\xa0\x80 bad\n')
    r = cli("-w", str(ws), "recall", "--queries", str(queries), "--json")
    assert r.code == 7, r.err  # was 70: an internal UnicodeDecodeError
    assert r.err.startswith(f"clawmem: error: {queries}: line 3: invalid UTF-8 at byte 1\n")
    assert len(r.out.splitlines()) == 2  # the lines before it were answered


def test_a_symlink_loop_is_refused_by_get(ws):
    (ws / "memory" / "loop-a").symlink_to("loop-b")
    (ws / "memory" / "loop-b").symlink_to("loop-a")
    r = cli("-w", str(ws), "get", "memory/loop-a")
    assert r.code not in (0, 70), r.err  # was 70: RuntimeError from pathlib
    assert r.err.startswith("clawmem: error: memory/loop-a: cannot be resolved")


def test_a_time_expression_with_a_newline_is_a_one_line_error(ws):
    r = cli("-w", str(ws), "recall", "payment", "--since", "3d\nlater", "--no-sync")
    assert r.code != 0 and r.code != 70
    first, *rest = r.err.splitlines()
    assert '"3d\\nlater"' in first and len(rest) <= 1, r.err


@pytest.mark.parametrize("path", ["memory/2025-11-20.md\0", "memory/\ud800.md"])
def test_a_path_with_a_nul_byte_or_a_surrogate_is_refused_by_get(ws, path):
    with pytest.raises(WorkspaceError, match="cannot be resolved"):  # was ValueError
        open_workspace(ws).get(path)


def test_an_unresolvable_path_with_a_newline_is_named_on_one_line(ws):
    # Found by the 30-minute soak: the message echoed the newline, giving a two-line error.
    with pytest.raises(WorkspaceError) as err:
        open_workspace(ws).get("\nx\ud874")
    assert "\n" not in err.value.message and err.value.message.startswith("\\nx\\ud874: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "payment", "--since", "P\t\x1f\nC$"],  # an invalid date with a line break
        ["retain", "a fact", "--kind", "\n&"],  # an unknown kind with a line break
    ],
)
def test_a_line_break_in_an_echoed_value_keeps_the_error_on_one_line(ws, argv):
    # The soak's fuzzing (seed 1, CI's short run) found these: the message echoed the value, and
    # its line break split the error over two lines. Every ClawmemError is one line now.
    r = cli("-w", str(ws), *argv)
    assert r.code != 0 and r.code != 70, r.err
    lines = r.err.rstrip("\n").split("\n")
    assert lines[0].startswith("clawmem: error: ") and len(lines) <= 2, r.err
    assert "\\n" in lines[0]  # the break is shown, escaped


def test_a_temporary_copy_left_by_a_killed_write_is_removed_by_the_next(ws):
    # The soak's kills (CI's short run, on an idle machine) found it: a retain killed between
    # writing `.2025-11-27.md.XXXX.tmp` and renaming it left that file in memory/ for good.
    day = ws / "memory" / "2025-11-27.md"
    stale = day.parent / f".{day.name}.k1ll3d00.tmp"
    stale.write_text("half a copy", encoding="utf-8")
    other = day.parent / ".2025-11-28.md.k1ll3d00.tmp"  # another file's copy is not this write's
    other.write_text("x", encoding="utf-8")
    r = cli(
        "-w",
        str(ws),
        "retain",
        "Peter moved the standup to 10:00",
        "--kind",
        "W",
        "--date",
        "2025-11-27",
    )
    assert r.code == 0, r.err
    assert not stale.exists() and other.exists()
    assert "Peter moved the standup to 10:00" in day.read_text(encoding="utf-8")


def test_json_nested_too_deeply_is_malformed_input_not_an_internal_error(ws, tmp_path):
    """Python's JSON parser raised RecursionError on 50,000 nested lists: `import` of such a
    file and a `--queries` line were internal errors. They are malformed JSON, said in one line
    naming the file (the transcripts' bad line: test_sessions.py)."""
    deep = "[" * 50_000 + "]" * 50_000
    facts = tmp_path / "facts.jsonl"
    facts.write_text('{"content": "' + deep + '"}\n' + deep + "\n", encoding="utf-8")
    r = cli("-w", str(ws), "import", str(facts), "--format", "jsonl", "--dry-run")
    assert r.code == 0 and "internal error" not in r.err, r.err
    assert "facts.jsonl#L2: not a fact object" in r.out + r.err
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": ' + deep + "}\n", encoding="utf-8")
    r = cli("-w", str(ws), "recall", "--queries", str(queries))
    assert r.code != 0 and "internal error" not in r.err
    assert r.err.startswith(f"clawmem: error: {queries} line 1: invalid JSON (nested too deeply)")
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(deep, encoding="utf-8")
    r = cli("-w", str(ws), "import", str(mem0), "--format", "mem0", "--dry-run")
    assert r.code != 0 and r.err.startswith(f"clawmem: error: {mem0}: not JSON"), r.err


def test_get_of_a_fifo_or_a_folder_says_what_it_is_and_never_blocks(ws, tmp_path):
    """`get` of a FIFO named like a note said "no such file in the workspace" (it is there: `ls`
    shows it); a FIFO put there after the check would have blocked the read for ever. Now one
    line says what the path is and how to fix it, exit 3, for a note and a transcript alike."""
    import os
    import subprocess

    from .conftest import approve, cli_subprocess

    os.mkfifo(ws / "memory" / "2025-12-09.md")
    (ws / "bank" / "folder.md").mkdir()
    sessions = tmp_path / "talks"
    sessions.mkdir()
    os.mkfifo(sessions / "abc.jsonl")
    (ws / "clawmem.toml").write_text(f'[sessions]\npaths = ["{sessions}"]\n', encoding="utf-8")
    approve(ws)
    for rel, told in (
        ("memory/2025-12-09.md", "is a FIFO (named pipe), not a file of notes"),
        ("bank/folder.md", "is a folder, not a file of notes"),
        ("sessions/abc.jsonl", "is a FIFO (named pipe), not a transcript"),
    ):
        try:
            r = cli_subprocess("-w", str(ws), "get", rel, "--lines", "2", timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - the defect itself
            pytest.fail(f"get {rel} blocked")
        assert r.code == 3 and r.out == "", (rel, r.code, r.err)
        first, hint = r.err.splitlines()
        assert first.startswith(f"clawmem: error: {rel}: {told}"), r.err
        assert "regular file" in first and ("rm " in first + hint or "remove" in first + hint)
    # The read itself never waits: a FIFO swapped in after the path was checked is refused.
    from clawmem.markdown.workspace import read_plain

    with pytest.raises(WorkspaceError, match=r"^memory/2025-12-09.md: is a FIFO"):
        read_plain(ws / "memory" / "2025-12-09.md", "memory/2025-12-09.md")


def test_a_clawmem_toml_nested_too_deeply_or_huge_is_a_config_error(ws):
    """tomllib reads nested arrays and inline tables recursively: a cloned workspace whose
    clawmem.toml held 5,000 nested lists made every command an internal error
    (RecursionError). And the file is read by every command, however large. Both are one line
    naming the file and the fix."""
    toml = ws / "clawmem.toml"
    for text, said in (
        ("x = " + "[" * 5_000 + "]" * 5_000 + "\n", "values nested too deeply"),
        ("x = " + "{a=" * 3_000 + "1" + "}" * 3_000 + "\n", "values nested too deeply"),
        ("# " + "x" * 2_000_000 + "\n", "2,000,003 bytes; a settings file is at most 1,048,576"),
    ):
        toml.write_text(text, encoding="utf-8")
        r = cli("-w", str(ws), "status")
        assert r.code != 0 and "internal error" not in r.err, r.err
        assert r.err.startswith(f"clawmem: error: clawmem.toml: {said}\n"), r.err


@pytest.mark.parametrize(
    ("setting", "shown"),
    [
        ('[scopes]\nx = "a\\u0000b"\n', "clawmem.toml: [scopes] holds a NUL character"),
        ('[sessions]\npaths = ["a\\u0000b"]\n', "clawmem.toml line 2: [sessions] paths holds"),
        ('http_access_log = ".memory/a\\u0000b"\n', "clawmem.toml line 1: http_access_log holds"),
    ],
)
def test_a_nul_character_in_a_path_setting_is_a_config_error(ws, setting, shown):
    """TOML writes a NUL character as "\\u0000": a scope, transcripts folder or access log a
    cloned clawmem.toml named so raised ValueError (embedded null byte) out of every command,
    exit 70. A one-line config error now, naming the line."""
    (ws / "clawmem.toml").write_text(setting, encoding="utf-8")
    for args in (("status",), ("recall", "x"), ("trust", "--show")):
        r = cli("-w", str(ws), *args)
        assert r.code == 4, (args, r.err)
        assert r.err.startswith(f"clawmem: error: {shown}"), r.err
        assert "internal error" not in r.err
