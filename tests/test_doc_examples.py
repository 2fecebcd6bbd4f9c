"""The example outputs in README.md and docs/ are what the commands print on the fixture workspace
(scripts/gen_doc_examples.py regenerates them; here, with the real model's index, it checks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gen_doc_examples.py"


def test_the_docs_examples_are_what_the_commands_print(indexed, abstaining):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(indexed), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
