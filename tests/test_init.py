"""`clawmem init`: a new workspace in one command, safe to run again, in a clone, or over files a
person already has."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from clawmem.config import load_config
from clawmem.markdown.scaffold import CONFIG_TOML

from .conftest import cli, cli_subprocess

pytestmark = pytest.mark.usefixtures("lexical")

HOOKS = ("pre-commit", "post-merge", "post-checkout", "post-rewrite")


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
    }


def test_init_creates_a_workspace_a_person_recognises_and_says_so(tmp_path):
    ws = tmp_path / "notes"
    r = cli("init", str(ws))
    assert r.code == 0, r.err
    for name in ("memory/", "bank/", "bank/entities/", "MEMORY.md", "clawmem.toml"):
        assert f"created  {name}" in r.out
    assert (ws / "memory").is_dir() and (ws / "bank" / "entities").is_dir()
    assert (ws / "MEMORY.md").read_text().startswith("# Memory\n")
    assert (ws / ".gitignore").read_text().splitlines()[-1] == ".memory/"
    assert "memory/** merge=clawmem" in (ws / ".gitattributes").read_text()
    assert "not a git repository" in r.out

    # The commented settings are valid TOML that sets nothing: every value is the default.
    assert load_config(ws, environ={}).sources == {}
    assert all(line.startswith("#") or not line.strip() for line in CONFIG_TOML.splitlines()), (
        "clawmem.toml must set nothing"
    )

    # It is a workspace: retain and recall work in it at once.
    assert cli("-w", str(ws), "retain", "Peter prefers tea", "-e", "Peter").code == 0
    res = cli("-w", str(ws), "recall", "tea", "--json")
    assert json.loads(res.out)["results"][0]["path"].startswith("memory/")


def test_init_again_changes_nothing(tmp_path):
    ws = tmp_path / "notes"
    assert cli("init", str(ws), "--git").code == 0
    before = tree(ws)
    hooks = {h: (ws / ".git" / "hooks" / h).read_bytes() for h in HOOKS}
    r = cli("init", str(ws))
    assert r.code == 0, r.err
    assert "created" not in r.out and "updated" not in r.out
    assert r.out.count("exists") == 12  # 7 workspace entries, 4 hooks, the merge driver
    assert tree(ws) == before
    assert {h: (ws / ".git" / "hooks" / h).read_bytes() for h in HOOKS} == hooks


def test_init_never_overwrites_what_a_person_wrote(tmp_path):
    ws = tmp_path / "notes"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory.md").write_text("# my core, lower case\n")
    (ws / "clawmem.toml").write_text("k = 9\n")
    (ws / ".gitignore").write_text("node_modules/\r\n*.log")  # CRLF, no final newline
    (ws / ".gitattributes").write_text("*.png binary\nbank/** merge=clawmem\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    r = cli("init", str(ws))
    assert r.code == 0, r.err
    assert not (ws / "MEMORY.md").exists()  # memory.md is the core already
    assert (ws / "memory.md").read_text() == "# my core, lower case\n"
    assert (ws / "clawmem.toml").read_text() == "k = 9\n"
    assert (ws / ".gitignore").read_bytes() == (
        b"node_modules/\r\n*.log\r\n\r\n"
        b"# clawmem's index is derived from the Markdown: every clone builds its own\r\n"
        b".memory/\r\n"
    )
    attrs = (ws / ".gitattributes").read_text()
    assert attrs.startswith("*.png binary\nbank/** merge=clawmem\n")
    assert attrs.count("bank/** merge=clawmem") == 1 and "memory/** merge=clawmem" in attrs
    assert "updated  .gitignore" in r.out and "updated  .gitattributes" in r.out


def test_init_never_writes_through_a_link(tmp_path):
    ws = tmp_path / "notes"
    ws.mkdir()
    outside = tmp_path / "shared-ignore"
    outside.write_text("build/\n")
    (ws / ".gitignore").symlink_to(outside)
    r = cli("init", str(ws))
    assert r.code == 0, r.err
    assert outside.read_text() == "build/\n"
    assert (ws / ".gitignore").is_symlink()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_init_in_a_repository_subfolder_installs_hooks_where_git_runs_them(tmp_path):
    top = tmp_path / "project"
    top.mkdir()
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    ws = top / "docs" / "memory-ws"
    r = cli_subprocess("init", str(ws))
    assert r.code == 0, r.err
    for name in HOOKS:
        hook = top / ".git" / "hooks" / name
        assert os.access(hook, os.X_OK)
        assert "--workspace docs/memory-ws hook" in hook.read_text()
    driver = subprocess.run(
        ["git", "config", "--get", "merge.clawmem.driver"], cwd=top, capture_output=True, text=True
    ).stdout
    assert "-m clawmem merge-driver %O %A %B %P" in driver
    # uninstall takes all of it away again
    r = cli_subprocess("-w", str(ws), "hook", "uninstall")
    assert r.code == 0 and "merge driver removed" in r.out
    assert not any((top / ".git" / "hooks" / name).exists() for name in HOOKS)


def test_init_of_a_file_is_a_clear_error(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("x\n")
    r = cli("init", str(f))
    assert r.code != 0 and r.err.startswith("clawmem: error: ") and "not a folder" in r.err
    assert f.read_text() == "x\n"


def test_init_from_inside_a_workspace_finishes_that_one(tmp_path, monkeypatch):
    """`clawmem init` run in memory/ (as after `cd memory` to read a log) made a second
    workspace there: MEMORY.md, memory/ and bank/ inside the first one's daily logs."""
    monkeypatch.delenv("CLAWMEM_WORKSPACE", raising=False)
    ws = tmp_path / "notes"
    assert cli("init", str(ws)).code == 0
    (ws / "clawmem.toml").unlink()  # something to finish
    inside = ws / "bank" / "entities"
    r = cli("init", cwd=inside)
    assert r.code == 0, r.err
    assert f"workspace ready: {ws}" in r.out, r.out
    assert "is inside the workspace" in r.err and "`clawmem init .`" in r.err, r.err
    assert (ws / "clawmem.toml").is_file()
    assert sorted(p.name for p in inside.iterdir()) == []
    # Named explicitly, a folder inside is the user's choice.
    assert cli("init", ".", cwd=inside).code == 0
    assert (inside / "MEMORY.md").is_file()
