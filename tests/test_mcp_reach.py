"""Over HTTP a token reaches exactly what it names (issue 40): read scopes and conversation
transcripts only where the token names them; tokens created or revoked apply to a running server
at once; no absolute path reaches a remote client; one access-log line per request, never the
token; CORS from an allow-list; the 401's reason reaches the SDK's client.

Each server is `python -m clawmem mcp --http 127.0.0.1:PORT` as a user starts it, each client
the MCP SDK's own streamable HTTP client (or plain HTTP where a browser's request is the point).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import anyio
import httpx2
import pytest

from .conftest import FIXTURE, REPO, approve, cli, cli_subprocess
from .test_mcp_http import session, start_server, text, token

pytestmark = pytest.mark.usefixtures("lexical")

ACCEPT = {"Accept": "application/json, text/event-stream"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.fixture
def mine(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """Workspace A reads scope ``me`` (another workspace, with a private note) and conversation
    transcripts, both outside it, approved by the user."""
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a, me = tmp_path / "a", tmp_path / "me"
    shutil.copytree(FIXTURE, a)
    shutil.copytree(FIXTURE, me)
    (me / "memory" / "2025-12-09.md").write_text(
        "# 2025-12-09\n\nThe zeppelin budget is private to me.\n", encoding="utf-8"
    )
    shutil.copytree(REPO / "fixtures" / "sessions", tmp_path / "transcripts")
    (a / "clawmem.toml").write_text(
        f'[scopes]\nme = "../me"\n\n[sessions]\npaths = ["{tmp_path / "transcripts"}"]\n',
        encoding="utf-8",
    )
    approve(a)
    assert cli("-w", str(me), "index").code == 0
    assert cli("-w", str(a), "index").code == 0
    return a, me


def calls(url: str, secret: str | None, todo: list[tuple[str, dict]]) -> list:
    async def go():
        async with session(url, secret) as s:
            return [await s.call_tool(name, args) for name, args in todo]

    return anyio.run(go)


def scoped(result) -> list[str]:
    data = json.loads(text(result))
    return [h["citation"] for h in data["results"] if h["citation"].startswith("me:")]


def origins(result) -> set[str]:
    return {h["origin"] for h in json.loads(text(result))["results"]}


def test_a_token_reaches_only_the_scopes_and_transcripts_it_names(mine, tmp_path):
    a, me = mine
    plain = token("plain", a)
    with_scope = token("with-scope", a, "--scope", "me")
    with_sessions = token("with-sessions", a, "--sessions")
    listed = json.loads(cli_subprocess("token", "list", "--json").out)["tokens"]
    assert [(t["name"], t["scopes"], t["sessions"]) for t in listed] == [
        ("plain", [], False),
        ("with-scope", ["me"], False),
        ("with-sessions", [], True),
    ]
    server = start_server(a, tmp_path)
    private = "me:memory/2025-12-09.md"
    todo = [
        ("memory_search", {"query": "zeppelin budget", "mode": "lexical"}),
        ("memory_get", {"path": private}),
        ("memory_search", {"query": "staging Redis port 6380", "mode": "lexical"}),
        ("memory_search", {"query": "staging Redis", "mode": "lexical", "source": "sessions"}),
        ("memory_status", {}),
    ]
    try:
        found, got, redis, only_sessions, status = calls(server.url, plain, todo)
        assert scoped(found) == []
        assert got.is_error and "this token does not reach scope 'me'" in text(got)
        assert "sessions" not in origins(redis)
        assert only_sessions.is_error and "does not reach conversation transcripts" in text(
            only_sessions
        )
        st = json.loads(text(status))
        assert st.get("scopes", []) == [] and st["sessions"]["folders"] == []

        found, got, redis, only_sessions, _ = calls(server.url, with_scope, todo)
        assert scoped(found) and not got.is_error
        assert "zeppelin" in json.loads(text(got))["text"]
        assert only_sessions.is_error

        found, got, redis, only_sessions, _ = calls(server.url, with_sessions, todo)
        assert scoped(found) == [] and got.is_error
        assert origins(only_sessions) == {"sessions"}
        # A transcript is read back only with the token that reaches it.
        cite = json.loads(text(only_sessions))["results"][0]["citation"]
        (back,) = calls(server.url, with_sessions, [("memory_get", {"path": cite})])
        assert not back.is_error
        (refused,) = calls(server.url, plain, [("memory_get", {"path": cite})])
        assert refused.is_error and "transcripts" in text(refused)
    finally:
        log = server.stop()
    for secret in (plain, with_scope, with_sessions):
        assert secret not in log


def test_no_absolute_path_reaches_a_remote_client(mine, tmp_path):
    a, me = mine
    # A second scope with no index: its problem is reported, as a path a client may see.
    (tmp_path / "gone").mkdir()
    (a / "clawmem.toml").write_text(
        f'[scopes]\nme = "../me"\ngone = "../gone"\n\n'
        f'[sessions]\npaths = ["{tmp_path / "transcripts"}"]\n',
        encoding="utf-8",
    )
    approve(a)
    secret = token("everything", a, "--scope", "me", "--scope", "gone", "--sessions", "--write")
    server = start_server(a, tmp_path)
    seen: list[str] = []

    async def go():
        async with session(server.url, secret) as s:
            init = await s.initialize()
            seen.append(init.instructions or "")
            for name, args in [
                ("memory_search", {"query": "zeppelin budget", "mode": "lexical"}),
                ("memory_search", {"query": "staging Redis", "mode": "lexical"}),
                ("memory_status", {}),
                ("memory_get", {"path": "../../etc/passwd"}),
                ("memory_get", {"path": str(a / "MEMORY.md")}),
                ("memory_get", {"path": "memory/1999-01-01.md"}),
                ("memory_retain", {"text": "x", "date": "last blue moon"}),
                ("memory_entities", {}),
            ]:
                seen.append(text(await s.call_tool(name, args)))

    try:
        anyio.run(go)
    finally:
        server.stop()
    assert "Workspace: a\n" in seen[0]
    everything = "\n".join(seen)
    assert "gone" in everything and "not indexed" in everything  # said, without where
    for place in {str(tmp_path), str(tmp_path.resolve()), str(Path.home())}:
        assert place not in everything
    assert "/tmp/" not in everything and "/root/" not in everything


def test_tokens_apply_to_a_running_server_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    server = start_server(a, tmp_path)
    retain = {"text": "The tokenless writer wrote this.", "date": "2025-12-10"}
    try:
        (ok,) = calls(server.url, None, [("memory_search", {"query": "Peter", "mode": "lexical"})])
        assert not ok.is_error
        # The first token for the workspace: from now on every request needs one.
        reader = token("ro-a", a)
        r = httpx2.post(server.url, json=LIST, headers=ACCEPT, timeout=30)
        assert r.status_code == 401
        body = r.json()  # a JSON-RPC error that says why
        assert body["jsonrpc"] == "2.0" and body["error"]["message"].startswith("unauthorized: ")
        assert "no token was sent" in body["error"]["message"]

        # The SDK's client sees that reason, not "Server returned an error response".
        async def without_token():
            async with session(server.url, None) as s:
                await s.call_tool("memory_retain", retain)

        with pytest.raises(Exception) as refused:  # the SDK's own error type
            anyio.run(without_token)
        assert "unauthorized: no token was sent" in repr(refused.value)
        assert not (a / "memory" / "2025-12-10.md").exists()
        (ok,) = calls(server.url, reader, [("memory_search", {"query": "Peter"})])
        assert not ok.is_error
        assert cli_subprocess("token", "revoke", "ro-a").code == 0
        r = httpx2.post(
            server.url, json=LIST, headers={**ACCEPT, "Authorization": f"Bearer {reader}"}
        )
        assert r.status_code == 401 and "not valid here" in r.json()["error"]["message"]
        assert reader not in r.text
    finally:
        log = server.stop()
    assert "no token needed on loopback until one is created" in log


def test_a_scopes_transcript_is_read_back_and_only_with_sessions(tmp_path, monkeypatch):
    """recall cites a read scope's own transcript as `me:sessions/…`, and `get` of that citation
    was "not a memory file". Read back now, it is a transcript like the workspace's own: over
    HTTP it needs a token naming both the scope and --sessions."""
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a, me = tmp_path / "a", tmp_path / "me"
    shutil.copytree(FIXTURE, a)
    shutil.copytree(FIXTURE, me)
    shutil.copytree(REPO / "fixtures" / "sessions" / "openclaw", tmp_path / "theirs")
    (me / "clawmem.toml").write_text(f'[sessions]\npaths = ["{tmp_path / "theirs"}"]\n')
    (a / "clawmem.toml").write_text('[scopes]\nme = "../me"\n')
    approve(me)
    approve(a)
    assert cli("-w", str(me), "index").code == 0
    assert cli("-w", str(a), "index").code == 0
    hits = json.loads(cli("-w", str(a), "recall", "staging Redis port", "--json").out)["results"]
    cited = next(h["citation"] for h in hits if h["citation"].startswith("me:sessions/"))
    r = cli("-w", str(a), "get", cited, "--json")
    assert r.code == 0, r.err
    got = json.loads(r.out)
    assert got["citation"] == cited and got["messages"], got
    scope_only = token("scope-only", a, "--scope", "me")
    both = token("both", a, "--scope", "me", "--sessions")
    server = start_server(a, tmp_path)
    try:
        (refused,) = calls(server.url, scope_only, [("memory_get", {"path": cited})])
        (read,) = calls(server.url, both, [("memory_get", {"path": cited})])
    finally:
        server.stop()
    assert refused.is_error and "does not reach conversation transcripts" in text(refused)
    assert not read.is_error and json.loads(text(read))["text"] == got["text"]


def test_an_absolute_path_tells_a_token_nothing_of_what_it_does_not_reach(mine, tmp_path):
    """A remote error names places as the client may see them; every configured scope and
    transcript folder was named, so memory_get of an absolute path under the scope's folder
    answered "me:memory/2025-12-09.md: outside the workspace": the scope's name and where it
    lives, to a token that does not reach it. It is cut to its last part, as any other path."""
    a, me = mine
    plain = token("plain", a)
    with_scope = token("with-scope", a, "--scope", "me")
    scoped_file = str(me / "memory" / "2025-12-09.md")
    transcript = str(next((tmp_path / "transcripts").rglob("*.jsonl")))
    server = start_server(a, tmp_path)
    try:
        got = calls(
            server.url,
            plain,
            [("memory_get", {"path": scoped_file}), ("memory_get", {"path": transcript})],
        )
        (named,) = calls(server.url, with_scope, [("memory_get", {"path": scoped_file})])
    finally:
        server.stop()
    for result in got:
        said = text(result)
        assert result.is_error and "outside the workspace" in said, said
        assert "me:" not in said and "sessions/" not in said and str(tmp_path) not in said, said
    assert "…/2025-12-09.md" in text(got[0])
    assert "me:memory/2025-12-09.md" in text(named)  # the scope it reaches keeps its name


def test_one_access_log_line_per_request_never_the_token(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    secret = token("laptop agent", a)
    server = start_server(a, tmp_path)
    try:
        calls(
            server.url,
            secret,
            [
                ("memory_search", {"query": "what did Peter\nsay about DEC-0054?"}),
                ("memory_get", {"path": "../../etc/passwd"}),
            ],
        )
        httpx2.post(server.url, json=LIST, headers=ACCEPT, timeout=30)  # no token: refused
    finally:
        server.stop()
    path = a / ".memory" / "access.log"
    assert path.stat().st_mode & 0o777 == 0o600
    lines = path.read_text(encoding="utf-8").splitlines()
    # The SDK's session: initialize, its notification, the two calls; then the refusal.
    calls_ = [ln for ln in lines if "method=tools/call" in ln]
    assert len(calls_) == 2, lines
    assert (
        'token="laptop agent"' in calls_[0]
        and "tool=memory_search status=200 result=ok" in calls_[0]
    )
    assert "tool=memory_get status=200 result=tool-error" in calls_[1]
    assert "method=initialize" in lines[0]
    assert lines[-1].split()[1:3] == ["token=-", "method=tools/list"]
    assert "status=401 result=refused" in lines[-1]
    text_ = "\n".join(lines)
    assert secret not in text_ and "DEC-0054" not in text_  # no query unless asked
    assert all(ln[:4].isdigit() and " ms=" in ln for ln in lines)

    # With http_log_queries, the question too, as one JSON string: it cannot start a line.
    monkeypatch.setenv("CLAWMEM_HTTP_LOG_QUERIES", "1")
    server = start_server(a, tmp_path)
    try:
        calls(server.url, secret, [("memory_search", {"query": "Peter\nforged line"})])
    finally:
        server.stop()
    last = [ln for ln in path.read_text().splitlines() if "tool=memory_search" in ln][-1]
    assert last.endswith('query="Peter\\nforged line"')
    assert not any(ln.startswith("forged") for ln in path.read_text().splitlines())


def test_a_question_in_the_access_log_is_redacted(tmp_path, monkeypatch):
    """With http_log_queries the question was written as the client sent it: a password or a
    token asked about reached .memory/access.log, a file clawmem writes, unredacted. So did a
    method or tool name a client made up."""
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    monkeypatch.setenv("CLAWMEM_HTTP_LOG_QUERIES", "1")
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    secret = token("agent", a)
    planted = "ghp_" + "Zq7" * 12
    server = start_server(a, tmp_path)
    try:
        calls(
            server.url,
            secret,
            [("memory_search", {"query": "is the wifi password is Hunter2-Blue? Peter"})],
        )
        bad = {"jsonrpc": "2.0", "id": 2, "method": f"x {planted}", "params": {}}
        httpx2.post(
            server.url,
            json=bad,
            headers={**ACCEPT, "Authorization": f"Bearer {secret}"},
            timeout=30,
        )
    finally:
        server.stop()
    log = (a / ".memory" / "access.log").read_text(encoding="utf-8")
    asked = [ln for ln in log.splitlines() if "tool=memory_search" in ln][-1]
    assert asked.endswith('query="is the wifi password is [redacted]? Peter"'), asked
    assert "Hunter2" not in log and planted not in log and secret not in log
    assert 'method="x [redacted]"' in log, log


def test_a_request_nested_too_deeply_is_still_one_access_log_line(tmp_path, monkeypatch):
    """The gate read a request's body as JSON for its log line with Python's parser: a body of
    100,000 nested lists raised RecursionError after the answer, the request left no line in
    the access log and a traceback on the server's stderr. Guessing tokens that way, refused
    or not, was never logged."""
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    secret = token("agent", a)
    deep = b"[" * 100_000 + b"]" * 100_000
    server = start_server(a, tmp_path)
    try:
        for auth in (
            {},
            {"Authorization": "Bearer cmt_guessed"},
            {"Authorization": f"Bearer {secret}"},
        ):
            r = httpx2.post(server.url, content=deep, headers={**ACCEPT, **auth}, timeout=30)
            assert r.status_code in (400, 401), r.status_code
    finally:
        err = server.stop()
    lines = (a / ".memory" / "access.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3, lines
    assert ["status=401" in ln for ln in lines] == [True, True, False]
    assert "token=agent" in lines[2] and "result=error" in lines[2]
    assert "Traceback" not in err and "RecursionError" not in err, err


def test_a_linked_access_log_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    (a / ".memory").mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    os.symlink(victim, a / ".memory" / "access.log")
    r = cli_subprocess("-w", str(a), "mcp", "--http", "127.0.0.1:0", timeout=60)
    assert r.code != 0 and "access.log: is a symbolic link" in r.err
    assert victim.read_text() == "mine\n"


def test_cors_is_answered_from_the_allow_list(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    monkeypatch.setenv("CLAWMEM_HTTP_CORS_ORIGINS", "https://app.example")
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    secret = token("web", a)
    server = start_server(a, tmp_path)
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    try:
        ok = httpx2.options(server.url, headers={**preflight, "Origin": "https://app.example"})
        assert ok.status_code == 204, ok.text  # no 401: a preflight carries no token
        assert ok.headers["access-control-allow-origin"] == "https://app.example"
        assert "authorization" in ok.headers["access-control-allow-headers"]
        assert "POST" in ok.headers["access-control-allow-methods"]
        bad = httpx2.options(server.url, headers={**preflight, "Origin": "https://evil.example"})
        assert bad.status_code == 403 and "access-control-allow-origin" not in bad.headers
        # The 401 reaches a page of an allowed origin with its reason readable.
        r = httpx2.post(server.url, json=LIST, headers={**ACCEPT, "Origin": "https://app.example"})
        assert r.status_code == 401
        assert r.headers["access-control-allow-origin"] == "https://app.example"
        assert "www-authenticate" in r.headers["access-control-expose-headers"]
        r = httpx2.post(
            server.url,
            json=LIST,
            headers={
                **ACCEPT,
                "Origin": "https://app.example",
                "Authorization": f"Bearer {secret}",
            },
        )
        assert (
            r.status_code == 200
            and r.headers["access-control-allow-origin"] == "https://app.example"
        )
    finally:
        server.stop()


def test_a_tokenless_loopback_server_refuses_foreign_pages(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    a = tmp_path / "a"
    shutil.copytree(FIXTURE, a)
    server = start_server(a, tmp_path)
    try:
        r = httpx2.post(server.url, json=LIST, headers={**ACCEPT, "Origin": "https://evil.example"})
        assert r.status_code == 403
        r = httpx2.post(
            server.url, json=LIST, headers={**ACCEPT, "Origin": "http://localhost:3000"}
        )
        assert r.status_code == 200
    finally:
        server.stop()
