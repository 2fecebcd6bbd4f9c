"""Issue 46: what a new user meets in the first hour says what is true, where, and how to fix it.

Each case runs the command as a user does (the real entry point, its error boundary and exit
codes included) on a copy of the fixture workspace, lexical unless the case is about vectors.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import cli, cli_subprocess

lexical_only = pytest.mark.usefixtures("lexical")


@lexical_only
def test_no_workspace_suggests_init(tmp_path):
    r = cli_subprocess("status", cwd=tmp_path, env={"CLAWMEM_WORKSPACE": ""})
    assert r.code == 3, r.err
    assert "no clawmem workspace found" in r.err
    assert "clawmem init" in r.err


@lexical_only
def test_init_where_no_folder_can_be_made_says_where(tmp_path):
    """`clawmem init` under a file (or a read-only place) was an internal error, exit 70."""
    (tmp_path / "a-file").write_text("x")
    r = cli("init", str(tmp_path / "a-file" / "notes"))
    assert r.code == 3 and "cannot create the workspace" in r.err, r.err
    assert "internal error" not in r.err and len(r.err.splitlines()) == 2


@lexical_only
def test_a_fact_older_than_the_window_says_why_it_was_kept(ws):
    """ "Peter is … working from The Castle from 2025-11-17" states an open-ended validity: it
    overlaps any later window, and the answer says so (in --json and on the terminal)."""
    args = ["-w", str(ws), "recall", "Peter Vienna Castle", "--since", "2025-12-20", "--kind", "W"]
    data = json.loads(cli(*args, "--json").out)
    kept = [h for h in data["results"] if h["timestamp"] < "2025-12-20"]
    assert kept, data["results"]
    cite = kept[0]["citation"]
    notes = [n for n in data["notes"] if cite in n]
    assert len(notes) == 1, data["notes"]
    assert notes[0].startswith("kept though recorded outside the window 2025-12-20 to …")
    assert f"{cite} (recorded {kept[0]['timestamp']}; valid from" in notes[0]
    assert "open-ended" in notes[0]
    human = cli(*args)
    assert human.code == 0
    assert "note: kept though recorded outside the window" in human.err
    assert f"{cite} (recorded" in human.err


@lexical_only
def test_a_budget_that_empties_the_answer_says_so_and_what_would_do(ws):
    base = ["-w", str(ws), "recall", "DEC-0054"]
    data = json.loads(cli(*base, "--budget", "5", "--json").out)
    assert data["results"] == []
    reason = data["empty_reason"]
    assert reason.startswith("the token budget (5) is smaller than"), reason
    first = json.loads(cli(*base, "--json").out)["results"][0]["citation"]
    assert first in reason
    need = int(re.search(r"a budget of (\d+) or more", reason).group(1))
    shown = json.loads(cli(*base, "--budget", str(need), "--json").out)["results"]
    assert shown and shown[0]["citation"] == first
    less = json.loads(cli(*base, "--budget", str(need - 1), "--json").out)["results"]
    assert not less or less[0]["citation"] != first
    human = cli(*base, "--budget", "5")
    assert human.code == 0 and "no results: the token budget (5)" in human.err


@lexical_only
def test_since_after_until_is_a_usage_error(ws):
    r = cli("-w", str(ws), "recall", "Peter", "--since", "2025-12", "--until", "2025-11")
    assert r.code == 2
    assert r.err.startswith("clawmem: error: --since 2025-12: starts on 2025-12-01, after"), r.err
    assert "2025-11-30" in r.err


@lexical_only
def test_flags_show_no_type_and_refuse_a_value_by_name(ws):
    helped = cli_subprocess("recall", "--help", env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert helped.code == 0
    assert "<bool>" not in helped.out and "--json" in helped.out
    r = cli("-w", str(ws), "recall", "Peter", "--json", "true")
    assert r.code == 2
    assert r.err.startswith("clawmem: error: --json takes no value\n"), r.err
    assert "write --json alone" in r.err


@lexical_only
def test_status_labels_each_line_once(ws):
    assert cli("-w", str(ws), "index").code == 0
    r = cli("-w", str(ws), "status")
    labels = [line.split()[0] for line in r.out.splitlines() if line and not line[0].isspace()]
    repeated = {
        x for x in labels if labels.count(x) > 1 and x not in ("scope", "problem", "skipped")
    }
    assert not repeated, r.out
    assert "resident" in labels and labels.count("embedder") <= 1


def test_token_list_columns_align(tmp_path, monkeypatch, ws):
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    for name in ("a", "a-much-longer-name"):
        assert cli("token", "create", "--name", name, "-w", str(ws)).code == 0
    r = cli("token", "list")
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "ACCESS", "CREATED", "WORKSPACES"]
    starts = {line.index("read") for line in lines[1:]}
    assert len(starts) == 1 and lines[0].index("ACCESS") in starts, r.out


@lexical_only
def test_a_daily_log_that_is_not_utf8_is_reported_alike_and_loudly(ws):
    bad = ws / "memory" / "2025-11-30.md"
    bad.write_bytes(b"# 2025-11-30\n\nThe okapi arrived.\n\xff\xfe broken bytes\n")
    check = cli("-w", str(ws), "check")
    assert check.code == 9
    assert "memory/2025-11-30.md:4: " in check.out and "invalid UTF-8" in check.out
    assert "malformed fact" not in check.err and "1 file(s) not UTF-8" in check.err
    assert cli("-w", str(ws), "index").code == 0
    status = json.loads(cli("-w", str(ws), "status", "--json").out)
    lines = {p["line"] for p in status["problems"] if p["path"] == "memory/2025-11-30.md"}
    assert lines == {4}
    human = cli("-w", str(ws), "status")
    assert human.out.count("memory/2025-11-30.md") == 1  # once, as skipped: not as a fact
    data = json.loads(cli("-w", str(ws), "recall", "okapi", "--json").out)
    said = [d for d in data["degraded"] if d.startswith("memory/2025-11-30.md is not searchable")]
    assert said and "line 4: invalid UTF-8" in said[0], data["degraded"]
    r = cli("-w", str(ws), "recall", "okapi")
    assert "memory/2025-11-30.md is not searchable" in r.err


@lexical_only
def test_unknown_setting_hints_are_written_as_in_the_file(ws):
    (ws / "clawmem.toml").write_text('paths = ["~/sessions"]\n', encoding="utf-8")
    r = cli("-w", str(ws), "status")
    assert r.code == 4
    assert "did you mean [sessions] paths?" in r.err
    assert "session_paths" not in r.err and "read_scopes" not in r.err
    assert '[scopes] NAME = "PATH"' in r.err


@lexical_only
def test_a_scope_from_the_environment_is_reported_as_such(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_READ_SCOPES", f"team={tmp_path / 'missing'}")
    data = json.loads(cli("-w", str(ws), "status", "--json").out)
    (scope,) = data["scopes"]
    assert scope["state"] == "not found: fix $CLAWMEM_READ_SCOPES"
    r = cli("-w", str(ws), "recall", "Peter", "--json")
    assert any("fix $CLAWMEM_READ_SCOPES" in d for d in json.loads(r.out)["degraded"])


@lexical_only
def test_get_of_an_unknown_scope_says_so(ws, tmp_path, monkeypatch):
    r = cli("-w", str(ws), "get", "nope:memory/x.md")
    assert r.code == 3
    assert "unknown scope 'nope' (known scopes: none are configured)" in r.err
    monkeypatch.setenv("CLAWMEM_READ_SCOPES", f"team={tmp_path}")
    r = cli("-w", str(ws), "get", "nope:memory/2025-11-17.md")
    assert r.code == 3 and "(known scopes: team)" in r.err
    assert "memory/2025-11-17.md" in r.err  # the path without the scope, for this workspace


@lexical_only
def test_check_names_a_fact_written_below_a_later_heading(ws):
    log = ws / "memory" / "2025-12-01.md"
    log.write_text(
        "# 2025-12-01\n\n## Retain\n- W @Peter: Drinks green tea.\n\n## Lunch\n"
        "- W @Peter: Had noodles with @Anna.\n- noodles were good\n",
        encoding="utf-8",
    )
    r = cli("-w", str(ws), "check")
    assert r.code == 9
    assert 'memory/2025-12-01.md:7: written as a fact, but under "## Lunch"' in r.out, r.out
    assert 'move it under "## Retain"' in r.out
    assert ":8:" not in r.out and ":4:" not in r.out  # a plain bullet, and a fact in its place
    data = json.loads(cli("-w", str(ws), "check", "--json").out)
    assert [p["problem"] for p in data if p["path"] == "memory/2025-12-01.md"] == ["stray"]


def test_vector_mode_says_nothing_of_the_lexical_leg(indexed):
    """`--mode vector` printed the lexical leg's note ("no result contained every term")."""
    for question in ("a feline resting on a rug xyzzy", "payments Hetzner cutover plugh"):
        data = json.loads(
            cli("-w", str(indexed), "recall", question, "--mode", "vector", "--json").out
        )
        assert data["results"] and data["ranking"] == "vector-cosine"
        assert data["relaxed"] is False
        assert not [n for n in data["notes"] if "term" in n], data["notes"]
        lexical = json.loads(
            cli("-w", str(indexed), "recall", question, "--mode", "lexical", "--json").out
        )
        assert lexical["relaxed"] is True  # the same question does relax the lexical leg


def test_the_http_server_stops_promptly_on_sigterm(indexed, tmp_path):
    import signal
    import time

    import anyio

    from .test_mcp_http import session, start_server

    server = start_server(indexed, tmp_path)
    try:

        async def one_search() -> None:
            async with session(server.url, None) as s:
                hit = await s.call_tool("memory_search", {"query": "a feline resting on a rug"})
                assert not hit.is_error

        anyio.run(one_search)
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=10)
        # It shuts down cleanly, then ends by the signal, as uvicorn does (the shell says 143).
        assert server.proc.returncode == -signal.SIGTERM
        # Promptly: not after waiting out a connection's keep-alive (uvicorn's is 5 s), with
        # room for a loaded machine's wall clock.
        assert time.monotonic() - started < 3.0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def test_help_names_arguments_as_cli_md_does():
    """typer 0.29 wrote `clawmem get [OPTIONS] {path}` and `--kind <list[str]>`: braces read as
    a template to fill in (or a choice), and neither matched docs/cli.md's `PATH`."""
    env = {"COLUMNS": "100", "NO_COLOR": "1"}
    get = cli_subprocess("get", "--help", env=env)
    assert "Usage: clawmem get [OPTIONS] PATH" in get.out and "{path}" not in get.out, get.out
    forget = cli_subprocess("forget", "--help", env=env)
    assert "Usage: clawmem forget [OPTIONS] [CITATIONS...]" in forget.out, forget.out
    for out in (forget.out, cli_subprocess("recall", "--help", env=env).out):
        assert "list[" not in out, out
    missing = cli("retain")
    assert missing.code == 2 and "Missing argument 'TEXT'" in missing.err, missing.err


@lexical_only
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["facts", "--min-confidence", "2"], "--min-confidence 2.0: must be between 0 and 1"),
        (["facts", "--limit", "0"], "--limit 0: must be at least 1"),
        (["recall", "Peter", "--min-relevance", "2"], "--min-relevance 2.0: must be between"),
        (["entities", "Nobody"], "Nobody: no fact or page mentions this entity"),
    ],
)
def test_a_bad_value_is_named_as_the_user_typed_it(ws, args, said):
    """Not as the library's parameter (`min_confidence=2.0`, `name=Nobody`)."""
    r = cli("-w", str(ws), *args)
    assert r.code == 2
    assert r.err.startswith(f"clawmem: error: {said}"), r.err


@lexical_only
def test_a_model_that_is_not_gguf_names_the_command_that_converts_one(ws, tmp_path):
    folder = tmp_path / "all-MiniLM-L6-v2.bin"
    folder.write_bytes(b"not a model")
    r = cli("-w", str(ws), "model", "use", str(folder))
    assert r.code == 6 and "is not a GGUF file" in r.err, r.err
    assert "`clawmem model import FOLDER --use`" in r.err, r.err


@lexical_only
@pytest.mark.parametrize(
    ("content", "said", "fix"),
    [
        (b"k = 5\n[broken\n", "line 2: Expected ']' at the end of a table", "fix the TOML syntax"),
        (b"k = 5\n# caf\xe9\n", "line 2: not UTF-8 (byte 0xe9)", "save the file as UTF-8"),
        (b"[sessions]\npaths = 3\n", "line 2: [sessions] paths = 3 is not", "set [sessions] paths"),
    ],
)
def test_a_broken_clawmem_toml_names_the_line_as_written(ws, content, said, fix):
    """Not `clawmem.toml: 'utf-8' codec can't decode byte 0xe9 in position 8`, nor the line
    at the end of tomllib's sentence, nor `session_paths`, a name the file never uses."""
    (ws / "clawmem.toml").write_bytes(content)
    r = cli("-w", str(ws), "status")
    assert r.code == 4
    first, hint = r.err.splitlines()
    assert first.startswith(f"clawmem: error: clawmem.toml {said}"), first
    assert hint.startswith(f"  hint: {fix}"), hint


def test_a_token_for_a_scope_the_workspace_lacks_says_so(tmp_path, monkeypatch, ws):
    """`--scope tema` (for team) made a token that reaches nothing more, and said nothing."""
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    (ws / "clawmem.toml").write_text('[scopes]\nteam = "../team"\n', encoding="utf-8")
    r = cli("token", "create", "--name", "t", "--scope", "team", "--scope", "tema", "-w", str(ws))
    assert r.code == 0, r.err
    notes = [line for line in r.err.splitlines() if "note:" in line]
    assert len(notes) == 1 and "has no read scope 'tema'" in notes[0], r.err


@lexical_only
def test_recall_of_sessions_where_none_are_set_up_says_how(ws):
    """`--source sessions` on a workspace without transcripts said "the filters exclude
    everything", as if a filter were wrong rather than nothing set up."""
    data = json.loads(cli("-w", str(ws), "recall", "webhook", "--source", "sessions", "--json").out)
    assert data["results"] == []
    assert data["empty_reason"].startswith("no conversation transcripts are indexed"), data
    assert "[sessions] paths" in data["empty_reason"] and "clawmem flush" in data["empty_reason"]


@lexical_only
def test_an_unknown_format_and_a_missing_source_are_said_as_typed(ws, tmp_path):
    """`format=foo: unknown import format` named the library's parameter; a missing source's
    hint ("pass the source to import") said nothing about what a source may be."""
    for args, said in (
        (["import", str(tmp_path), "--format", "foo"], "--format foo: unknown import format"),
        (["export", "--format", "foo"], "--format foo: unknown export format"),
        (["proposals", "list", "--status", "foo"], "--status foo: not a proposal status"),
    ):
        r = cli("-w", str(ws), *args)
        assert r.code == 2 and r.err.startswith(f"clawmem: error: {said}"), r.err
    r = cli("-w", str(ws), "import", str(tmp_path / "nope.jsonl"))
    assert r.code == 2 and "no such file or folder" in r.err
    assert "clawmem JSONL file" in r.err and "mem0 export" in r.err, r.err


@lexical_only
def test_kind_filters_take_a_name_as_retain_does(ws):
    """`retain --kind opinion` worked and `recall --kind opinion` was "unknown kind"."""
    data = json.loads(cli("-w", str(ws), "recall", "Peter", "--kind", "World", "--json").out)
    assert data["filters"]["kind"] == ["W"] and data["results"], data
    assert all(r["kind"] == "W" for r in data["results"])
    listed = json.loads(cli("-w", str(ws), "facts", "--kind", "opinion", "--json").out)
    assert listed["facts"] and all(f["kind"] == "O" for f in listed["facts"]), listed
    r = cli("-w", str(ws), "recall", "Peter", "--kind", "worlds")
    assert r.code == 2 and "--kind WORLDS: unknown kind" in r.err, r.err


@lexical_only
def test_a_fact_about_no_entity_is_listed_without_a_gap(ws):
    assert cli("-w", str(ws), "retain", "The quokka exhibit opens at nine").code == 0
    listed = cli("-w", str(ws), "facts", "--limit", "1").out.splitlines()[0]
    assert re.search(r"#L\d+-L\d+  W  \d{4}-\d\d-\d\d$", listed), listed  # not "W   2025…"
    hit = cli("-w", str(ws), "recall", "quokka exhibit", "-k", "1").out.splitlines()[0]
    assert hit.endswith(" W " + listed[-10:]), hit  # not "W  2025…"


@lexical_only
def test_check_json_does_not_point_above(ws):
    log = ws / "memory" / "2025-11-30.md"
    log.write_text(log.read_text(encoding="utf-8") + "\n## Retain\n- X @Peter: no such kind\n")
    r = cli("-w", str(ws), "check", "--json")
    assert r.code == 9 and json.loads(r.out), r.out
    assert "above" not in r.err and "fix the lines listed" in r.err, r.err


@lexical_only
def test_a_new_workspace_says_how_to_start_not_that_files_are_missing(tmp_path, monkeypatch):
    """Right after `clawmem init`: recall said "no memory files were found" beside the MEMORY.md
    init had just made, `facts` blamed filters no one gave, `entities` printed nothing."""
    monkeypatch.delenv("CLAWMEM_WORKSPACE", raising=False)
    ws = tmp_path / "notes"
    assert cli("init", str(ws)).code == 0
    r = cli("-w", str(ws), "recall", "anything at all")
    assert r.code == 0 and "no memory files were found" not in r.err, r.err
    assert "the memory files hold no text yet" in r.err and "clawmem retain" in r.err, r.err
    assert "(1 file(s))" in r.err, r.err
    facts = cli("-w", str(ws), "facts")
    assert facts.code == 0 and "no facts yet" in facts.err and "clawmem retain" in facts.err
    assert "no facts match these filters" in cli("-w", str(ws), "facts", "--kind", "O").err
    ents = cli("-w", str(ws), "entities")
    assert ents.code == 0 and ents.out == "" and "no entities yet" in ents.err, ents


@lexical_only
def test_a_confidence_without_an_opinion_says_how_to_make_one(ws):
    r = cli("-w", str(ws), "retain", "Peter likes figs", "-c", "0.9")
    assert r.code == 7 and 'only opinions (O) carry a confidence, not "W"' in r.err, r.err
    assert "--kind O" in r.err, r.err
