"""`clawmem mcp --http`: remote agents over the MCP SDK's streamable HTTP transport, with tokens.

The server is started as a user starts it (`python -m clawmem mcp --http HOST:PORT`), and every
client is the SDK's own streamable HTTP client (or, to look at a refusal, plain HTTP).
``CLAWMEM_HTTP_SECONDS`` sets how long the 100 concurrent clients run (default 5 s; the figure in
docs/agents.md is from a 60 s run).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .conftest import FIXTURE, cli_subprocess

pytestmark = pytest.mark.usefixtures("lexical")

SECONDS = float(os.environ.get("CLAWMEM_HTTP_SECONDS", "5"))
CLIENTS = 100


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, proc: subprocess.Popen, port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log
        self.url = f"http://127.0.0.1:{port}/mcp"

    def stop(self) -> str:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.log.read_text()


def start_server(ws: Path, tmp_path: Path, *args: str, host: str = "127.0.0.1") -> Server:
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "mcp", "--http", f"{host}:{port}", *args],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),  # the child keeps it
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited {proc.returncode}: {log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return Server(proc, port, log)
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"the server did not listen: {log.read_text()}")


@pytest.fixture
def two_workspaces(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a, b = tmp_path / "team-a", tmp_path / "team-b"
    shutil.copytree(FIXTURE, a)
    shutil.copytree(FIXTURE, b)
    (b / "memory" / "2025-12-09.md").write_text("# Dec 9\n\nThe zeppelin budget is secret to B.\n")
    return a, b


def token(name: str, ws: Path, *flags: str) -> str:
    r = cli_subprocess("token", "create", "--name", name, "-w", str(ws), *flags)
    assert r.code == 0, r.err
    return r.out.strip()


@asynccontextmanager
async def session(url: str, secret: str | None):
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


def text(result) -> str:
    return result.content[0].text


def snapshot(ws: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(ws).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(ws.rglob("*"))
        if p.is_file() and p.name != "access.log"
    }


def test_tokens_decide_who_reads_and_who_writes_which_workspace(two_workspaces, tmp_path):
    a, b = two_workspaces
    read_a = token("reader", a)
    write_a = token("writer", a, "--write")
    read_b = token("b-reader", b)
    server = start_server(a, tmp_path)
    day = a / "memory" / "2025-12-10.md"
    try:

        async def scenario():
            async with session(server.url, read_a) as s:
                names = {t.name for t in (await s.list_tools()).tools}
                assert "memory_search" in names and "memory_retain" not in names
                hits = await s.call_tool("memory_search", {"query": "Peter", "mode": "lexical"})
                assert not hits.is_error and json.loads(text(hits))["results"]
                denied = await s.call_tool(
                    "memory_retain", {"text": "Readers cannot write.", "date": "2025-12-10"}
                )
                assert denied.is_error and "this token may only read" in text(denied)
                assert not day.exists()
                # B's notes are not in A's server, whatever the token.
                res = await s.call_tool("memory_search", {"query": "zeppelin", "mode": "lexical"})
                assert json.loads(text(res))["results"] == []
            async with session(server.url, write_a) as s:
                names = {t.name for t in (await s.list_tools()).tools}
                assert "memory_retain" in names
                ok = await s.call_tool(
                    "memory_retain", {"text": "Writers can write.", "date": "2025-12-10"}
                )
                assert not ok.is_error, text(ok)
            assert "Writers can write." in day.read_text()

        anyio.run(scenario)

        # Refused before anything reads the workspace: no token, a wrong one, B's token. (The
        # access log records each refusal: it is the server's own line, not the workspace's.)
        before = snapshot(a)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        for secret in (None, "cmt_not-a-real-token", read_b, f"{read_a}x"):
            headers = {"Accept": "application/json, text/event-stream"}
            if secret:
                headers["Authorization"] = f"Bearer {secret}"
            r = httpx2.post(server.url, json=body, headers=headers, timeout=30)
            assert r.status_code == 401, r.text
            assert r.headers["www-authenticate"].startswith("Bearer")
            assert secret is None or secret not in r.text  # errors never echo a token
        assert snapshot(a) == before

        # Behind a TLS proxy the Host header is the public name: with a token it is served.
        headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {read_a}",
            "Host": "memory.example.com",
        }
        r = httpx2.post(server.url, json=body, headers=headers, timeout=30)
        assert r.status_code == 200, r.text
        assert "memory_search" in r.text and "memory_retain" not in r.text

        # A revoked token stops working at its next request, without a restart.
        assert cli_subprocess("token", "revoke", "writer").code == 0

        async def revoked():
            with pytest.raises(Exception):  # noqa: B017 - the SDK reports the 401 its own way
                async with session(server.url, write_a):
                    pass

        anyio.run(revoked)
    finally:
        log = server.stop()
    for secret in (read_a, write_a, read_b):
        assert secret not in log


def test_any_address_but_loopback_needs_tokens(two_workspaces, tmp_path):
    a, _ = two_workspaces
    r = cli_subprocess("-w", str(a), "mcp", "--http", f"0.0.0.0:{free_port()}", timeout=60)
    assert r.code != 0
    assert r.err.startswith("clawmem: error: serving on 0.0.0.0 (not loopback) needs a token")
    assert "clawmem token create" in r.err
    bad = cli_subprocess("-w", str(a), "mcp", "--http", "nowhere")
    assert bad.code != 0 and "'nowhere' is not HOST:PORT" in bad.err


def test_loopback_without_tokens_is_open(two_workspaces, tmp_path):
    a, _ = two_workspaces
    server = start_server(a, tmp_path)
    try:

        async def scenario():
            async with session(server.url, None) as s:
                res = await s.call_tool("memory_search", {"query": "Peter", "mode": "lexical"})
                assert not res.is_error

        anyio.run(scenario)
        # Without tokens the SDK's DNS-rebinding check stays: a page's foreign Host is refused.
        r = httpx2.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"Accept": "application/json, text/event-stream", "Host": "evil.example"},
            timeout=30,
        )
        assert r.status_code in (400, 403, 421), r.status_code
    finally:
        log = server.stop()
    assert "no token needed on loopback" in log


def test_a_tokenless_loopback_server_only_reads_unless_told(two_workspaces, tmp_path):
    """Without a token a loopback server wrote for anyone: every user of the machine can reach
    a loopback port, so another account's process retained into this user's notes (and could
    accept proposals). Without a token it now only reads; --tokenless-write is the opt-in."""
    a, _ = two_workspaces
    day = a / "memory" / "2025-12-10.md"
    retain = {"text": "Another user wrote this.", "date": "2025-12-10"}
    server = start_server(a, tmp_path)
    try:

        async def scenario():
            async with session(server.url, None) as s:
                names = {t.name for t in (await s.list_tools()).tools}
                assert "memory_search" in names and "memory_retain" not in names
                denied = await s.call_tool("memory_retain", retain)
                assert denied.is_error and "without a token this server only reads" in text(denied)

        anyio.run(scenario)
    finally:
        log = server.stop()
    assert not day.exists()
    assert "no token needed on loopback until one is created; without one it only reads" in log
    # The start-up line names the tools served without a token: the readers alone.
    announced = next(line for line in log.splitlines() if "clawmem mcp: serving" in line)
    assert "memory_search" in announced and "memory_retain" not in announced, announced

    server = start_server(a, tmp_path, "--tokenless-write")
    try:

        async def opted_in():
            async with session(server.url, None) as s:
                ok = await s.call_tool("memory_retain", retain)
                assert not ok.is_error, text(ok)

        anyio.run(opted_in)
    finally:
        log = server.stop()
    assert "Another user wrote this." in day.read_text()
    assert "without one it writes too" in log


def test_a_hundred_concurrent_clients_get_no_errors(two_workspaces, tmp_path):
    a, _ = two_workspaces
    secret = token("load", a)
    server = start_server(a, tmp_path)
    queries = ["Peter", "WhatsApp", "payments", "DEC-0054", "Marrakech", "kestrel", "Rust"]
    latencies: list[float] = []
    errors: list[str] = []

    async def client(n: int, stop_at: float) -> None:
        try:
            async with session(server.url, secret) as s:
                i = n
                while True:  # at least one search each, however slow the start
                    t0 = time.monotonic()
                    args = {"query": queries[i % len(queries)], "mode": "lexical", "k": 3}
                    res = await s.call_tool("memory_search", args)
                    latencies.append(time.monotonic() - t0)
                    if res.is_error:
                        errors.append(text(res))
                    i += 1
                    if time.monotonic() >= stop_at:
                        break
        except Exception as exc:  # noqa: BLE001 - every failure is counted, not raised
            errors.append(repr(exc))

    async def load():
        stop_at = time.monotonic() + SECONDS
        async with anyio.create_task_group() as tg:
            for n in range(CLIENTS):
                tg.start_soon(client, n, stop_at)

    try:
        t0 = time.monotonic()
        anyio.run(load)
        wall = time.monotonic() - t0
    finally:
        server.stop()
    assert errors == [], errors[:3]
    assert len(latencies) >= CLIENTS
    q = statistics.quantiles(latencies, n=100)
    print(
        f"\n{CLIENTS} clients for {SECONDS:.0f} s: {len(latencies)} searches in {wall:.1f} s "
        f"({len(latencies) / wall:.0f}/s), 0 errors, latency p50 {q[49] * 1000:.0f} ms, "
        f"p99 {q[98] * 1000:.0f} ms"
    )


def test_token_commands_store_only_hashes(two_workspaces, tmp_path):
    a, b = two_workspaces
    store = tmp_path / "tokens.json"
    r = cli_subprocess("token", "create", "--name", "both", "-w", str(a), "-w", str(b), "--write")
    assert r.code == 0, r.err
    secret = r.out.strip()
    assert secret.startswith("cmt_") and r.out.count("\n") == 1  # stdout: the secret alone
    assert "shown only now" in r.err and secret not in r.err
    assert secret not in store.read_text()  # only its hash is kept
    assert store.stat().st_mode & 0o777 == 0o600
    listed = cli_subprocess("token", "list", "--json")
    (row,) = json.loads(listed.out)["tokens"]
    assert row["name"] == "both" and row["write"] is True
    assert row["workspaces"] == [str(a.resolve()), str(b.resolve())]
    assert secret not in listed.out and "sha256" not in row
    dup = cli_subprocess("token", "create", "--name", "both", "-w", str(a))
    assert dup.code != 0 and "exists already" in dup.err
    gone = cli_subprocess("token", "revoke", "nobody")
    assert gone.code != 0 and gone.err.startswith("clawmem: error: no token 'nobody'")
    store.write_text("{broken")
    bad = cli_subprocess("token", "list")
    assert bad.code == 4 and f"{store}: not a clawmem token store" in bad.err


def test_a_server_whose_workspace_is_removed_stops(tmp_path, monkeypatch):
    """`clawmem mcp --http` outlived its workspace: `rm -rf` of the folder left it answering
    every request with an error for as long as it ran. It stops within a few seconds, exit 3
    with one line naming the folder, and makes nothing there."""
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    server = start_server(ws, tmp_path)
    try:
        shutil.rmtree(ws)
        assert server.proc.wait(timeout=15) == 3
    finally:
        err = server.stop()
    assert f"clawmem: error: {ws}: the workspace folder was removed; the server stopped" in err
    assert not ws.exists()
