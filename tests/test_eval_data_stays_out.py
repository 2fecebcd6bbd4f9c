"""No evaluation data in src/: a REALTALK speaker's name, or one of its questions, written into
code or a comment (the project's rule: tuning reads the data, never copies it). Runs where the
evaluation data is at hand (benchmarks/common.EVAL); the names are read from it, never written
here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from benchmarks.common import EVAL

SRC = Path(__file__).resolve().parents[1] / "src"
CHATS = sorted((EVAL / "realtalk").glob("Chat_*.json")) if (EVAL / "realtalk").is_dir() else []


@pytest.mark.skipif(not CHATS, reason="evaluation data not present")
def test_no_realtalk_name_or_question_in_src():
    names: set[str] = set()
    questions: set[str] = set()
    for chat in CHATS:
        names.update(n.casefold() for n in chat.stem.split("_")[2:])  # Chat_<n>_<A>_<B>
        for q in json.loads(chat.read_text(encoding="utf-8")).get("qa", []):
            questions.add(" ".join(str(q.get("question", "")).casefold().split()))
    assert len(names) >= 8 and len(questions) >= 100
    word = re.compile(r"[^\W\d_]+")
    quoted = re.compile(r'"([^"\n]{12,200})"')
    found = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if any(w.casefold() in names for w in word.findall(line)):
                found.append(f"{path.relative_to(SRC)}:{n}: a REALTALK speaker's name")
        flat = " ".join(text.split())
        for q in quoted.findall(flat):
            if " ".join(q.casefold().split()) in questions:
                found.append(f"{path.relative_to(SRC)}: a REALTALK question: {q!r}")
    assert not found, "\n".join(found)
