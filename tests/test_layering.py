"""Architecture rules that keep clawmem a library with a thin CLI, and fast to start.

Each rule comes with a test that it can fail: a guard that passes on a broken tree guards nothing.
"""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "clawmem"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "workspace"
UI_MODULES = {"clawmem.cli", "clawmem.__main__"}  # the shells: the cli package, the -m entry
UI_PACKAGES = {"typer", "rich", "click"}


def _module_name(path: Path, top: Path = SRC.parent) -> str:
    """``src/clawmem/recall/ranking.py`` -> ``clawmem.recall.ranking`` (``top``: where the
    dotted names start)."""
    parts = list(path.relative_to(top).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every module ``source`` (the text of ``module``) imports, anywhere in it, as absolute
    dotted names: ``from .render import err`` in ``clawmem.cli.app`` is ``clawmem.cli.render``."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            # `from . import render` and `from .commands import facts` name modules too.
            names.update(f"{target}.{a.name}" for a in node.names)
    return names


def _is_ui(name: str) -> bool:
    top = name.split(".")[0]
    return (
        top in UI_PACKAGES
        or name in UI_MODULES
        or any(name.startswith(m + ".") for m in UI_MODULES)
    )


def ui_imports(path: Path) -> set[str]:
    module = _module_name(path)
    found = imported_modules(
        path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py"
    )
    return {n for n in found if _is_ui(n)}


def _core_files() -> list[Path]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        if _is_ui(name):
            continue
        out.append(path)
    return out


def test_core_never_imports_the_ui():
    offenders = [
        f"{p.relative_to(SRC).as_posix()}: {sorted(ui_imports(p))}"
        for p in _core_files()
        if ui_imports(p)
    ]
    assert offenders == []


def test_the_layering_rule_catches_relative_and_late_imports(tmp_path):
    """The rule above fails on each way a core module could reach the UI."""
    cases = [
        "from ..cli.render import err\n",
        "from ..cli import render\n",
        "from ..cli.commands import facts\n",
        "from .. import cli\n",
        "import clawmem.cli.app\n",
        "from clawmem.cli.render import err\n",
        "def f():\n    from rich.console import Console\n",
        "def f():\n    import typer\n",
    ]
    for i, code in enumerate(cases):
        found = imported_modules(code, _module_name(SRC / "recall" / f"_probe{i}.py"))
        assert any(_is_ui(n) for n in found), code
    clean = "from ..errors import UsageError\nfrom ..store import db\nimport json\n"
    assert not any(_is_ui(n) for n in imported_modules(clean, "clawmem.recall.pipeline"))


def _run(code: str, cwd: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWMEM_")}
    env["CLAWMEM_RUNTIME_DIR"] = os.environ["CLAWMEM_RUNTIME_DIR"]  # the run's, not the user's
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env=env,
    ).stdout.strip()


def test_help_does_not_load_heavy_modules():
    code = (
        "import sys\n"
        "from clawmem.cli.app import app\n"
        "names = ('numpy', 'llama_cpp', 'markdown_it', 'watchdog', 'gguf', 'safetensors',"
        " 'sqlite_vec', 'mcp')\n"
        "print(','.join(m for m in names if m in sys.modules))\n"
    )
    assert _run(code) == ""


def test_a_lexical_recall_loads_no_model_and_no_numpy(tmp_path):
    """Index (lexical) and recall through the library: neither NumPy, llama.cpp nor sqlite-vec's
    Python package is imported (sqlite-vec's extension is loaded by file, see db.py)."""
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    code = (
        "import sys, clawmem\n"
        f"mem = clawmem.open_workspace({str(ws)!r}, environ={{'CLAWMEM_VECTORS': '0'}})\n"
        "mem.index()\n"
        "res = mem.recall('DEC-0054', mode='lexical')\n"
        "assert res.hits, res.empty_reason\n"
        "names = ('numpy', 'llama_cpp', 'sqlite_vec', 'gguf', 'safetensors', 'watchdog')\n"
        "print(','.join(m for m in names if m in sys.modules))\n"
    )
    assert _run(code) == ""


def _cli_imports(*args: str) -> set[str]:
    """Every module a `clawmem` process imports, from ``python -X importtime``."""
    return _cli_run(*args)[0]


def _cli_run(*args: str) -> tuple[set[str], str]:
    """The modules a `clawmem` process imports (``python -X importtime``), and its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWMEM_")}
    env["CLAWMEM_RUNTIME_DIR"] = os.environ["CLAWMEM_RUNTIME_DIR"]  # the run's, not the user's
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "clawmem", *args],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names, proc.stdout


def test_a_cold_lexical_cli_recall_imports_no_model_and_no_numpy(tmp_path):
    """`clawmem recall --mode lexical` as an agent runs it, in a fresh process: the model, NumPy
    and the watcher are never imported (issue #16: a cold lexical recall under 0.25 s)."""
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    _cli_imports("-w", str(ws), "index", "--no-embed", "--json")
    names = _cli_imports("-w", str(ws), "recall", "DEC-0054", "--mode", "lexical", "--json")
    assert "clawmem.recall.pipeline" in names  # the measurement saw the recall's imports
    heavy = {"numpy", "llama_cpp", "gguf", "safetensors", "watchdog", "mcp", "sqlite_vec"}
    # typer's pydantic coercion and rich's console: a third and a tenth of the start-up before
    # cli._coerce_without_pydantic and the lazy render import; filelock: no lock is taken.
    heavy |= {"pydantic", "typer._adapters", "rich", "filelock", "ctypes"}
    # Nothing changed since the index: the Markdown grammars (chunking, facts, the fact log, the
    # link grammar's helpers, markdown-it), transcripts and redaction are not needed, and neither
    # are TOML (no clawmem.toml here) nor socket (no watcher). Each was imported at start-up by a
    # module of the read path and cost the cold recall 3-40 ms (issue 16).
    heavy |= {
        "clawmem.markdown.chunking",
        "clawmem.markdown.facts",
        "clawmem.markdown.factlog",
        "markdown_it",
    }
    heavy |= {
        "clawmem.transcripts.sessions",
        "clawmem.transcripts.formats",
        "clawmem.text.redact",
        "decimal",
    }
    heavy |= {"tomllib", "socket"}
    # Nor hashing (nothing to hash) nor the watcher's vector request (no watcher): ~5 ms.
    heavy |= {"hashlib", "base64"}
    assert sorted(heavy & names) == []

    # A file edited since: the same cold recall parses it (importing the grammars) and finds it.
    with (ws / "memory" / "2025-11-03.md").open("a", encoding="utf-8") as f:
        f.write("\n- Zyxwvut lands on Tuesday.\n")
    names, out = _cli_run("-w", str(ws), "recall", "zyxwvut", "--mode", "lexical", "--json")
    assert json.loads(out)["results"][0]["snippet"] == "- Zyxwvut lands on Tuesday."
    assert {
        "clawmem.markdown.chunking",
        "clawmem.markdown.facts",
        "clawmem.markdown.factlog",
    } <= names


def test_the_start_up_check_sees_a_heavy_import():
    """The check above can fail: importing sqlite_vec's helpers is visible in sys.modules."""
    code = "import sys, sqlite_vec\nprint('numpy' in sys.modules, 'sqlite_vec' in sys.modules)\n"
    assert _run(code) == "True True"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_no_import_cycles():
    """Modules form layers: nothing imports a module that imports it back, even lazily or only
    for type checking (an ``if TYPE_CHECKING:`` import is a dependency a reader follows, and hid
    the circle indexing -> model_choice -> resident -> indexing, issue 42). The entry points
    (``clawmem/__init__.py``: lazy exports for users; ``clawmem/cli/__init__.py``: the console
    script's ``main``) are not layers; the CLI imports every command module
    (``cli.app._register_command_modules``, by name)."""
    graph = _all_imports()
    graph["clawmem.cli.app"] |= {n for n in graph if n.startswith("clawmem.cli.commands.")}
    assert _cycles(graph) == []


def test_the_cycle_check_reads_type_only_imports():
    """A circle closed only by an ``if TYPE_CHECKING:`` import is found."""
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from clawmem.ingest.indexing import Indexer\n"
    found = imported_modules(source, "clawmem.ingest.model_choice")
    graph = {
        "clawmem.ingest.indexing": {"clawmem.ingest.model_choice"},
        "clawmem.ingest.model_choice": found,
    }
    assert _cycles(graph) == [
        ["clawmem.ingest.indexing", "clawmem.ingest.model_choice", "clawmem.ingest.indexing"]
    ]


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_nothing_reaches_into_the_facade():
    """Callers of ``Memory`` (``mem``) use its public methods, never its private names."""
    offenders = []
    for path in [*SRC.rglob("*.py"), *(SRC.parents[1] / "benchmarks").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
                continue
            if node.attr.startswith("__"):
                continue
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            if name == "mem":
                offenders.append(f"{path.name}:{node.lineno}: mem.{node.attr}")
    assert offenders == []


# The import direction, top to bottom (issue 32): a module may import its own part (its
# sub-package, or itself for a top-level module) or any part of a lower layer; never a part above
# it, nor a neighbour in its own layer. Type-only imports count too: they are dependencies a reader
# follows. ``clawmem/__init__.py`` (lazy exports for users), ``__main__.py`` and
# ``cli/__init__.py`` (the console script's ``main``) are entry points.
LAYERS = (
    ("cli",),
    ("memory",),
    ("recall", "reflect"),
    ("ingest",),
    ("transcripts", "embedders"),
    ("store",),
    ("markdown",),
    ("text",),
    ("files", "config"),
    ("errors",),
)
ENTRY_POINTS = {"clawmem", "clawmem.__main__", "clawmem.cli"}


def _part(module: str) -> str:
    """``clawmem.recall.ranking`` -> ``recall``; ``clawmem.memory`` -> ``memory``."""
    return module.split(".")[1]


def import_graph(package: Path, leave_out: set[str]) -> dict[str, set[str]]:
    """Every module of ``package``'s imports of the package's other modules, lazy and
    type-only ones included (the modules in ``leave_out`` neither import nor are imported).
    tests/test_bench_floors.py reads the benchmark harness with it."""
    top = package.parent
    known = {_module_name(p, top) for p in package.rglob("*.py")}
    graph = {}
    for path in package.rglob("*.py"):
        name = _module_name(path, top)
        if name in leave_out:
            continue
        found = imported_modules(
            path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py"
        )
        graph[name] = {n for n in found if n in known and n not in leave_out} - {name}
    return graph


def wrong_way(graph: dict[str, set[str]], layers: tuple, where: str) -> list[str]:
    """The imports of ``graph`` that do not go down ``layers`` (top first): a module may import
    its own part or a part of a lower layer, never one above nor a neighbour on its layer."""
    rank = {part: i for i, layer in enumerate(layers) for part in layer}
    out = []
    for src, targets in graph.items():
        for dst in targets:
            a, b = _part(src), _part(dst)
            if a != b and rank[b] <= rank[a]:
                out.append(f"{src} imports {dst}: {b} is not below {a} ({where})")
    return sorted(out)


def _all_imports() -> dict[str, set[str]]:
    return import_graph(SRC, ENTRY_POINTS)


def layering_violations(graph: dict[str, set[str]]) -> list[str]:
    return wrong_way(graph, LAYERS, "tests/test_layering.py LAYERS")


def test_every_module_belongs_to_a_layer():
    parts = {_part(n) for n in _all_imports()}
    assert sorted(parts - {p for layer in LAYERS for p in layer}) == []


def test_imports_go_down_the_layers():
    assert layering_violations(_all_imports()) == []


def test_the_layer_check_names_a_wrong_way_import():
    graph = {
        "clawmem.store.index": {"clawmem.recall.ranking", "clawmem.text.textnorm"},
        "clawmem.recall.graph": {"clawmem.reflect.pipeline", "clawmem.recall.ranking"},
        "clawmem.text.textnorm": {"clawmem.errors"},
    }
    assert layering_violations(graph) == [
        "clawmem.recall.graph imports clawmem.reflect.pipeline: reflect is not below recall"
        " (tests/test_layering.py LAYERS)",
        "clawmem.store.index imports clawmem.recall.ranking: recall is not below store"
        " (tests/test_layering.py LAYERS)",
    ]


def layer_line() -> str:
    """LAYERS as docs/architecture.md draws them."""

    def name(part: str) -> str:
        return f"`{part}.py`" if (SRC / f"{part}.py").exists() else f"`{part}/`"

    return " → ".join(" | ".join(name(p) for p in layer) for layer in LAYERS)


def test_the_architecture_page_names_every_module():
    """docs/architecture.md answers "where is X?": it draws the layers as the test enforces them,
    and names every module by its path under src/clawmem/, and only modules that exist."""
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert layer_line() in doc
    named = {n for n in re.findall(r"`((?:\w+/)*\w+\.py)`", doc) if not n.startswith("tests/")}
    files = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")}
    modules = {f for f in files if f.rpartition("/")[2] not in ("__init__.py", "__main__.py")}
    assert sorted(modules - named) == []
    assert sorted(named - files) == []


def test_the_facade_shows_the_real_signatures(tmp_path):
    """``Memory``'s delegating methods have the signatures of the functions they call (less the
    indexer), in ``inspect`` as in type checkers, though those functions are imported lazily."""
    code = (
        "import inspect, sys, clawmem\n"
        "from clawmem.memory import Memory\n"
        f"mem = clawmem.open_workspace({str(FIXTURE)!r})\n"
        "print('clawmem.recall.pipeline' in sys.modules)\n"
        "from clawmem.recall.pipeline import recall\n"
        "from clawmem.reflect.pipeline import reflect\n"
        "from clawmem.ingest.retain import retain\n"
        "from clawmem.ingest.indexing import Indexer\n"
        "for name, real in [('recall', recall), ('reflect', reflect), ('retain', retain),"
        " ('index', Indexer.index)]:\n"
        "    params = list(inspect.signature(real).parameters.values())[1:]\n"
        "    assert inspect.signature(getattr(mem, name)).parameters == {p.name: p for p in params}"
        ", name\n"
        "    assert getattr(Memory, name).__doc__ == real.__doc__ or name != 'index', name\n"
        "print(list(inspect.signature(mem.recall).parameters)[:3])\n"
    )
    assert _run(code) == "False\n['query', 'k', 'mode']"


def test_every_command_module_is_registered():
    from clawmem.cli.app import COMMAND_MODULES

    modules = {p.stem for p in (SRC / "cli" / "commands").glob("*.py")} - {"__init__"}
    assert sorted(COMMAND_MODULES) == sorted(modules)
