"""The shells: the `clawmem` command (app, one module per command group in commands/), its
rendering, the MCP server, the git hook and the graph drawings. The only users of typer and rich.

``main`` is the console script's entry point (``clawmem = "clawmem.cli:main"``); it imports the
app on call so that the MCP server and the git hook, which live here too, do not load typer."""

from typing import Any


def main() -> None:
    from clawmem.cli.app import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        from clawmem.cli.app import app

        return app
    raise AttributeError(name)
