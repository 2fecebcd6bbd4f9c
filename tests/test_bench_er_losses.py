"""The ER@2k loss study (benchmarks/fitting/er_losses.py) on a question written by hand: each gold
line not read within the budget lands in the class the reading walk puts it in, and the budget
spent before it is charged to what spent it. Fast; no embedding model (the hits are given)."""

from __future__ import annotations

import pytest
from benchmarks.fitting import er_losses as EL


def _hit(path: str, start: int, lens: list[int], text: str, relevance: float = 0.1) -> dict:
    return {
        "cite": [path, start, start + len(lens) - 1],
        "lens": lens,
        "text": text,
        "relevance": relevance,
    }


def _gold(path: str, line: int) -> list[dict]:
    return [{"path": path, "start": line, "end": line}]


def _row() -> dict:
    hits = [
        _hit("memory/a.md", 1, [99], "- Kate: we went skiing in the Alps"),  # evidence, 100 chars
        _hit("memory/a.md", 2, [899], "- Kate: skiing in the Alps again, we went"),  # duplicate
        _hit("memory/b.md", 4, [400, 599], "- Ben: long talk\n- Kate: boots and poles"),  # long
        _hit("memory/a.md", 9, [499], "- Ben: pasta tonight"),  # the same file as hit 1
        _hit("memory/c.md", 1, [99], "- Kate: I took a cooking class"),  # read after the budget
    ]
    hits += [_hit(f"memory/f{i}.md", 1, [10], "- filler line") for i in range(20)]
    hits.append(_hit("memory/d.md", 3, [10], "- Kate: a yoga morning"))  # place 26: 21-40
    gold = [
        [_gold("memory/a.md", 1)[0]],  # read
        _gold("memory/c.md", 1),  # after budget
        _gold("memory/d.md", 3),  # 21-40
        _gold("memory/e.md", 7),  # not in the hits at all
    ]
    return {"question": "Where did Kate go skiing?", "category": 1, "gold": gold, "hits": hits}


def test_each_lost_item_lands_in_its_class_and_the_budget_is_charged_to_what_spent_it() -> None:
    row = _row()
    # 100 + 900 + 401, and the long unit's second line (600) does not fit: 2,001 > 2,000
    assert EL.walk(row["hits"]) == (2, [100, 900, 401])
    lost, spent = EL.losses(row)
    assert lost == {"after budget": 0.25, "21-40": 0.25, "not in 40": 0.25}
    assert EL.er(row["hits"], row["gold"]) == pytest.approx(0.25)
    # the item after the budget: the characters read before it, charged by what read them
    assert spent == {"evidence": 0.25 * 100, "near-duplicate": 0.25 * 900, "long unit": 0.25 * 401}


def test_a_gold_line_inside_the_hit_where_the_budget_ran_out_is_its_own_class() -> None:
    row = _row()
    row["gold"] = [_gold("memory/b.md", 5)]  # the long unit's second line: not reached
    lost, _ = EL.losses(row)
    assert lost == {"in last hit": 1.0}


def test_the_remedies_keep_the_first_hit_and_narrow_only_lines_without_a_question_word() -> None:
    row = _row()
    cut = EL.narrowed(row["hits"], row["question"])
    assert cut[2]["cite"] == ["memory/b.md", 5, 5] and cut[2]["lens"] == [599]
    assert cut[0] == row["hits"][0]
    assert EL.deduplicated(row["hits"], 0.6)[1]["cite"][0] == "memory/b.md"
    assert [h["cite"][0] for h in EL.per_file(row["hits"], 1)[:3]] == [
        "memory/a.md",
        "memory/b.md",
        "memory/c.md",
    ]
    assert EL.by_value(row["hits"])[0] is row["hits"][0]
