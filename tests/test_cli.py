"""The CLI as users and agents run it: output contracts, errors and exit codes."""

import json
import re

import pytest

from .conftest import cli, cli_subprocess

pytestmark = pytest.mark.usefixtures("lexical")


def test_python_dash_m_and_help(ws):
    r = cli_subprocess("--help")
    assert r.code == 0 and "recall" in r.out
    for cmd in ("index", "recall", "status", "get", "config"):
        h = cli(cmd, "--help")
        assert h.code == 0 and "Usage" in h.out, cmd


def _helps(command, ctx=None, path="clawmem") -> dict[str, str]:
    """The help text of ``command`` and of every command under it, by command path."""
    ctx = ctx or command.make_context("clawmem", [], resilient_parsing=True)
    out = {path: command.get_help(ctx)}
    for name in getattr(command, "list_commands", lambda _: [])(ctx):
        sub = command.get_command(ctx, name)
        sctx = sub.make_context(name, [], parent=ctx, resilient_parsing=True)
        out.update(_helps(sub, sctx, f"{path} {name}"))
    return out


def test_commands_built_on_demand_are_typers_own():
    """`main` builds a command only when it runs it (cli.CommandsOnDemand): the commands, their
    options and their help are exactly those of the group typer builds all at once."""
    import typer

    from clawmem.cli.app import app, click_group

    eager, lazy = _helps(typer.main.get_command(app)), _helps(click_group())
    assert len(eager) > 20 and "clawmem model use" in eager
    assert list(lazy) == list(eager)
    assert [p for p in eager if lazy[p] != eager[p]] == []


def test_a_run_builds_only_its_command(ws, capsys):
    from clawmem.cli.app import click_group

    group = click_group()
    group.main(["-w", str(ws), "status", "--json"], prog_name="clawmem", standalone_mode=False)
    assert json.loads(capsys.readouterr().out)["workspace"] == str(ws)
    assert list(group.commands.built) == ["status"]


def test_workspace_discovery_walks_up(ws):
    sub = ws / "memory"
    r = cli("status", "--json", cwd=sub)
    assert r.code == 0, r.err
    assert json.loads(r.out)["workspace"] == str(ws)


def test_workspace_from_env(ws, monkeypatch, tmp_path):
    monkeypatch.setenv("CLAWMEM_WORKSPACE", str(ws))
    r = cli("status", "--json", cwd=tmp_path)
    assert json.loads(r.out)["workspace"] == str(ws)


def test_no_workspace_is_a_clear_error(tmp_path):
    r = cli("status", cwd=tmp_path)
    assert r.code == 3
    assert r.err.startswith("clawmem: error: no clawmem workspace found")
    assert "hint:" in r.err


def test_status_never_clean_when_files_differ(ws):
    assert cli("-w", str(ws), "index").code == 0
    s = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert s["clean"] is True and s["state"] == "clean"
    (ws / "memory" / "2025-11-03.md").write_text("changed\n", encoding="utf-8")
    s = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert s["clean"] is False
    assert s["changed_on_disk"]["modified"] == ["memory/2025-11-03.md"]
    for key in (
        "files",
        "chunks",
        "index_bytes",
        "schema_version",
        "chunker_version",
        "tokenizer",
        "vectors",
    ):
        assert key in s


def test_recall_syncs_changed_files_first_unless_told_not_to(ws):
    cli("-w", str(ws), "index")
    (ws / "memory" / "2025-11-28.md").write_text(
        "# x\n\nThe okapi project started.\n", encoding="utf-8"
    )
    stale = json.loads(cli("-w", str(ws), "recall", "okapi", "--json", "--no-sync").out)
    assert stale["results"] == [] and stale["index"]["stale_files"] is None  # not checked
    fresh = json.loads(cli("-w", str(ws), "recall", "okapi", "--json").out)
    assert (
        fresh["results"][0]["citation"] == "memory/2025-11-28.md#L3-L3"
        or fresh["results"][0]["path"] == "memory/2025-11-28.md"
    )
    assert any("synced" in n for n in fresh["notes"])


def test_recall_json_schema(ws):
    res = json.loads(cli("-w", str(ws), "recall", "Hetzner", "--json", "--explain").out)
    for key in (
        "query",
        "mode",
        "ranking",
        "results",
        "count",
        "empty_reason",
        "relaxed",
        "notes",
        "degraded",
        "vectors",
        "index",
        "filters",
    ):
        assert key in res
    h = res["results"][0]
    for key in (
        "type",
        "citation",
        "path",
        "start_line",
        "end_line",
        "score",
        "snippet",
        "heading",
        "explain",
    ):
        assert key in h
    assert h["citation"] == f"{h['path']}#L{h['start_line']}-L{h['end_line']}"
    assert len(h["snippet"]) <= 702
    # vectors are off in this test: recall says so
    assert any("vectors are turned off" in d for d in res["degraded"])


def test_recall_k_and_human_output(ws):
    r = cli("-w", str(ws), "recall", "Peter", "-k", "2")
    assert r.code == 0
    import re

    assert re.findall(r"(?m)^(\d+)\. \S+#L\d+-L\d+", r.out) == ["1", "2"]


def test_queries_file_and_stdin(ws, tmp_path, monkeypatch):
    qf = tmp_path / "q.txt"
    qf.write_text('DEC-0054\n\n{"query": "Hetzner", "k": 2}\n', encoding="utf-8")
    r = cli("-w", str(ws), "recall", "--queries", str(qf))
    lines = [json.loads(x) for x in r.out.splitlines()]
    assert [x["query"] for x in lines] == ["DEC-0054", "Hetzner"]
    assert lines[1]["count"] <= 2
    bad = tmp_path / "bad.txt"
    bad.write_text('{"query": 3}\n')
    r = cli("-w", str(ws), "recall", "--queries", str(bad))
    assert r.code == 7 and "bad.txt line 1" in r.err
    r = cli_subprocess(
        "-w", str(ws), "recall", "--queries", "-", input="Hetzner\n", env={"CLAWMEM_VECTORS": "0"}
    )
    assert r.code == 0 and json.loads(r.out.splitlines()[0])["results"]


def test_get_reads_only_workspace_memory_files(ws, tmp_path):
    r = cli("-w", str(ws), "get", "memory/2025-11-12.md", "--from", "3", "--lines", "2")
    lines = (ws / "memory" / "2025-11-12.md").read_text(encoding="utf-8").split("\n")
    assert r.out == "\n".join(lines[2:4]) + "\n"
    r = cli("-w", str(ws), "get", "memory/2025-11-12.md#L3-L4", "--json")
    assert json.loads(r.out)["citation"] == "memory/2025-11-12.md#L3-L4"
    (tmp_path / "outside.md").write_text("secret")
    (ws / "memory" / "escape.md").symlink_to(tmp_path / "outside.md")
    for bad in (
        "../outside.md",
        str(tmp_path / "outside.md"),
        "memory/escape.md",
        "memory/../../outside.md",
    ):
        r = cli("-w", str(ws), "get", bad)
        assert r.code == 3, bad
        assert "outside the workspace" in r.err
    r = cli("-w", str(ws), "get", "clawmem.toml")
    assert r.code == 3 and "not a memory file" in r.err
    r = cli("-w", str(ws), "get", "memory/2025-11-12.md", "--from", "99999")
    assert r.code == 2


def test_a_file_the_index_leaves_out_for_its_size_is_not_read_back(ws):
    """A memory file over max_file_bytes is left out of the index, and get, correct and forget
    of it are refused with the file and the fix: a 3 GB file of NUL bytes (sparse, in a clone)
    was read whole by `get --lines 1`, 18 GB of memory and four minutes, and by an MCP server
    for any read-only token's memory_get."""
    big = ws / "bank" / "big.md"
    big.write_text("## Retain\n- W @Peter: likes tea\n" + "x" * 5_100_000 + "\n", encoding="utf-8")
    for args in (
        ("get", "bank/big.md", "--lines", "1"),
        ("get", "bank/big.md#L2-L2"),
        ("correct", "bank/big.md#L2-L2", "Peter likes coffee"),
        ("forget", "bank/big.md#L2-L2"),
    ):
        r = cli("-w", str(ws), *args)
        assert r.code != 0 and r.out == "", args
        assert r.err.startswith(
            "clawmem: error: bank/big.md: 5,100,033 bytes is over max_file_bytes=5,000,000"
        ), (args, r.err)
        assert "raise max_file_bytes in clawmem.toml" in r.err
    assert cli("-w", str(ws), "get", "memory/2025-11-12.md#L3-L4").code == 0


def test_config_shows_values_and_sources(ws, monkeypatch, abstaining):
    (ws / "clawmem.toml").write_text("k = 9\nchunk_tokens = 300\n")
    monkeypatch.setenv("CLAWMEM_SNIPPET_CHARS", "500")
    cfg = json.loads(cli("-w", str(ws), "config", "--json").out)
    assert cfg["k"] == {"value": 9, "source": "clawmem.toml"}
    assert cfg["snippet_chars"] == {"value": 500, "source": "$CLAWMEM_SNIPPET_CHARS"}
    assert cfg["chunk_overlap"] == {"value": 80, "source": "default"}
    assert cfg["candidates"]["value"] == 80
    assert cfg["min_relevance"]["value"] is None  # unset: each fitted model's threshold
    human = cli("-w", str(ws), "config").out
    assert "clawmem.toml" in human and "default" in human
    assert re.search(r"^min_relevance\s+unset\s", human, re.M)


def test_bad_config_is_one_clear_line(ws):
    (ws / "clawmem.toml").write_text("k = 'many'\n")
    r = cli("-w", str(ws), "status")
    assert r.code == 4
    assert (
        r.err.splitlines()[0]
        == "clawmem: error: clawmem.toml line 1: k = 'many' is not a valid int"
    )
    (ws / "clawmem.toml").write_text("chunk_size = 3\n")
    r = cli("-w", str(ws), "status")
    assert r.code == 4 and "unknown setting 'chunk_size'" in r.err
    # TOML's inf and nan (found by the soak: `k = inf` was an internal error, exit 70).
    for line, shown in (
        ("k = inf", "k = inf is not a valid int"),
        ("k = -inf", "k = -inf is not a valid int"),
        ("k = nan", "k = nan is not a valid int"),
        ("decay_half_life_days = nan", "decay_half_life_days = nan is not a valid float"),
        ("decay_half_life_days = inf", "decay_half_life_days = inf is not a valid float"),
    ):
        (ws / "clawmem.toml").write_text(line + "\n")
        r = cli("-w", str(ws), "status")
        assert r.code == 4, (line, r.err)
        assert r.err.splitlines()[0] == f"clawmem: error: clawmem.toml line 1: {shown}", r.err


def test_usage_errors_exit_2(ws):
    assert cli("-w", str(ws), "recall").code == 2
    assert cli("-w", str(ws), "recall", "x", "--mode", "psychic").code == 2
    assert cli("-w", str(ws), "recall", "x", "--since", "yesterday-ish").code != 0
    assert cli("-w", str(ws), "nosuchcommand").code == 2


def test_plain_option_values_are_coerced_with_clicks_messages(ws):
    """cli.app._coerce_without_pydantic converts plain values itself (typer's own coercion imports
    pydantic): numbers, lists and flags still work, and a bad number gets click's message."""
    bad = cli("-w", str(ws), "recall", "x", "-k", "many")
    assert bad.code == 2 and "'many' is not a valid integer." in bad.err
    ok = cli(
        "-w", str(ws), "recall", "DEC-0054", "-k", "2", "--kind", "W", "--kind", "chunk", "--json"
    )
    assert ok.code == 0 and len(json.loads(ok.out)["results"]) <= 2
    assert cli("-w", str(ws), "recall", "x", "--budget", "1e3").code == 2


def test_traceback_flag_reraises(ws, tmp_path):
    from clawmem.errors import WorkspaceError

    with pytest.raises(WorkspaceError):
        cli("--traceback", "-w", str(tmp_path / "missing"), "status")
    r = cli("-w", str(tmp_path / "missing"), "status")
    assert r.code == 3 and "Traceback" not in r.err


@pytest.fixture
def read_only(tmp_path):
    """Mount a path read-only (a bind mount: works for root too, unlike permission bits)."""
    import subprocess

    mounted = []

    def make(src):
        dst = tmp_path / "ro"
        dst.mkdir()
        for cmd in (
            ["mount", "--bind", str(src), str(dst)],
            ["mount", "-o", "remount,ro,bind", str(dst)],
        ):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                if mounted:
                    subprocess.run(["umount", str(dst)])
                pytest.skip(f"cannot make a read-only mount here: {r.stderr.strip()}")
            mounted.append(dst)
        return dst

    yield make
    if mounted:
        subprocess.run(["umount", str(mounted[0])], check=True)


def test_read_only_workspace(ws, read_only):
    """A workspace we cannot write to: recall on an existing index still answers; index fails clearly."""
    assert cli("-w", str(ws), "index").code == 0
    (ws / "memory" / "2025-11-28.md").write_text("# changed\n\nwombat\n", encoding="utf-8")
    ro = read_only(ws)
    r = cli_subprocess("-w", str(ro), "recall", "Hetzner", "--json", env={"CLAWMEM_VECTORS": "0"})
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert res["results"]
    assert res["index"]["stale_files"] == 1
    r = cli_subprocess("-w", str(ro), "index", env={"CLAWMEM_VECTORS": "0"})
    assert r.code != 0
    assert r.err.startswith("clawmem: error:")
    assert "Traceback" not in r.err
