"""Architecture rules that keep clawmem a library with a thin CLI, and fast to start."""

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "clawmem"
UI_MODULES = {"cli.py", "render.py"}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_never_imports_the_ui():
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel in UI_MODULES or rel.startswith("commands/"):
            continue
        bad = _imports(path) & {"typer", "rich", "click"}
        if bad:
            offenders.append(f"{rel}: {sorted(bad)}")
    assert offenders == []


def test_help_and_lexical_paths_do_not_load_heavy_modules():
    code = (
        "import sys\n"
        "from clawmem.cli import app\n"
        "names = ('numpy', 'llama_cpp', 'markdown_it', 'watchdog', 'gguf', 'safetensors')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""
