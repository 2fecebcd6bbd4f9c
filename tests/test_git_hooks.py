"""`clawmem hook`: the git pre-commit hook, exercised through real `git commit`s."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from clawmem.memory import open_workspace

from .conftest import FIXTURE, cli_subprocess

pytestmark = [
    pytest.mark.usefixtures("lexical"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


def git(repo: Path, *args: str, check: bool = True, env: dict | None = None):
    proc = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def commit(repo: Path, message: str = "change", env: dict | None = None):
    git(repo, "add", "-A")
    return git(repo, "commit", "-qm", message, check=False, env=env)


def hook_cli(ws: Path, *args: str):
    return cli_subprocess("--workspace", str(ws), "hook", *args)


def found(ws: Path, query: str) -> list[str]:
    """What the index on disk answers, without syncing first."""
    res = open_workspace(ws).recall(query, mode="lexical", k=5, sync=False)
    return list(dict.fromkeys(h.path for h in res.hits))


@pytest.fixture
def repo(tmp_path) -> Path:
    """The fixture workspace as the root of a fresh git repository with one commit."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".memory/\n")
    assert commit(root, "base").returncode == 0
    return root


def snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mode & 0o7777


def test_install_commit_refreshes_the_index_and_uninstall_removes_the_file(repo):
    r = hook_cli(repo, "install")
    assert r.code == 0, r.err
    hook = repo / ".git" / "hooks" / "pre-commit"
    assert "created" in r.out and str(hook) in r.out
    assert os.access(hook, os.X_OK)

    (repo / "memory" / "2025-12-01.md").write_text("# Dec 1\n\nThe kestrel launch moved.\n")
    c = commit(repo)
    assert c.returncode == 0, c.stderr
    assert "index refreshed" in c.stderr
    assert found(repo, "kestrel") == ["memory/2025-12-01.md"]  # the hook indexed it

    r = hook_cli(repo, "uninstall")
    assert r.code == 0 and "removed" in r.out
    assert not hook.exists()
    assert hook_cli(repo, "uninstall").out.startswith("clawmem hook: not installed")


def test_workspace_inside_the_repo_and_core_hooks_path(tmp_path):
    top = tmp_path / "project"
    ws = top / "docs" / "agent-memory"
    shutil.copytree(FIXTURE, ws)
    (top / "src").mkdir()
    (top / "src" / "app.py").write_text("print('hi')\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "config", "core.hooksPath", ".githooks")
    assert commit(top, "base").returncode == 0

    r = hook_cli(ws, "install")
    assert r.code == 0, r.err
    hook = top / ".githooks" / "pre-commit"
    assert hook.is_file() and not (top / ".git" / "hooks" / "pre-commit").exists()
    assert "--workspace docs/agent-memory hook run" in hook.read_text()

    (ws / "bank" / "entities" / "Zoe.md").write_text("# Zoe\n\nZoe runs the heron project.\n")
    c = git(top / "src", "commit", "-qam", "x", check=False)  # from a subfolder: nothing staged
    (top / "src" / "app.py").write_text("print('bye')\n")
    c = commit(top)
    assert c.returncode == 0, c.stderr
    assert found(ws, "heron") == ["bank/entities/Zoe.md"]
    assert hook_cli(ws, "uninstall").code == 0
    assert not hook.exists()


def test_an_existing_shell_hook_is_kept_and_restored_byte_for_byte(repo, tmp_path):
    hook = repo / ".git" / "hooks" / "pre-commit"
    ran = tmp_path / "user-hook-ran"
    original = f"#!/bin/sh\n# the team's own checks\necho ran >> '{ran}'\nexit 0\n".encode()
    hook.write_bytes(original)
    os.chmod(hook, 0o750)
    before = snapshot(hook)

    r = hook_cli(repo, "install")
    assert r.code == 0 and "existing hook" in r.out, r.out + r.err
    text = hook.read_text()
    assert text.startswith("#!/bin/sh\n# >>> clawmem hook (inserted) >>>\n")
    assert text.endswith(
        f"# <<< clawmem hook <<<\n# the team's own checks\necho ran >> '{ran}'\nexit 0\n"
    )
    assert hook.stat().st_mode & 0o7777 == 0o750

    (repo / "memory" / "2025-12-02.md").write_text("# x\n\nThe lynx budget.\n")
    c = commit(repo)
    assert c.returncode == 0, c.stderr
    assert ran.read_text() == "ran\n"  # theirs ran, even though it ends in `exit 0` ...
    assert found(repo, "lynx") == ["memory/2025-12-02.md"]  # ... and ours ran before it

    # Installing again updates our block instead of adding a second one.
    assert "updated" in hook_cli(repo, "install", "--strict").out
    assert hook.read_text().count(">>> clawmem hook") == 1
    assert "hook run --strict" in hook.read_text()

    r = hook_cli(repo, "uninstall")
    assert r.code == 0 and "removed block" in r.out
    assert snapshot(hook) == before


def test_a_hook_in_another_language_is_chained_and_restored(repo, tmp_path):
    hook = repo / ".git" / "hooks" / "pre-commit"
    ran = tmp_path / "py-hook-ran"
    original = (
        f"#!{sys.executable}\n"
        "import pathlib, sys\n"
        f"pathlib.Path({str(ran)!r}).write_text('args=' + repr(sys.argv[1:]))\n"
        f"sys.exit(1 if pathlib.Path({str(tmp_path / 'block')!r}).exists() else 0)\n"
    ).encode()
    hook.write_bytes(original)
    os.chmod(hook, 0o755)
    before = snapshot(hook)

    r = hook_cli(repo, "install")
    assert r.code == 0 and "chained" in r.out, r.out + r.err
    chained = hook.with_name("pre-commit.clawmem-chained")
    assert snapshot(chained) == before

    (repo / "memory" / "2025-12-03.md").write_text("# x\n\nThe marmot survey.\n")
    c = commit(repo)
    assert c.returncode == 0, c.stderr
    assert ran.read_text() == "args=[]"
    assert found(repo, "marmot") == ["memory/2025-12-03.md"]

    # The chained hook's own verdict still counts.
    (tmp_path / "block").touch()
    (repo / "memory" / "2025-12-04.md").write_text("# x\n\nblocked\n")
    assert commit(repo).returncode != 0

    r = hook_cli(repo, "uninstall")
    assert r.code == 0 and "restored" in r.out
    assert snapshot(hook) == before and not chained.exists()


def test_a_linked_hook_stays_a_link_and_is_restored(repo, tmp_path):
    """A hook linked to a team's tracked script got our block written over the link as a copy,
    and uninstall left that copy: the team's later changes to the script never ran again."""
    script = repo / "scripts" / "pre-commit"
    script.parent.mkdir()
    ran = tmp_path / "team-hook-ran"
    script.write_text(f"#!/bin/sh\necho v1 > {ran}\n")
    os.chmod(script, 0o755)
    hook = repo / ".git" / "hooks" / "pre-commit"
    os.symlink("../../scripts/pre-commit", hook)

    r = hook_cli(repo, "install")
    assert r.code == 0, r.out + r.err
    assert script.read_text() == f"#!/bin/sh\necho v1 > {ran}\n"  # the script is untouched
    (repo / "memory" / "2025-12-03.md").write_text("# x\n\nThe marmot survey.\n")
    assert commit(repo).returncode == 0
    assert ran.read_text() == "v1\n" and found(repo, "marmot") == ["memory/2025-12-03.md"]

    r = hook_cli(repo, "uninstall")
    assert r.code == 0, r.out + r.err
    assert hook.is_symlink() and os.readlink(hook) == "../../scripts/pre-commit"
    script.write_text(f"#!/bin/sh\necho v2 > {ran}\n")
    (repo / "memory" / "2025-12-04.md").write_text("# x\n\nanother\n")
    assert commit(repo).returncode == 0
    assert ran.read_text() == "v2\n"


@pytest.mark.parametrize("breakage", ["bad config", "index path is a file", "no clawmem"])
def test_an_index_problem_never_blocks_a_commit(repo, breakage):
    from clawmem.cli import git_hooks as hook_mod

    env = None
    if breakage == "no clawmem":
        # The interpreter recorded at install time is gone and `clawmem` is not on PATH.
        hook_mod.install(repo, python=str(repo / "no-such-venv" / "bin" / "python"))
        env = {**os.environ, "PATH": "/usr/bin:/bin"}
        if shutil.which("clawmem", path=env["PATH"]):
            pytest.skip("clawmem is installed system-wide")
    else:
        assert hook_cli(repo, "install", "--strict").code == 0
    if breakage == "bad config":
        (repo / "clawmem.toml").write_text("this is = = not toml\n")
    elif breakage == "index path is a file":
        shutil.rmtree(repo / ".memory", ignore_errors=True)
        (repo / ".memory").write_text("not a folder\n")
    (repo / "memory" / "2025-12-05.md").write_text("# x\n\nThe puffin note.\n")
    c = commit(repo, env=env)
    assert c.returncode == 0, c.stderr
    if breakage == "no clawmem":
        assert "clawmem hook: clawmem not found; index not refreshed" in c.stderr
    else:
        assert "clawmem hook: warning: index not refreshed: " in c.stderr, c.stderr
    assert git(repo, "log", "--oneline").stdout.count("\n") == 2  # the commit happened


def test_only_check_findings_block_and_only_with_strict(repo):
    (repo / "memory" / "2025-12-06.md").write_text(
        "# x\n\n## Retain\n- Q @Peter: not a kind of fact.\n"
    )
    assert hook_cli(repo, "install").code == 0
    c = commit(repo, "lenient")
    assert c.returncode == 0, c.stderr
    assert "check found 1 problem(s)" in c.stderr
    assert "not blocking" in c.stderr

    assert hook_cli(repo, "install", "--strict").code == 0
    (repo / "memory" / "2025-12-06.md").write_text(
        "# x\n\n## Retain\n- Q @Peter: still not a kind of fact.\n"
    )
    c = commit(repo, "strict")
    assert c.returncode != 0
    assert "clawmem: error: 1 malformed fact(s) in the workspace" in c.stderr
    assert "memory/2025-12-06.md:4:" in c.stdout + c.stderr  # check says where

    (repo / "memory" / "2025-12-06.md").write_text(
        "# x\n\n## Retain\n- W @Peter: a well-formed fact.\n"
    )
    c = commit(repo, "fixed")
    assert c.returncode == 0, c.stderr


def test_the_hook_is_fast_when_nothing_changed(repo):
    assert hook_cli(repo, "install").code == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    subprocess.run([str(hook)], cwd=repo, check=True, capture_output=True)  # builds the index
    import resource

    def children_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    # The CPU the hook and what it starts use (what a commit waits for on an idle machine; a
    # loaded CI machine stretches the wall time of the same work threefold).
    times = []
    for _ in range(3):
        t0 = children_cpu()
        p = subprocess.run([str(hook)], cwd=repo, capture_output=True, text=True)
        times.append(children_cpu() - t0)
        assert p.returncode == 0 and p.stderr == "", p.stderr  # silent when nothing changed
    median = statistics.median(times)
    print(f"\npre-commit hook with nothing changed: median {median:.2f} s of CPU of {times}")
    assert median < 2.0  # ~0.45 s on an idle 2-core machine, nearly all Python start-up


def test_install_outside_a_git_repository_is_a_clear_error(ws):
    if subprocess.run(["git", "rev-parse"], cwd=ws, capture_output=True).returncode == 0:
        pytest.skip("the temporary folder is inside a git repository")
    r = hook_cli(ws, "install")
    assert r.code == 3
    assert r.err.startswith("clawmem: error: ") and "not inside a git repository" in r.err
    assert "hint: run `git init`" in r.err
