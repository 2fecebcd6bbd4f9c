"""The benchmark harness's floors (issue 42): data sets ← metrics ← systems ← suites ← fitting ←
report ← the commands, with no circle, and tests that use only its public names.

Each rule comes with a case it fails on: a guard that passes on a broken tree guards nothing.
"""

import ast
from pathlib import Path

from tests.test_layering import _cycles, import_graph, wrong_way

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

# Top to bottom. A module may import its own part or a part of a lower floor; never a part above
# it, nor a neighbour on its own floor. The commands are the modules ``python -m benchmarks[.NAME]``
# runs (``realtalk.py``, ``tune.py``, ``scale.py``, ``relevance.py``: a line that runs a suite or a
# fit found below). Type-only imports count: they are dependencies a reader follows.
FLOORS = (
    ("__main__", "realtalk", "tune", "scale", "relevance"),
    ("report",),
    ("fitting",),
    ("suites", "soak"),
    ("systems",),
    ("metrics",),
    ("questions",),  # the agent-memory question set, written over datasets/workspaces.py's files
    ("datasets",),
    ("common",),
)


def _part(module: str) -> str:
    """``benchmarks.suites.quality`` -> ``suites``; ``benchmarks.metrics`` -> ``metrics``."""
    return module.split(".")[1]


def bench_imports() -> dict[str, set[str]]:
    """Every harness module's imports of other harness modules, lazy and type-only ones included
    (the package ``benchmarks`` itself, empty, aside)."""
    return import_graph(BENCH, {"benchmarks"})


def floor_violations(graph: dict[str, set[str]]) -> list[str]:
    return wrong_way(graph, FLOORS, "tests/test_bench_floors.py")


def test_every_module_is_on_a_floor():
    parts = {_part(n) for n in bench_imports()}
    assert sorted(parts - {p for floor in FLOORS for p in floor}) == []


def test_imports_go_down_the_floors():
    assert floor_violations(bench_imports()) == []


def test_no_import_circle():
    assert _cycles(bench_imports()) == []


def test_the_floor_check_names_a_wrong_way_import():
    graph = {
        "benchmarks.datasets.realtalk": {"benchmarks.suites.quality", "benchmarks.common"},
        "benchmarks.suites.realtalk": {"benchmarks.fitting.relevance", "benchmarks.metrics"},
        "benchmarks.metrics": set(),
    }
    assert floor_violations(graph) == [
        "benchmarks.datasets.realtalk imports benchmarks.suites.quality: suites is not below"
        " datasets (tests/test_bench_floors.py)",
        "benchmarks.suites.realtalk imports benchmarks.fitting.relevance: fitting is not below"
        " suites (tests/test_bench_floors.py)",
    ]
    # The circle the floors removed (quality -> relevance -> realtalk -> quality) is found.
    circle = {"q": {"r"}, "r": {"t"}, "t": {"q"}}
    assert _cycles(circle) == [["q", "r", "t", "q"]]


def private_uses(source: str) -> list[str]:
    """Names starting with ``_`` that ``source`` imports from the harness, or reads off a harness
    module it imported (``from benchmarks import metrics as M``; ``M._gold``)."""
    tree = ast.parse(source)
    out, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks"):
            for a in node.names:
                if a.name.startswith("_"):
                    out.append(f"{node.module}.{a.name}")
                aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("benchmarks"):
                    aliases.add(a.asname or a.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            out.append(f"{node.value.id}.{node.attr}")
    return out


def test_tests_use_only_the_public_names_of_the_harness():
    offenders = {
        p.name: uses
        for p in sorted((ROOT / "tests").glob("*.py"))
        if (uses := private_uses(p.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_the_private_name_check_sees_both_ways_in():
    code = (
        "from benchmarks.datasets.workspaces import _remove_strays\n"
        "from benchmarks import metrics as M\n"
        "M._overlaps(1, 2)\n"
        "import benchmarks.report as R\n"
        "R._chats('all')\n"
    )
    assert private_uses(code) == [
        "benchmarks.datasets.workspaces._remove_strays",
        "M._overlaps",
        "R._chats",
    ]
