#!/usr/bin/env python3
"""Regenerate the command reference in docs/cli.md from the CLI itself.

    python scripts/gen_cli_docs.py           # rewrite the generated part of docs/cli.md
    python scripts/gen_cli_docs.py --check   # exit 1 if docs/cli.md is out of date

It walks the typer app (``typer.main.get_command(app)`` is a click group), renders every command,
sub-command, argument and option as Markdown, and replaces only the text between the markers
``<!-- generated:start -->`` and ``<!-- generated:end -->``. Everything outside the markers is
hand-written and kept byte for byte. The output depends only on the CLI's definitions (no terminal
width, no colours), so the check is stable in CI.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DOC = REPO / "docs" / "cli.md"
START = "<!-- generated:start -->"
END = "<!-- generated:end -->"
NOTE = "<!-- Do not edit between these markers: run `python scripts/gen_cli_docs.py`. -->"


def _root_command():
    import typer

    from clawmem.cli.app import app

    return typer.main.get_command(app)


def _paragraphs(text: str | None) -> list[str]:
    """A docstring's paragraphs, each joined onto one line (Markdown reflows anyway)."""
    if not text:
        return []
    text = inspect.cleandoc(text)
    # click's "\b" marks a paragraph that must not be rewrapped; Markdown has no such thing.
    text = text.replace("\b\n", "")
    paras = [" ".join(line.strip() for line in p.splitlines()) for p in text.split("\n\n")]
    return [p for p in paras if p]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


_TYPE_NAMES = {"str": "text", "string": "text", "integer": "int", "boolean": "bool"}


def _type_name(param, ctx) -> str:
    """The value type, the same across typer releases (typer >= 0.20 vendors its own click)."""
    shown = None
    display = getattr(param, "display_type", None)  # typer's vendored click
    if callable(display):
        try:
            shown = display(ctx)
        except TypeError:
            shown = None
    if not shown:
        shown = getattr(getattr(param, "type", None), "name", None)  # click itself
    name = str(shown or "text").strip("<>").lower()
    if name.startswith("list[") and name.endswith("]"):  # a repeatable option's element type
        name = name[5:-1]
    return _TYPE_NAMES.get(name, name)


def _is_flag(param) -> bool:
    return bool(getattr(param, "is_flag", False)) or bool(getattr(param, "count", False))


def _default(param) -> str:
    if getattr(param, "required", False):
        return "required"
    default = getattr(param, "default", None)
    if callable(default) or default is None or default == () or default == []:
        return ""
    if _is_flag(param) and default is False:
        return ""
    if isinstance(default, bool):
        return "`true`" if default else "`false`"
    return f"`{default}`"


def _names(param) -> str:
    opts = sorted(param.opts, key=lambda o: (not o.startswith("--"), o))
    names = ", ".join(f"`{o}`" for o in opts)
    if param.secondary_opts:
        names += " / " + ", ".join(f"`{o}`" for o in param.secondary_opts)
    return names


def _usage(cmd, ctx) -> str:
    """``clawmem get [OPTIONS] PATH``: built here, so it reads the same in every typer release."""
    params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
    pieces = [ctx.command_path]
    if any(p.param_type_name == "option" for p in params):
        pieces.append("[OPTIONS]")
    for p in params:
        if p.param_type_name == "argument":
            name = _arg_name(p)
            if getattr(p, "nargs", 1) == -1:
                name += "..."
            pieces.append(name if p.required else f"[{name}]")
    if hasattr(cmd, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def _arg_name(param) -> str:
    return str(getattr(param, "metavar", None) or param.name).upper()


def _render_params(cmd, ctx) -> list[str]:
    params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
    args = [p for p in params if p.param_type_name == "argument"]
    opts = [p for p in params if p.param_type_name == "option"]
    out: list[str] = []
    if args:
        out += ["| Argument | Type | Required | Description |", "|---|---|---|---|"]
        for p in args:
            name = _arg_name(p)
            out.append(
                f"| `{name}` | {_cell(_type_name(p, ctx))} | {'yes' if p.required else 'no'} "
                f"| {_cell(getattr(p, 'help', None) or '')} |"
            )
        out.append("")
    if opts:
        out += ["| Option | Type | Default | Description |", "|---|---|---|---|"]
        for p in opts:
            kind = "flag" if _is_flag(p) else _type_name(p, ctx)
            if getattr(p, "multiple", False):
                kind += ", repeatable"
            out.append(
                f"| {_names(p)} | {_cell(kind)} | {_default(p)} "
                f"| {_cell(getattr(p, 'help', None) or '')} |"
            )
        out.append("")
    return out


def _render_examples(cmd) -> list[str]:
    """The examples that end the command's ``--help`` (its epilog, clawmem/cli/examples.py)."""
    epilog = getattr(cmd, "epilog", None) or ""
    _, _, body = epilog.partition("Examples:\n")
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if not lines:
        return []
    return ["Examples:", "", "```console", *(f"$ {line}" for line in lines), "```", ""]


def _subcommands(group, ctx):
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is None or getattr(sub, "hidden", False):
            continue
        yield name, sub


def _render_command(name: str, cmd, parent_ctx, level: int) -> list[str]:
    ctx = cmd.make_context(name, [], parent=parent_ctx, resilient_parsing=True)
    out = [f"{'#' * level} `{ctx.command_path}`", ""]
    for para in _paragraphs(cmd.help):
        out += [para, ""]
    out += ["```", _usage(cmd, ctx), "```", ""]
    out += _render_params(cmd, ctx)
    out += _render_examples(cmd)
    if hasattr(cmd, "list_commands"):
        subs = list(_subcommands(cmd, ctx))
        if subs:
            out += [
                "Sub-commands: " + ", ".join(f"`{ctx.command_path} {n}`" for n, _ in subs) + ".",
                "",
            ]
        for sub_name, sub in subs:
            out += _render_command(sub_name, sub, ctx, level + 1)
    return out


def render() -> str:
    """The Markdown that belongs between the markers (without the markers)."""
    root = _root_command()
    ctx = root.make_context("clawmem", [], resilient_parsing=True)
    out = [NOTE, "", "### Global options", ""]
    for para in _paragraphs(root.help):
        out += [para, ""]
    out += ["```", _usage(root, ctx), "```", ""]
    out += [
        "Global options go *before* the command name: `clawmem --traceback recall …`, "
        "`clawmem -w ~/notes status`.",
        "",
    ]
    out += _render_params(root, ctx)
    commands = list(_subcommands(root, ctx))
    out += ["Commands: " + ", ".join(f"[`{n}`](#clawmem-{n})" for n, _ in commands) + ".", ""]
    for name, cmd in commands:
        out += _render_command(name, cmd, ctx, 3)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def splice(document: str, generated: str) -> str:
    """``document`` with the text between the markers replaced by ``generated``."""
    start = document.find(START)
    end = document.find(END)
    if start == -1 or end == -1 or end < start:
        raise ValueError(f"the markers {START} and {END} are missing or out of order")
    head = document[: start + len(START)]
    tail = document[end:]
    return f"{head}\n{generated}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    parser.add_argument(
        "path", nargs="?", type=Path, default=DEFAULT_DOC, help="default: docs/cli.md"
    )
    args = parser.parse_args(argv)
    try:
        current = args.path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"gen_cli_docs: error: {args.path}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        updated = splice(current, render())
    except ValueError as exc:
        print(f"gen_cli_docs: error: {args.path}: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if updated != current:
            print(
                f"gen_cli_docs: {args.path} is out of date; run `python scripts/gen_cli_docs.py`",
                file=sys.stderr,
            )
            return 1
        print(f"gen_cli_docs: {args.path} is up to date", file=sys.stderr)
        return 0
    if updated != current:
        args.path.write_text(updated, encoding="utf-8")
        print(f"gen_cli_docs: updated {args.path}", file=sys.stderr)
    else:
        print(f"gen_cli_docs: {args.path} already up to date", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
