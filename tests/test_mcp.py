"""`clawmem mcp` as an agent uses it: the MCP SDK's own stdio client starts the server as a
subprocess, lists the tools and calls them against a real workspace (real index, real SQLite, the
real model where the behaviour depends on it). Bad arguments come back as tool errors carrying the
CLI's message, and the server keeps answering."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from clawmem.cli.mcp.arguments import validate_arguments
from clawmem.cli.mcp.catalogue import TOOLS
from clawmem.errors import UsageError

from .conftest import cli

READ_TOOLS = {"memory_search", "memory_get", "memory_status", "memory_entities", "memory_list"}
READ_TOOLS |= {"memory_history", "memory_proposals"}
WRITING_TOOLS = {"memory_retain", "memory_update", "memory_forget", "memory_files"}
WRITING_TOOLS |= {"memory_proposal_accept", "memory_proposal_reject"}
TOOL_NAMES = READ_TOOLS | WRITING_TOOLS


def _env(**extra: str) -> dict[str, str]:
    # The SDK passes only a safe subset of the environment on; clawmem's settings go explicitly.
    # PYTHONPATH too, so that the server runs the code under test, not an installed clawmem.
    env = {k: v for k, v in os.environ.items() if k.startswith("CLAWMEM_") or k == "PYTHONPATH"}
    return {**env, **extra}


def run_session(tmp_path: Path, ws: Path, scenario, *server_args: str, env=None):
    """Start `python -m clawmem mcp -w WS ARGS` as an MCP client does and run ``scenario(session)``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "clawmem", "mcp", "-w", str(ws), *server_args],
        env=_env(**(env or {})),
    )
    errlog = tmp_path / "server-stderr.log"

    async def main():
        with open(errlog, "w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    return await scenario(session, init)

    return anyio.run(main)


def _text(result) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def _ok(result) -> dict:
    assert not result.is_error, _text(result)
    data = json.loads(_text(result))
    assert data == result.structured_content
    return data


def _error(result) -> str:
    assert result.is_error, _text(result)
    text = _text(result)
    assert text.startswith("clawmem: error: ")
    assert "Traceback" not in text
    return text


# ------------------------------------------------------------------------- with the real model


def test_every_tool_over_stdio_with_the_real_model(indexed, tmp_path):
    huge = "payments " * 600_000  # about 5 MB

    async def scenario(s, init):
        out = {"init": init}
        out["tools"] = (await s.list_tools()).tools
        out["semantic"] = await s.call_tool("memory_search", {"query": "a feline resting on a rug"})
        out["filtered"] = await s.call_tool(
            "memory_search",
            {"query": "replies", "kind": ["O"], "entity": "@Peter", "since": "2025-11", "k": 3},
        )
        out["budget"] = await s.call_tool(
            "memory_search", {"query": "payments deploy", "budget": 120}
        )
        out["get"] = await s.call_tool("memory_get", {"path": "MEMORY.md#L7-L8"})
        fact = {
            "text": "Miso the cat is afraid of the vacuum cleaner",
            "kind": "W",
            "entities": ["Miso"],
            "date": "2025-12-01",
        }
        out["retain"] = await s.call_tool("memory_retain", fact)
        out["recall_retained"] = await s.call_tool(
            "memory_search", {"query": "which household appliance scares the cat?", "k": 3}
        )
        out["retain_again"] = await s.call_tool("memory_retain", fact)
        out["status"] = await s.call_tool("memory_status", {})
        out["entities"] = await s.call_tool("memory_entities", {})
        # Bad arguments: each a tool error, and the server goes on answering.
        out["bad_kind"] = await s.call_tool("memory_search", {"query": "x", "kind": ["X"]})
        out["k0"] = await s.call_tool("memory_search", {"query": "payments", "k": 0})
        out["huge"] = await s.call_tool("memory_search", {"query": huge})
        out["outside"] = await s.call_tool("memory_get", {"path": "../../etc/passwd"})
        out["secret"] = await s.call_tool(
            "memory_retain",
            {"text": "the prod key is sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345"},
        )
        out["after"] = await s.call_tool("memory_search", {"query": "DEC-0054", "k": 1})
        return out

    out = run_session(tmp_path, indexed, scenario)

    assert out["init"].server_info.name == "clawmem"
    assert "memory_search" in out["init"].instructions
    tools = {t.name: t for t in out["tools"]}
    assert set(tools) == TOOL_NAMES
    for t in tools.values():
        assert len(t.description) > 80, t.name
        assert t.input_schema["type"] == "object"
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), f"{t.name}.{name}"
    assert tools["memory_search"].input_schema["required"] == ["query"]
    assert tools["memory_retain"].annotations.read_only_hint is False
    assert tools["memory_search"].annotations.read_only_hint is True

    semantic = _ok(out["semantic"])
    # The same stable JSON as `recall --json`, with vectors on.
    cli_json = json.loads(cli("-w", str(indexed), "recall", "x", "--json", "--no-sync").out)
    assert set(semantic) == set(cli_json)
    assert semantic["vectors"]["state"] == "ok"
    assert "Miso" in " ".join(r["snippet"] for r in semantic["results"][:2])

    filtered = _ok(out["filtered"])
    assert filtered["filters"]["entity"] == "Peter"
    assert filtered["filters"]["kind"] == ["O"]
    assert filtered["results"] and all(r.get("kind") == "O" for r in filtered["results"])

    packed = _ok(out["budget"])
    assert packed["budget"]["limit"] == 120 and packed["budget"]["used"] <= 120

    got = _ok(out["get"])
    lines = (indexed / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert got["text"] == "\n".join(lines[6:8]) and got["citation"] == "MEMORY.md#L7-L8"

    retained = _ok(out["retain"])
    assert retained["stored"] and retained["path"] == "memory/2025-12-01.md"
    found = _ok(out["recall_retained"])  # read-your-writes, found by meaning
    assert retained["source"] in [r["citation"] for r in found["results"]]
    again = _ok(out["retain_again"])
    assert again["stored"] is False and again["duplicate_of"] == retained["source"]

    status = _ok(out["status"])
    assert status["clean"] and status["vectors"]["state"] == "ok"
    entities = _ok(out["entities"])
    assert entities["count"] == len(entities["entities"])
    assert "Peter" in {e["entity"] for e in entities["entities"]}

    assert "unknown kind" in _error(out["bad_kind"])
    # The same error in each shell's words: the tool's argument, the command's option.
    assert _error(out["k0"]) == "clawmem: error: k=0: must be at least 1"
    k0 = cli("-w", str(indexed), "recall", "payments", "-k", "0")
    assert k0.code == 2 and k0.err.strip() == "clawmem: error: -k 0: must be at least 1"
    assert "the limit is 4,000" in _error(out["huge"])
    outside = _error(out["outside"])
    assert outside == cli("-w", str(indexed), "get", "../../etc/passwd").err.strip()
    assert "looks like" in _error(out["secret"])
    assert "DEC-0054" in _ok(out["after"])["results"][0]["snippet"]  # still answering


# ------------------------------------------------------------------------- plumbing, no model


def test_read_only_leaves_out_the_writing_tool(ws, tmp_path):
    async def scenario(s, init):
        names = {t.name for t in (await s.list_tools()).tools}
        return names, await s.call_tool("memory_retain", {"text": "anything"})

    names, retain = run_session(tmp_path, ws, scenario, "--read-only", env={"CLAWMEM_VECTORS": "0"})
    assert names == TOOL_NAMES - WRITING_TOOLS
    assert "--read-only" in _error(retain)
    assert not (ws / "memory" / "2025-12-01.md").exists()


def test_argument_errors_and_fresh_index_over_stdio(ws, tmp_path):
    log = ws / "memory" / "2025-11-30.md"

    async def scenario(s, init):
        out = {}
        out["unknown_tool"] = await s.call_tool("memory_delete", {})
        out["unknown_arg"] = await s.call_tool("memory_search", {"query": "x", "limit": 3})
        out["wrong_type"] = await s.call_tool("memory_search", {"query": "x", "k": "five"})
        out["missing"] = await s.call_tool("memory_get", {})
        out["bad_date"] = await s.call_tool(
            "memory_search", {"query": "x", "since": "last blue moon"}
        )
        out["past_end"] = await s.call_tool("memory_get", {"path": "MEMORY.md", "from": 9999})
        out["first"] = await s.call_tool("memory_search", {"query": "zeppelin", "mode": "lexical"})
        # Edited on disk while the server runs (by a person, or another agent): found next call.
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("\nPeter wants to ride a zeppelin over Vienna next summer.\n")
        out["second"] = await s.call_tool("memory_search", {"query": "zeppelin", "mode": "lexical"})
        # Nothing changed since: the server's own journal vouches, no file is statted.
        out["third"] = await s.call_tool("memory_search", {"query": "zeppelin", "mode": "lexical"})
        out["nulls"] = await s.call_tool(
            "memory_search", {"query": "zeppelin", "k": None, "kind": None, "since": None}
        )
        out["expand"] = await s.call_tool(
            "memory_search", {"query": "payments", "mode": "lexical", "expand": True}
        )
        return out

    out = run_session(tmp_path, ws, scenario, env={"CLAWMEM_VECTORS": "0"})
    assert "unknown tool 'memory_delete'" in _error(out["unknown_tool"])
    assert "unknown argument 'limit'" in _error(out["unknown_arg"])
    assert "'k' must be an integer, got \"five\"" in _error(out["wrong_type"])
    assert "'path' is required" in _error(out["missing"])
    assert "last blue moon" in _error(out["bad_date"])
    assert "has" in _error(out["past_end"]) and "lines" in _error(out["past_end"])
    first = _ok(out["first"])
    assert first["count"] == 0 and first["empty_reason"]
    second = _ok(out["second"])
    assert second["results"][0]["path"] == "memory/2025-11-30.md"
    assert any("synced" in n for n in second["notes"])
    assert second["index"]["fresh_by"] == "stat scan"
    third = _ok(out["third"])
    assert third["index"]["fresh_by"] == "own journal", third["index"]
    assert third["results"] == second["results"]
    assert _ok(out["nulls"])["count"] >= 1
    linked = [h for h in _ok(out["expand"])["results"] if "via" in h]
    assert linked and all(h["via"]["direction"] in ("outgoing", "backlink") for h in linked)


def _piped(ws: Path, lines: list[dict], *, stdout=subprocess.PIPE) -> subprocess.Popen:
    """The server with every request written to its stdin at once, and stdin then closed: a
    script's ``printf … | clawmem mcp``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawmem", "mcp", "-w", str(ws)],
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={**os.environ, "CLAWMEM_VECTORS": "0"},
    )
    assert proc.stdin is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode("utf-8"))
    proc.stdin.close()
    proc.stdin = None  # closed: communicate() has nothing to write
    return proc


_HELLO = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "script", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def test_requests_piped_in_are_answered_before_the_server_exits(ws):
    """stdin closed right after the last request: the client stopped asking, not listening. The
    SDK alone cancelled what was in flight, and the search's answer never came."""
    search = {"query": "Miso doormat", "k": 2}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "memory_search", "arguments": search}
    proc = _piped(ws, [*_HELLO, call])
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    answers = {m["id"]: m for m in map(json.loads, out.decode().splitlines()) if "id" in m}
    assert set(answers) == {1, 2}
    hits = json.loads(answers[2]["result"]["content"][0]["text"])["results"]
    assert hits and hits[0]["citation"] == "memory/2025-11-17.md#L39-L39"


def test_a_client_that_closes_stdout_ends_the_server_quietly(ws):
    """A client gone (its end of stdout closed) is not an internal error (exit 70 with a
    traceback hint, before): the server exits 0 and says nothing more."""
    r, w = os.pipe()
    os.close(r)  # nobody will read the answers
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "memory_status", "arguments": {}}
    with os.fdopen(w, "wb") as stdout:
        proc = _piped(ws, [*_HELLO, call], stdout=stdout)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert "error" not in err.decode()


def test_a_workspace_that_cannot_be_found_fails_at_start(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "clawmem", "mcp", "-w", str(tmp_path / "nowhere")],
        env={**os.environ, **_env()},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3
    assert proc.stdout == ""  # stdout belongs to the protocol
    assert proc.stderr.startswith("clawmem: error: ")


def test_other_commands_do_not_import_the_sdk():
    code = "import sys\nfrom clawmem.cli.app import app\nprint('mcp' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------------- argument checking


def _spec(name):
    return next(t for t in TOOLS if t.name == name)


def test_validate_arguments_types_and_limits():
    search = _spec("memory_search")
    assert validate_arguments(search, {"query": "x", "k": 3.0, "kind": "W"}) == {
        "query": "x",
        "k": 3,
        "kind": ["W"],
    }
    with pytest.raises(UsageError, match="'k' must be an integer, got true"):
        validate_arguments(search, {"query": "x", "k": True})
    with pytest.raises(UsageError, match="'query' is empty"):
        validate_arguments(search, {"query": "   "})
    with pytest.raises(UsageError, match="every item of 'kind' must be a string"):
        validate_arguments(search, {"query": "x", "kind": [1]})
    with pytest.raises(UsageError, match="arguments must be an object"):
        validate_arguments(search, ["x"])
    retain = _spec("memory_retain")
    with pytest.raises(UsageError, match="'entities' has 21 items"):
        validate_arguments(retain, {"text": "x", "entities": ["a"] * 21})
    assert validate_arguments(retain, {"text": "x", "confidence": 1}) == {
        "text": "x",
        "confidence": 1,
    }
