"""A workspace of many Retain facts for reflect's cost and identity tests: daily logs whose facts
share entities and topic words, restate each other, supersede each other (later days, same
topic), narrow each other under a condition, and correct each other explicitly. Deterministic."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

NAMES = [f"Person{i}" for i in range(40)] + ["Ana", "Bob", "Cleo"]
PLACES = ["Lisbon", "Porto", "Berlin", "Hanoi", "Tokyo", "Oslo", "Quito", "Lima", "Cairo", "Rome"]
THINGS = "rust python tea coffee chess tennis jazz opera sushi pasta vim emacs".split()
VERBS = ["lives in", "works in", "moved to", "visits", "studies in"]


def fact_line(rng: random.Random, i: int) -> str:
    who = rng.sample(NAMES, rng.choice([1, 1, 1, 2, 3]))
    at = " ".join(f"@{w}" for w in who)
    r = rng.random()
    if r < 0.35:
        body = f"{who[0]} {rng.choice(VERBS)} {rng.choice(PLACES)}."
        return f"- W {at}: {body}"
    if r < 0.45:  # many facts on one word, each with a rare word
        return f"- W {at}: {who[0]} likes {rng.choice(THINGS)} number{i}."
    if r < 0.6:
        c = rng.choice(["0.6", "0.7", "0.8", "0.9"])
        cond = " while travelling" if rng.random() < 0.3 else ""
        return f"- O(c={c}) {at}: Prefers {rng.choice(THINGS)} over {rng.choice(THINGS)}{cond}."
    if r < 0.75:
        return f"- S {at}: Talked about {rng.choice(THINGS)} and {rng.choice(PLACES)} today."
    if r < 0.85:
        return f"- B {at}: Had {rng.choice(THINGS)} in {rng.choice(PLACES)}."
    return f"- W {at}: {who[0]} owns {rng.randrange(5)} {rng.choice(THINGS)} sets."


def write_workspace(root: Path, facts: int, per_day: int = 40, seed: int = 7) -> Path:
    """``facts`` facts over daily logs of ``per_day`` facts each, in ``root``."""
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\n- Ana lives in Lisbon.\n", encoding="utf-8")
    day = date(2024, 1, 1)
    i = 0
    while i < facts:
        rel = f"memory/{day.isoformat()}.md"
        lines = [f"# {day.isoformat()}", "", "## Retain"]
        for _ in range(min(per_day, facts - i)):
            lines.append(fact_line(rng, i))
            i += 1
            if i > per_day and rng.random() < 0.02:  # an explicit correction of an older line
                back = day - timedelta(days=rng.randrange(1, 1 + i // per_day))
                lines.append(
                    f"  - supersedes [[memory/{back.isoformat()}.md#L{rng.randrange(4, 4 + per_day)}]]"
                )
        (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
        day += timedelta(days=1)
    return root
