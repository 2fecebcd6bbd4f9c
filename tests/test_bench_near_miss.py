"""The near-miss study's signals (benchmarks/fitting/near_miss.py) on a fold written by hand: they
read the lines of the person the question names, and the content words of the question that are
no name. Fast; no embedding model (the cosines are given)."""

from __future__ import annotations

import numpy as np
from benchmarks.fitting import near_miss as NM


def _fold() -> NM.Fold:
    units = [
        {"path": "memory/a.md", "start": 1, "end": 1, "text": "- Kate: I went skiing in the Alps"},
        {"path": "memory/a.md", "start": 2, "end": 2, "text": "- Kate: my cat sleeps all day"},
        {"path": "memory/a.md", "start": 3, "end": 3, "text": "- Kate: the weather is grey"},
        {"path": "memory/a.md", "start": 4, "end": 4, "text": "- Kate: work was long today"},
        {"path": "memory/a.md", "start": 5, "end": 5, "text": "- Kate: I bought new boots"},
        {"path": "memory/a.md", "start": 6, "end": 6, "text": "- Ben: I lost my job as a banker"},
        {"path": "memory/a.md", "start": 7, "end": 7, "text": "- Ben: pasta again tonight"},
    ]
    row = {
        "kind": "near_miss",
        "question": "When did Kate lose the job as a banker?",
        "proper": ["kate"],
        "hits": [
            {
                "features": {k: 0.0 for k in NM.BASE if k != "log_rank"} | {"rank": 1},
                "relevance": 0.2,
                "evidence": False,
                "units": [0],
                "text": units[0]["text"],
            }
        ],
    }
    # the question is closest to Ben's banker line (6), then to Kate's skiing line (1)
    cos = np.array([0.8, 0.5, 0.5, 0.5, 0.5, 0.9, 0.3], dtype=np.float16)
    return NM.Fold(1, [row], units, cos[None, :], cos[None, :])


def test_the_person_signals_read_only_the_named_persons_lines():
    fold = _fold()
    s = NM.signals(fold.rows[0], fold.full[0], fold.unnamed[0], NM.Memo(fold))
    kate = np.array([0.8, 0.5, 0.5, 0.5, 0.5])
    z = (0.8 - kate.mean()) / (kate.std() + 1e-6)
    assert abs(s["best hit's z among the person's units"] - z) < 1e-3
    # Kate's best line (0.8) less the best line someone else said (Ben's banker line, 0.9)
    assert abs(s["the person's best line less another's"] - (-0.1)) < 1e-3
    # the content words lose, job and banker: the hit holds none, Ben's line holds job and banker
    assert s["content words the best hit holds"] == 0.0
    assert s["content words the best unit of the memory holds"] > 0.5
    assert s["content words no unit holds"] > 0.0  # "lose": the line says "lost"


def test_the_summary_reads_own_against_near_misses():
    scored = [("own", 0.9), ("own", 0.8), ("near_miss", 0.1), ("near_miss", 0.85)]
    assert NM.summary(scored).startswith("AUROC 0.750")
