"""The suites: each module here measures one thing, over the data sets (``benchmarks/datasets``),
with the metrics (``benchmarks/metrics.py``), on the systems under test (``benchmarks/systems``).

The built-in parts of ``python -m benchmarks`` are ``realtalk`` (``realtalk.py``), ``agentmem`` and
``scifact`` (``quality.py``) and ``speed`` (``speed.py``); the others here run on their own
(``python -m benchmarks.suites.NAME``) and write their own section of docs/benchmarks.md.

A new part of ``python -m benchmarks`` is one module here that defines:

* ``PART``: its name in ``--only`` and its key in the results JSON, e.g. ``"mixed"``;
* ``TITLE``: how the report's header names it, e.g. ``"mixed notes"``;
* ``run(settings: Settings) -> dict``: measure, and return the results (JSON-able);
* ``section(results: dict) -> tuple[str, list[dict]]``: the report's Markdown section for those
  results and its targets (``{"target", "value", "met", "why"}``, the report's Targets table).

``registered()`` finds it: nothing else needs editing.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType

BUILT_IN = ("realtalk", "agentmem", "scifact", "speed")


@dataclass(frozen=True)
class Settings:
    """What ``python -m benchmarks`` tells every part."""

    mode: str  # "quick" (subsets) or "full"
    vectors: bool  # False: lexical only (--no-vectors)
    with_qmd: bool  # False: QMD skipped (--no-qmd)


def registered() -> dict[str, ModuleType]:
    """The suites that define ``PART`` (see above), by part name, in module-name order."""
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        part = getattr(module, "PART", None)
        if isinstance(part, str):
            if part in BUILT_IN or part in found:
                raise ValueError(f"benchmarks/suites/{info.name}.py: PART {part!r} is taken")
            found[part] = module
    return found
