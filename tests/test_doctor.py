"""`clawmem doctor`: the whole setup checked, each broken part named with its fix, the exit code
non-zero only when something is broken. Run as a user runs it (a fresh process), on real
workspaces, real git repositories, the real model and a real (dead) socket."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess

import pytest

from .conftest import cli_subprocess


def _doctor(ws, *args: str, env: dict | None = None):
    r = cli_subprocess("-w", str(ws), "doctor", "--json", *args, env=env)
    return r, json.loads(r.out)


def _find(data: dict, area: str, check: str) -> dict:
    found = [f for f in data["findings"] if f["area"] == area and f["check"] == check]
    assert found, [(f["area"], f["check"]) for f in data["findings"]]
    return found[0]


def _git_init(ws) -> None:
    r = cli_subprocess("-w", str(ws), "init", "--git")
    assert r.code == 0, r.err


def test_a_sound_setup_is_found_sound(indexed):
    _git_init(indexed)
    r, data = _doctor(indexed)
    assert r.code == 0, r.out + r.err
    assert data["ok"] is True and data["counts"]["fail"] == 0, data
    for check in ("python", "dependencies", "sqlite extensions", "fts5", "sqlite-vec"):
        assert _find(data, "install", check)["state"] == "ok"
    loads = _find(data, "model", "loads")
    assert loads["state"] == "ok" and "sha256" in loads["detail"]
    assert _find(data, "index", "vectors")["state"] == "ok"
    assert _find(data, "git", "hooks")["state"] == "ok"
    assert _find(data, "git", "merge driver")["state"] == "ok"
    assert _find(data, "config", "permissions")["state"] == "ok"
    assert _find(data, "config", "approval")["state"] == "ok"
    human = cli_subprocess("-w", str(indexed), "doctor", env={"NO_COLOR": "1"})
    assert human.code == 0
    assert human.out.splitlines()[-1].startswith("clawmem doctor: ")


@pytest.mark.usefixtures("lexical")
def test_each_broken_part_is_named_with_its_fix(ws, tmp_path):
    _git_init(ws)
    hook = ws / ".git" / "hooks" / "pre-commit"
    gone = str(tmp_path / "gone" / "python3")
    import sys

    hook.write_text(hook.read_text().replace(sys.executable, gone))
    subprocess.run(
        ["git", "config", "merge.clawmem.driver", f"{gone} -m clawmem merge-driver %O %A %B %P"],
        cwd=ws,
        check=True,
    )
    toml = ws / "clawmem.toml"
    toml.chmod(toml.stat().st_mode | stat.S_IWOTH)
    bin_dir = tmp_path / "bin"  # a PATH without any `clawmem` for the hook to fall back on
    bin_dir.mkdir()
    env = {
        "PATH": f"{bin_dir}:{os.path.dirname(subprocess.check_output(['which', 'git'], text=True).strip())}"
    }
    r, data = _doctor(ws, env=env)
    assert r.code == 11, r.err
    assert r.err.startswith("clawmem: error: 2 broken"), r.err
    commit = _find(data, "git", "pre-commit hook")
    assert commit["state"] == "fail" and gone in commit["detail"]
    assert commit["fix"].startswith("clawmem hook install")
    driver = _find(data, "git", "merge driver")
    assert driver["state"] == "fail" and driver["fix"].startswith("clawmem hook install")
    trust = _find(data, "config", "permissions")
    assert trust["state"] == "warn" and "writable by other users" in trust["detail"]
    assert trust["fix"].startswith("chmod go-w clawmem.toml")
    index = _find(data, "index", "index")
    assert index["state"] == "warn" and index["fix"] == "clawmem index"
    # Each fix, as named, makes its finding go away.
    assert cli_subprocess("-w", str(ws), "hook", "install").code == 0
    toml.chmod(0o644)
    assert cli_subprocess("-w", str(ws), "index").code == 0
    r, data = _doctor(ws)
    assert r.code == 0, r.out
    assert data["counts"]["fail"] == 0 and data["counts"]["warn"] == 0, data


@pytest.mark.usefixtures("lexical")
def test_a_bad_config_and_no_workspace_are_findings_too(ws, tmp_path):
    (ws / "clawmem.toml").write_text('k = "six"\n', encoding="utf-8")
    r, data = _doctor(ws)
    assert r.code == 11
    cfg = _find(data, "config", "clawmem.toml")
    assert cfg["state"] == "fail" and "k = 'six'" in cfg["detail"] and cfg["fix"]
    assert _find(data, "install", "python")["state"] == "ok"  # the rest is still checked
    r = cli_subprocess("doctor", "--json", cwd=tmp_path, env={"CLAWMEM_WORKSPACE": ""})
    assert r.code == 11
    where = _find(json.loads(r.out), "workspace", "workspace")
    assert where["state"] == "fail" and "clawmem init" in where["fix"]


def test_a_socket_left_by_a_killed_embedder_is_named(indexed, tmp_path, monkeypatch):
    from clawmem.config import load_config
    from clawmem.embedders.model_choice import configured_identity
    from clawmem.embedders.resident.client import spec_for

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("CLAWMEM_RUNTIME_DIR", str(runtime))
    cfg = load_config(indexed)
    spec = spec_for(indexed, cfg, configured_identity(indexed, cfg))
    sock_path, _, _ = spec.paths(runtime)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(sock_path))
    s.close()  # the file stays; nothing listens: what a killed embedder leaves
    r, data = _doctor(indexed, "--no-model")
    resident = _find(data, "resident", "embedder")
    assert resident["state"] == "warn" and "no embedder behind it" in resident["detail"]
    assert resident["fix"] == f"rm {sock_path}"
    assert r.code == 0  # a warning: the next recall replaces it


@pytest.mark.usefixtures("lexical")
def test_a_config_that_reaches_outside_is_checked_for_approval(ws, tmp_path):
    (ws / "clawmem.toml").write_text(f'[scopes]\nteam = "{tmp_path}"\n', encoding="utf-8")
    r, data = _doctor(ws)
    approval = _find(data, "config", "approval")
    assert approval["state"] == "warn" and "not approved on this machine" in approval["detail"]
    assert approval["fix"].endswith("then clawmem trust")
    assert cli_subprocess("-w", str(ws), "trust").code == 0
    r, data = _doctor(ws)
    assert _find(data, "config", "approval")["state"] == "ok"


@pytest.mark.usefixtures("lexical")
def test_a_driver_whose_python_is_gone_is_named_with_what_it_falls_back_on(ws, tmp_path):
    from clawmem.cli.git_hooks import register_driver

    _git_init(ws)
    register_driver(ws, str(tmp_path / "gone" / "python3"))
    git_dir = os.path.dirname(subprocess.check_output(["which", "git"], text=True).strip())
    bin_dir = tmp_path / "bin"  # no `clawmem` on this PATH
    bin_dir.mkdir()
    _, data = _doctor(ws, env={"PATH": f"{bin_dir}:{git_dir}"})
    driver = _find(data, "git", "merge driver")
    assert driver["state"] == "warn" and "git's own merge" in driver["detail"], driver
    assert driver["fix"].startswith("clawmem hook install")
    # An older registration, without the fallbacks: named, to re-register.
    subprocess.run(
        ["git", "config", "merge.clawmem.driver", "python3 -m clawmem merge-driver %O %A %B %P"],
        cwd=ws,
        check=True,
    )
    _, data = _doctor(ws)
    driver = _find(data, "git", "merge driver")
    assert driver["state"] == "warn" and "older clawmem" in driver["detail"], driver
