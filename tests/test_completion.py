"""Shell completion (issue 46): installed by one command, answering bash, zsh and fish, and
completing a command name without opening a workspace, an index or a model.

The shells' scripts are typer's; each asks ``clawmem`` with ``_CLAWMEM_COMPLETE`` set (and the
words typed in ``COMP_WORDS`` or ``_TYPER_COMPLETE_ARGS``), as these tests do. bash runs the
installed script for real; zsh and fish are asked exactly as their scripts ask.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Runs the program as its script does, then says which heavy modules the run imported.
PROBE = """
import sys
from clawmem.cli.app import main
try:
    main()
except SystemExit:
    pass
heavy = [m for m in ("clawmem.store.db", "clawmem.ingest.indexing", "clawmem.memory",
         "llama_cpp", "numpy", "sqlite_vec", "sqlean", "rich.markdown", "markdown_it")
         if m in sys.modules]
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


def _complete(env: dict, cwd: Path) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def test_each_shell_completes_commands_and_options_without_opening_anything(ws):
    cases = {
        "bash": {"COMP_WORDS": "clawmem rec", "COMP_CWORD": "1"},
        "zsh": {"_TYPER_COMPLETE_ARGS": "clawmem rec"},
        "fish": {"_TYPER_COMPLETE_ARGS": "clawmem rec", "_TYPER_COMPLETE_FISH_ACTION": "get-args"},
    }
    for shell, env in cases.items():
        out, err = _complete({**env, "_CLAWMEM_COMPLETE": f"complete_{shell}"}, ws)
        assert "recall" in out, (shell, out, err)
        assert "HEAVY=\n" in err, (shell, err)  # no workspace, index or model was opened
    out, err = _complete(
        {
            "_CLAWMEM_COMPLETE": "complete_bash",
            "COMP_WORDS": "clawmem recall --mo",
            "COMP_CWORD": "2",
        },
        ws,
    )
    assert out.split() == ["--mode"] and "HEAVY=\n" in err
    out, _ = _complete(
        {"_CLAWMEM_COMPLETE": "complete_bash", "COMP_WORDS": "clawmem token ", "COMP_CWORD": "2"},
        ws,
    )
    assert set(out.split()) == {"create", "list", "revoke"}
    assert not (ws / ".memory").exists()  # nothing was indexed or created


def test_install_completion_in_bash_and_complete_for_real(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    shim = tmp_path / "bin" / "clawmem"  # `clawmem` on PATH, running the code under test
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m clawmem "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "HOME": str(home), "PATH": f"{shim.parent}:{os.environ['PATH']}"}
    # `; true`: bash runs clawmem as its child, so the shell it detects is bash.
    done = subprocess.run(
        ["bash", "-c", "clawmem --install-completion; true"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "bash completion installed in" in done.stdout, done.stdout + done.stderr
    script = home / ".bash_completions" / "clawmem.sh"
    assert script.is_file()
    assert f"source '{script}'" in (home / ".bashrc").read_text()
    words = subprocess.run(
        [
            "bash",
            "-c",
            f"source '{script}'; COMP_WORDS=(clawmem doc); COMP_CWORD=1; "
            '_clawmem_completion clawmem; echo "${COMPREPLY[@]}"',
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert words.stdout.split() == ["doctor"], words.stdout + words.stderr
    shown = subprocess.run(
        ["bash", "-c", "clawmem --show-completion; true"], env=env, capture_output=True, text=True
    )
    assert "complete -o default -F _clawmem_completion clawmem" in shown.stdout
