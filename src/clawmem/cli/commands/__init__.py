"""CLI command groups that live in their own modules.

Each module here exposes ``register(app)``; ``clawmem.cli.app`` calls it for every module at start-up.
Keep heavy imports inside the command functions so ``clawmem --help`` stays fast. What every
command shares (the ``--workspace`` and ``--json`` options, opening the workspace, printing JSON)
is here, so that no command module imports ``clawmem.cli.app`` back.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from clawmem.memory import Memory

state: dict = {"workspace": None, "traceback": False}

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        help="Workspace folder (default: $CLAWMEM_WORKSPACE, or found upward from here).",
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout (a stable schema, see docs/cli.md).")
]


def current_workspace(workspace: Path | None = None) -> Path | None:
    """The --workspace given to this command, else the global one."""
    return workspace or state["workspace"]


def open_mem(workspace: Path | None = None, *, quiet: bool = False) -> Memory:
    """The workspace's ``Memory``. Unless ``quiet``, one line on stderr when settings of its
    clawmem.toml are ignored until the user approves the file (``clawmem trust``)."""
    from clawmem.memory import open_workspace

    mem = open_workspace(workspace or state["workspace"])
    if mem.cfg.held_back and not quiet:
        from clawmem.config.trust import note

        sys.stderr.write(f"clawmem: note: {note(mem.cfg.held_back)}\n")
    return mem


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
