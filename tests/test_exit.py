"""The ``clawmem`` program skips Python's teardown once it has loaded an embedding model (freeing
the model costs ~0.3-0.5 s at every exit), and loses nothing by it: all output is there, exit codes
are the same. Real processes, the real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import copy_indexed

# The program's entry, as the `clawmem` script calls it, with an exit handler that says whether
# Python's normal teardown ran.
PROGRAM = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("python teardown ran\\n"))
sys.argv = ["clawmem", *sys.argv[1:]]
from clawmem.cli.app import main
main()
"""


def run(ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    # The process loads the model itself (the resident embedder off): what is tested is its exit.
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, "-w", str(ws), *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, "CLAWMEM_RESIDENT_EMBEDDER": "0"},
    )


def test_a_process_that_loaded_the_model_exits_at_once_with_all_its_output(
    indexed_template, tmp_path
):
    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    # Many JSON lines through a pipe, each a hybrid recall on the real model.
    queries = "\n".join(f"Peter lunch {i}" for i in range(40)) + "\n"
    r = run(ws, "recall", "--queries", "-", "-k", "20", stdin=queries)
    assert r.returncode == 0, r.stderr
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(answers) == 40 and all(a["vectors"]["state"] == "ok" for a in answers)
    assert "python teardown ran" not in r.stderr

    # An error after the model was loaded: the same message and exit code as ever.
    bad = "Peter\n{not json\n"
    r = run(ws, "recall", "--queries", "-", stdin=bad)
    assert r.returncode == 7, (r.returncode, r.stderr)
    assert len(r.stdout.splitlines()) == 1 and json.loads(r.stdout)["results"]
    assert "clawmem: error: " in r.stderr and "line 2" in r.stderr
    assert "python teardown ran" not in r.stderr


def test_a_process_without_a_model_exits_the_normal_way(indexed_template, tmp_path):
    ws = tmp_path / "ws"
    copy_indexed(indexed_template, ws)
    r = run(ws, "recall", "Peter", "--mode", "lexical", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["results"]
    assert "python teardown ran" in r.stderr
