"""Rough edges a new user met in a first hour with clawmem, each reproduced first, then fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")


def _into_closed_pipe(ws, *args: str) -> subprocess.CompletedProcess:
    """Run ``clawmem ARGS`` with stdout a pipe whose reader is gone (``… | head -1`` once head
    has its line)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run(
            [sys.executable, "-m", "clawmem", "-w", str(ws), *args],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.close(w)


@pytest.mark.parametrize("args", [["recall", "Peter", "-k", "20"], ["status"]])
def test_a_reader_that_closes_the_pipe_ends_clawmem_quietly(ws, args):
    """`clawmem recall … | head -1` exited 1 without a word (rich's own broken-pipe exit)."""
    assert cli("-w", str(ws), "index").code == 0
    p = _into_closed_pipe(ws, *args)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "error" not in p.stderr.lower()


def test_status_lists_a_skipped_file_once(ws):
    (ws / "memory" / "big.md").write_text("x" * 2000 + "\n", encoding="utf-8")
    (ws / "clawmem.toml").write_text("max_file_bytes = 1000\n", encoding="utf-8")
    assert cli("-w", str(ws), "index").code == 0
    r = cli("-w", str(ws), "status")
    assert r.out.count("memory/big.md") == 1, r.out
    data = json.loads(cli("-w", str(ws), "status", "--json").out)
    listed = [s["path"] for s in data["skipped"] + data["unreadable"]]
    assert listed.count("memory/big.md") == 1


def test_a_binary_file_named_md_does_not_leave_the_index_stale_forever(ws):
    """It was skipped at every sync and so "changed on disk" at every read: status and every
    recall said "index is stale" while `index` said up to date."""
    (ws / "memory" / "photo.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    r = cli("-w", str(ws), "index", "--json")
    assert r.code == 0
    assert (
        "binary content"
        in {s["path"]: s["reason"] for s in json.loads(r.out)["skipped"]}["memory/photo.md"]
    )
    status = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert status["clean"] is True, status["state"]
    assert any(
        p["path"] == "memory/photo.md" and "binary content" in p["message"]
        for p in status["problems"]
    )
    found = json.loads(cli("-w", str(ws), "recall", "Peter", "--json").out)
    assert not any("stale" in d for d in found["degraded"]), found["degraded"]


def test_help_never_breaks_a_description_mid_sentence():
    """Typer's rich help kept each docstring's line breaks: `clawmem --help` showed "… each
    cited," then "within a small token budget …" on the next line, in the middle of the table."""
    import re

    from clawmem.cli.app import click_group

    def walk(command, name):
        for paragraph in (command.help or "").split("\n\n"):
            assert "\n" not in paragraph.strip(), (name, paragraph)
        for sub in getattr(command, "commands", {}):
            walk(command.commands[sub], f"{name} {sub}")

    walk(click_group(), "clawmem")
    listing = cli("--help").out
    assert not re.search(r"cited,\s*│\s*\n│\s+within", listing)


@pytest.mark.parametrize(
    "toml, shown",
    [
        ("embed_batch = 0", "line 2: embed_batch = 0 is not a positive int"),
        ("k = 0", "line 2: k = 0 is not a positive int"),
        ('k = "6"', "line 2: k = '6' is not a valid int"),
        ("k = 2.5", "line 2: k = 2.5 is not a valid int"),
        ('vectors = "no"', "line 2: vectors = 'no' is not a valid bool"),
        ("model = 3", "line 2: model = 3 is not a valid str"),
        ("[sessions]\npaths = 3", "line 3: [sessions] paths = 3 is not a valid list of strings"),
        (
            "[sessions]\nbatch_messages = 0",
            "line 3: [sessions] batch_messages = 0 is not a positive",
        ),
    ],
)
def test_wrong_typed_settings_are_refused_with_file_line_and_fix(ws, toml, shown):
    """`embed_batch = 0` was accepted and left every vector pending forever; `k = "6"` and
    `vectors = "no"` were guessed at."""
    (ws / "clawmem.toml").write_text(f"# settings\n{toml}\n", encoding="utf-8")
    r = cli("-w", str(ws), "status")
    assert r.code == 4, r.err
    first, hint = r.err.splitlines()
    assert first.startswith(f"clawmem: error: clawmem.toml {shown}"), first
    assert hint.startswith("  hint: set ") and "or remove it to use the default" in hint


def test_environment_settings_are_still_read_from_text(ws, monkeypatch):
    monkeypatch.setenv("CLAWMEM_K", "3")
    monkeypatch.setenv("CLAWMEM_EMBED_BATCH", "0")
    r = cli("-w", str(ws), "status")
    assert r.code == 4 and "$CLAWMEM_EMBED_BATCH: embed_batch = '0' is not a positive int" in r.err
    monkeypatch.setenv("CLAWMEM_EMBED_BATCH", "8")
    assert "embed_batch" in cli("-w", str(ws), "config").out


def test_k_above_the_knn_limit_keeps_the_vector_leg(hash_indexed, monkeypatch):
    """-k above ~1,024 asked sqlite-vec for more than its 4,096 neighbours: the vector leg
    failed and the recall went lexical without saying so in a way anyone noticed."""
    from clawmem import open_workspace

    monkeypatch.delenv("CLAWMEM_VECTORS")
    assert open_workspace(hash_indexed).recall("payment ledger", k=6).ranking != "lexical-bm25"
    res = open_workspace(hash_indexed).recall("payment ledger", k=2000)
    assert res.ranking != "lexical-bm25", res.degraded
    assert not any("vector search failed" in d for d in res.degraded), res.degraded


def test_the_mcp_k_maximum_is_enforced():
    from clawmem.cli.mcp.arguments import validate_arguments
    from clawmem.cli.mcp.catalogue import TOOLS
    from clawmem.errors import UsageError

    search = next(t for t in TOOLS if t.name == "memory_search")
    assert validate_arguments(search, {"query": "x", "k": 50})["k"] == 50
    with pytest.raises(UsageError, match="'k' is 51; the maximum is 50"):
        validate_arguments(search, {"query": "x", "k": 51})


HOLDER = """
import sys
from pathlib import Path
from clawmem.files.locking import write_lock
with write_lock(Path(sys.argv[1]), purpose="a test holding the lock"):
    print("held", flush=True)
    sys.stdin.readline()  # until the test says
"""


def test_a_writer_waiting_for_the_lock_says_who_holds_it(ws):
    """retain hung 14.6 s, index showed a frozen 0/0 bar, without a word."""
    assert cli("-w", str(ws), "index").code == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws / ".memory")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline() == "held\n"
    writer = subprocess.Popen(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "retain", "the lock test fact"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        said = writer.stderr.readline()  # while it waits: the holder has not let go
    finally:
        holder.communicate("go\n", timeout=30)
    out, rest = writer.communicate(timeout=60)
    assert writer.returncode == 0, said + rest
    assert said.startswith("clawmem: waiting for the write lock"), said
    assert f"held by pid {holder.pid} (a test holding the lock)" in said
    assert out.startswith("retained ")


def test_a_hook_event_without_a_prompt_searches_nothing(ws):
    """A SessionStart event piped to `context --hook` was searched as if its JSON were the
    question, and unrelated lines were injected into the session."""
    assert cli("-w", str(ws), "index").code == 0
    event = {
        "session_id": "4f1c",
        "transcript_path": "/home/peter/.claude/projects/x/4f1c.jsonl",
        "cwd": "/home/peter/code/payments-service",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    base = [sys.executable, "-m", "clawmem", "-w", str(ws), "context", "--hook"]
    r = subprocess.run(base, input=json.dumps(event), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    r = subprocess.run([*base, "--json"], input=json.dumps(event), capture_output=True, text=True)
    data = json.loads(r.stdout)
    assert data["lines"] == [] and "SessionStart has no prompt" in data["skipped"]
    # The same event with a prompt is searched.
    asked = {
        **event,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "what did Peter decide about payments?",
    }
    r = subprocess.run([*base, "--json"], input=json.dumps(asked), capture_output=True, text=True)
    assert json.loads(r.stdout)["message"] == asked["prompt"]


def test_the_index_shrinks_after_a_big_file_is_deleted(ws):
    """The index stayed at 118 MB after a 50 MB note was deleted, until `index --force`."""
    import random

    rnd = random.Random(7)
    words = [f"w{rnd.randrange(10**6)}" for _ in range(5000)]
    big = ws / "memory" / "dump.md"
    paragraphs = (" ".join(rnd.choices(words, k=60)) for _ in range(4000))
    big.write_text("# dump\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    (ws / "clawmem.toml").write_text("max_file_bytes = 50000000\n", encoding="utf-8")
    assert cli("-w", str(ws), "index").code == 0
    index = ws / ".memory" / "index.sqlite"

    def size() -> int:
        return sum(p.stat().st_size for p in index.parent.glob("index.sqlite*"))

    full = size()
    big.unlink()
    assert cli("-w", str(ws), "index").code == 0
    assert size() < full / 2, (full, size())
    r = cli("-w", str(ws), "recall", "Peter", "--json")
    assert r.code == 0 and json.loads(r.out)["results"]


def test_a_narrower_statement_does_not_supersede_a_general_one(ws):
    """reflect crossed out "prefers concise replies" because of a later "prefers concise
    replies while travelling": a narrower statement does not replace a general one."""
    from clawmem.markdown.supersession import Statement, supersedes

    general = Statement.of("O", "2031-01-01", ["Peter"], "Prefers concise replies")
    narrower = Statement.of(
        "O", "2031-02-01", ["Peter"], "Prefers concise replies while travelling"
    )
    assert not supersedes(narrower, general)
    vi = Statement.of("O", "2031-02-01", ["Peter"], "Prefers concise replies khi đi công tác")
    assert not supersedes(vi, general)
    # A real change of mind still supersedes.
    old = Statement.of("O", "2031-01-01", ["Peter"], "Prefers concise replies on WhatsApp")
    new = Statement.of("O", "2031-02-01", ["Peter"], "Prefers long detailed replies on WhatsApp")
    assert supersedes(new, old)

    for day, text in (
        ("2026-01-01", "Prefers concise replies"),
        ("2026-02-01", "Prefers concise replies while travelling"),
    ):
        r = cli("-w", str(ws), "retain", text, "--kind", "O", "--confidence", "0.8",
                "--entity", "Zora", "--date", day)  # fmt: skip
        assert r.code == 0, r.err
    assert cli("-w", str(ws), "reflect").code == 0
    page = (ws / "bank" / "entities" / "Zora.md").read_text(encoding="utf-8")
    general = [ln for ln in page.splitlines() if "concise replies" in ln and "travel" not in ln]
    assert general and all("~~" not in ln and "superseded" not in ln for ln in general), page
