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


def _script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_doc_examples", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_the_cpu_decides_do_not_make_an_example_stale():
    same = _script().same_output
    doc = '"vector_score": 0.87905,\n1. memory/a.md#L9-L9  0.08656  relevance 0.44 2025-11-13\n'
    # An AVX-512 machine's cosine, a relevance that rounds the other way, a column shifted by it
    assert same(doc, doc.replace("0.87905", "0.879042").replace("0.44 ", "0.45  "))
    # What the example says changed: a line, a result, a score beyond the tolerance, a version
    assert not same(doc, doc.replace("L9-L9", "L9-L10"))
    assert not same(doc, doc.replace("relevance 0.44", "relevance 0.47"))
    assert not same(doc, doc.replace("0.87905", "0.87105"))
    assert not same("sqlite-vec v0.1.9", "sqlite-vec v0.1.8")
    assert not same('"coverage": 1.0', '"coverage": 0.9')
