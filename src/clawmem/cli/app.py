"""The ``clawmem`` command: parse options, call the library, render. No business rules here.

Errors are handled in exactly one place, ``main``: a ``ClawmemError`` prints
``clawmem: error: …`` and a hint on stderr and exits with its documented code (docs/cli.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from functools import partial
from pathlib import Path
from typing import Annotated, Any, BinaryIO, cast

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json, state
from clawmem.errors import ClawmemError, InputError, UsageError
from clawmem.markdown.links import TOO_MANY_LINKS
from clawmem.markdown.workspace import TRANSCRIPT_PREFIX

# The library names its parameters; the command line names its options (see errors.BadArgument).
OPTIONS = {
    "k": "-k",
    "candidates": "-k",
    "budget": "--budget",
    "kind": "--kind",
    "from_line": "--from",
    "lines": "--lines",
    "min_score": "--min-score",
    "allow_secret": "--allow-secret",
    "since": "--since",
    "until": "--until",
    "llm": "--llm",
    "force": "--force",
    "source": "--source",
    "limit": "--limit",
    "min_confidence": "--min-confidence",
    "min_relevance": "--min-relevance",
    "name": "",  # `entities NAME`: the name alone, as the user typed it
    "format": "--format",
    "status": "--status",
}

try:  # typer >= 0.20 vendors click as typer._click; older releases use click itself
    from typer import _click as click  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import click  # type: ignore[no-redef]


def _coerce_without_pydantic() -> None:
    """Coerce plain option values as click does, without pydantic.

    typer 0.2x coerces every parameter of the command being run through a pydantic TypeAdapter,
    so each run imports pydantic and its plugin loader: measured with ``python -X importtime``,
    a third of the imports of a cold ``clawmem recall --mode lexical --json`` (issue 16's
    target: under 0.25 s). clawmem's parameters are strings, numbers without bounds, plain paths
    and lists of strings: those get a plain conversion here, with click's message for a bad
    number. Anything else (a parser, bounds, path checks, files, enums), and any typer without
    these internals, keeps typer's own coercion.

    Why a private internal (``typer._coercion``, ``core._TyperParameter``) and not a public way:
    typer 0.29 offers none that skips pydantic for a plain option (a ``parser=`` or
    ``click_type=`` still goes through the runtime parameter), and the pin is worth it. Measured
    on 2026-11-28 (issue 42; 2 cores under a load of ~12, four runs each, the same fixture
    index): a cold ``clawmem recall DEC-0054 --mode lexical --json`` took 1.50-2.01 s with this
    patch and 2.44-2.87 s without it (pydantic imported); importing pydantic and building one
    TypeAdapter alone took 0.84 s. The cost of the pin: typer is held to one minor release
    (pyproject.toml), and ``tests/test_layering.py`` (no pydantic in a cold recall) and
    ``tests/test_cli.py`` (click's messages) fail if an upgrade moves these internals.
    """
    try:
        from typer import _coercion
        from typer import core as typer_core
    except ImportError:  # pragma: no cover - an older typer coerces with click
        return
    base = getattr(_coercion, "RuntimeParam", None)
    param_cls = getattr(typer_core, "_TyperParameter", None)
    original = getattr(param_cls, "get_runtime_param", None)
    if base is None or param_cls is None or original is None:
        return  # pragma: no cover
    words = {int: "integer", float: "float", str: "string", Path: "path", bool: "boolean"}
    truth = {"1": True, "true": True, "t": True, "yes": True, "y": True, "on": True}
    truth |= {"0": False, "false": False, "f": False, "no": False, "n": False, "off": False}
    # ParameterInfo's defaults: an option that asks for no bound and no check.
    unchecked = {"parser": None, "min": None, "max": None, "exists": False, "resolve_path": False}
    unchecked |= {"path_type": None, "allow_dash": False, "writable": False}

    def one(kind: type, value: object, param: Any, ctx: Any) -> object:
        if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
            return value
        if kind is bool and isinstance(value, str) and value.strip().lower() in truth:
            return truth[value.strip().lower()]  # click's BOOL words
        if isinstance(value, str) and kind is not bool:
            try:
                return kind(value)
            except ValueError:
                pass
        raise click.exceptions.BadParameter(
            f"{value!r} is not a valid {words[kind]}.", ctx=ctx, param=param
        )

    @dataclasses.dataclass(frozen=True)
    class Plain(base):  # type: ignore[misc, valid-type]
        kind: type = str
        many: bool = False

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> object:
            if self.many:
                return [one(self.kind, v, param, ctx) for v in value]
            return one(self.kind, value, param, ctx)

    def get_runtime_param(self: Any) -> object:
        if getattr(self, "_runtime_param", None) is None:
            desc = getattr(self, "type_descriptor", None)
            info = getattr(desc, "parameter_info", None)
            ann = getattr(desc, "annotation", None)
            many = ann == list[str]
            if (
                (ann in words or many)
                and getattr(desc, "file_annotation", None) is None
                and all(getattr(info, k, v) == v for k, v in unchecked.items())
                and getattr(info, "file_okay", True)
                and getattr(info, "dir_okay", True)
            ):
                kind = str if many else cast(type, ann)  # one of `words` here
                self._runtime_param = Plain(
                    parameter_info=info, annotation=ann, kind=kind, many=many
                )
        return original(self)

    param_cls.get_runtime_param = get_runtime_param


_coerce_without_pydantic()


def _flags_show_no_type() -> None:
    """A flag's line in ``--help`` without a type: typer 0.29 shows ``--json <bool>``, which
    reads as if it took a value (``--json true`` is then a usage error)."""
    try:
        from typer import core as typer_core
    except ImportError:  # pragma: no cover
        return
    cls = getattr(typer_core, "TyperOption", None)
    original = getattr(cls, "display_type_rich", None)
    if cls is None or original is None:
        return  # pragma: no cover - another typer: its own help

    def display_type_rich(self: Any, ctx: Any) -> object:
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None
        shown = original(self, ctx)
        # A repeatable option takes one value each time: `--kind <str>`, not `<list[str]>`.
        return re.sub(r"list\[(\w+)\]", r"\1", shown) if isinstance(shown, str) else shown

    cls.display_type_rich = display_type_rich


_flags_show_no_type()


def _arguments_named_as_in_the_docs() -> None:
    """Arguments in ``--help`` and its errors as docs/cli.md writes them (``clawmem get
    [OPTIONS] PATH``, ``[QUERY]``, ``[CITATIONS...]``, "Missing argument 'TEXT'"): typer 0.29
    writes ``{path}``, which reads as a choice or a template to fill in, braces included."""
    try:
        from typer import core as typer_core
    except ImportError:  # pragma: no cover
        return
    cls = getattr(typer_core, "TyperArgument", None)
    if cls is None or not all(hasattr(cls, a) for a in ("_usage_display_name", "display_name_raw")):
        return  # pragma: no cover - another typer: its own help

    def name(self: Any) -> str:  # the help's name column and "Missing argument 'TEXT'" read it
        return str(self.metavar or self.name).upper()

    def usage(self: Any) -> str:
        shown = name(self) + ("..." if self.nargs != 1 else "")
        return shown if self.required else f"[{shown}]"

    cls.display_name_raw = property(name)
    cls._usage_display_name = usage
    typed = cls.display_type_rich

    def display_type_rich(self: Any, ctx: Any) -> object:  # CITATIONS... <str>: one per value
        shown = typed(self, ctx)
        return re.sub(r"list\[(\w+)\]", r"\1", shown) if isinstance(shown, str) else shown

    cls.display_type_rich = display_type_rich


_arguments_named_as_in_the_docs()

# The `clawmem` group's settings: `app` (every command) and the root group `main` runs.
_SETTINGS: dict = dict(
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Offline long-term memory for AI agents: Markdown in, cited recall out.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
app = typer.Typer(**_SETTINGS)


def _print_version(value: bool) -> None:
    if value:
        from clawmem import __version__

        print(f"clawmem {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    workspace: WorkspaceOpt = None,
    traceback: Annotated[
        bool, typer.Option("--traceback", help="Show the Python traceback on errors.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    state["workspace"] = workspace
    state["traceback"] = traceback


@app.command()
def index(
    force: Annotated[
        bool,
        typer.Option("--force", help="Rebuild from scratch beside the old index, then swap it in."),
    ] = False,
    no_embed: Annotated[
        bool, typer.Option("--no-embed", help="Lexical index only; leave vectors pending.")
    ] = False,
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Bring the index up to date with the Markdown (incremental unless --force)."""
    from clawmem.cli.render import IndexProgress, err, index_summary

    mem = open_mem(workspace)
    with IndexProgress(enabled=None if not (as_json or quiet) else False) as progress:
        report = mem.index(force=force, embed=not no_embed, progress=progress)
    data = report.to_dict()
    if mem.embedder_error and not no_embed:
        data["vectors_off_reason"] = mem.embedder_error
    if as_json:
        print_json(data)
        return
    if quiet:
        return
    if report.rebuilt and report.rebuild_reason not in ("", "--force", "no index yet"):
        err.print(f"[yellow]note: rebuilt the index: {report.rebuild_reason}[/yellow]")
    for s in data["skipped"]:
        err.print(f"[yellow]skipped[/yellow] {s['path']}: {s['reason']}")
    skipped = {s["path"] for s in data["skipped"]}
    for p in data["problems"]:
        what = "bad line" if p["path"].startswith(TRANSCRIPT_PREFIX) else "malformed fact"
        if p["message"].startswith("not indexed: "):  # a whole file (not UTF-8, binary)
            if p["path"] in skipped:
                continue  # said once, above
            what = "not indexed"
            p = {**p, "message": p["message"].removeprefix("not indexed: ")}
        elif p["message"].startswith(TOO_MANY_LINKS):
            what = "too many links"
            p = {**p, "message": p["message"].removeprefix(TOO_MANY_LINKS)}
        err.print(f"[red]{what}[/red] {p['path']}:{p['line']}: {p['message']}")
    if mem.embedder_error and not no_embed:
        err.print(f"[yellow]vectors off: {mem.embedder_error}[/yellow]")
    print(index_summary(data))


@app.command()
def recall(
    query: Annotated[str | None, typer.Argument(help="What to look for, in any language.")] = None,
    k: Annotated[
        int | None, typer.Option("-k", help="Number of results (default: config k = 6).")
    ] = None,
    mode: Annotated[str, typer.Option("--mode", help="hybrid | lexical | vector")] = "hybrid",
    since: Annotated[
        str | None, typer.Option("--since", help="30d, 2w, 3m, 2025-11, 2025-11-27, 27.11.2025 …")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Same forms as --since; inclusive.")
    ] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind", help="Fact kind W, B, O or S, or its name (opinion); or 'chunk'; repeatable."
        ),
    ] = None,
    entity: Annotated[
        str | None,
        typer.Option("--entity", help="Only facts mentioning @ENTITY, plus its entity page."),
    ] = None,
    path: Annotated[
        str | None, typer.Option("--path", help="Only files under this workspace path prefix.")
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", help="What was true on YYYY-MM-DD (newer facts mark older ones superseded)."
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", help="Pack the best results into about this many tokens."),
    ] = None,
    source: Annotated[
        str,
        typer.Option(
            "--source", help="memory (the Markdown) | sessions (transcripts) | all (default)."
        ),
    ] = "all",
    expand: Annotated[
        bool,
        typer.Option(
            "--expand", help="Add notes one link away from the best hits, marked as linked."
        ),
    ] = False,
    min_relevance: Annotated[
        float | None,
        typer.Option(
            "--min-relevance",
            help="Show no hits unless one reaches this relevance, 0-1 (default: config "
            "min_relevance, else the fitted model's threshold: 0.03 hybrid, 0.01 lexical; 0 "
            "shows every hit).",
        ),
    ] = None,
    as_json: JsonOpt = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each leg's rank and score.")
    ] = False,
    queries: Annotated[
        str | None,
        typer.Option(
            "--queries",
            help="File of queries (one per line, text or JSON); '-' for stdin. Prints JSON lines.",
        ),
    ] = None,
    no_sync: Annotated[
        bool, typer.Option("--no-sync", help="Do not sync changed files first.")
    ] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Search memory: lexical + semantic, filtered by time, kind and entity, with citations."""
    if (query is None) == (queries is None):
        raise UsageError(
            "give either a QUERY or --queries FILE", hint='e.g. clawmem recall "payments decision"'
        )
    mem = open_mem(workspace)
    # The options as keywords of Memory.recall (a queries file's line may override some).
    opts: dict[str, Any] = dict(
        k=k,
        mode=mode,
        since=since,
        until=until,
        kind=kind,
        entity=entity,
        path=path,
        as_of=as_of,
        budget=budget,
        sync=not no_sync,
        source=source,
        expand=expand,
        min_relevance=min_relevance,
    )
    if queries is not None:
        stream = _stdin_bytes() if queries == "-" else _open_queries(queries)
        first = True
        for lineno, raw in enumerate(stream, 1):
            line = _decode_query_line(raw, queries, lineno).strip()
            if not line:
                continue
            q, local = _parse_query_line(line, queries, lineno)
            res = mem.recall(q, **{**opts, **local, "sync": opts["sync"] and first})
            first = False
            print_json(res.to_dict(explain))
        return
    assert query is not None  # exactly one of QUERY and --queries, checked above
    res = mem.recall(query, **opts)
    if as_json:
        print_json(res.to_dict(explain))
    else:
        from clawmem.cli.render import recall_human  # rich: only for a human reader

        weak = [h.to_dict(explain=True) for h in res.weak_hits]
        recall_human(res.to_dict(explain=True), explain, weak)


def _open_queries(path: str) -> BinaryIO:
    try:
        return open(path, "rb")  # decoded line by line, so a bad byte names its line
    except OSError as exc:
        raise InputError(f"{path}: cannot read the queries file ({exc.strerror})") from None


def _stdin_bytes() -> Iterable[bytes]:
    if hasattr(sys.stdin, "buffer"):
        return sys.stdin.buffer
    return (line.encode("utf-8", "surrogateescape") for line in sys.stdin)  # a text stream


def _decode_query_line(raw: bytes, path: str, lineno: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = "standard input" if path == "-" else path
        raise InputError(
            f"{where}: line {lineno}: invalid UTF-8 at byte {exc.start + 1}",
            hint="save the queries file as UTF-8",
        ) from None


_QUERY_KEYS = {
    "query",
    "k",
    "mode",
    "since",
    "until",
    "kind",
    "entity",
    "path",
    "as_of",
    "budget",
    "source",
    "expand",
    "min_relevance",
}


_WANT = {int: "a number", float: "a number", bool: "true or false"}


def _parse_query_line(line: str, source: str, lineno: int) -> tuple[str, dict]:
    from clawmem.text import untrusted_json

    if not line.startswith("{"):
        return line, {}
    try:
        obj = untrusted_json.loads(line)
    except (json.JSONDecodeError, untrusted_json.TooDeep) as exc:
        raise InputError(
            f"{source} line {lineno}: invalid JSON ({exc.msg})",
            hint='write plain text, or an object like {"query": "…", "k": 5}',
        ) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("query"), str):
        raise InputError(f'{source} line {lineno}: a JSON line needs a "query" string')
    unknown = set(obj) - _QUERY_KEYS
    if unknown:
        raise InputError(
            f"{source} line {lineno}: unknown key {sorted(unknown)[0]!r}",
            hint="known keys: " + ", ".join(sorted(_QUERY_KEYS)),
        )
    for key, value in obj.items():
        want: type = int if key in ("k", "budget") else (list if key == "kind" else str)
        ok = isinstance(value, want) and not isinstance(value, bool)
        if key == "expand":
            want, ok = bool, isinstance(value, bool)
        if key == "min_relevance":
            want, ok = float, isinstance(value, (int, float)) and not isinstance(value, bool)
        if key == "kind" and isinstance(value, str):
            obj[key], ok = [value], True
        if not ok and value is not None:
            raise InputError(
                f"{source} line {lineno}: {key!r} must be {_WANT.get(want, 'a string')},"
                f" got {json.dumps(value)}",
                hint='e.g. {"query": "payments", "k": 5, "since": "30d"}',
            )
    q = obj.pop("query")
    return q, obj


@app.command()
def status(as_json: JsonOpt = False, workspace: WorkspaceOpt = None) -> None:
    """What is indexed, what changed on disk since, and the state of vectors."""
    from clawmem.cli.render import status_human

    s = open_mem(workspace).status().to_dict()  # both forms are drawn from the JSON one
    if as_json:
        print_json(s)
    else:
        status_human(s)


@app.command()
def get(
    path: Annotated[
        str,
        typer.Argument(
            help="A memory file, e.g. memory/2025-11-27.md, or a transcript, sessions/ID.jsonl "
            "(a citation's path#L12-L20 works too)."
        ),
    ],
    from_line: Annotated[int | None, typer.Option("--from", help="First line (1-based).")] = None,
    lines: Annotated[int | None, typer.Option("--lines", help="How many lines.")] = None,
    as_json: JsonOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Print lines of a memory file, or what was said in lines of a transcript (redacted)."""
    res = open_mem(workspace).get(path, from_line=from_line, lines=lines)
    if as_json:
        print_json(res.to_dict())
    else:
        sys.stdout.write(res.text + ("\n" if res.text else ""))


@app.command()
def config(as_json: JsonOpt = False, workspace: WorkspaceOpt = None) -> None:
    """Show every effective setting and where it came from."""
    from rich.markup import escape

    from clawmem.cli.render import out

    mem = open_mem(workspace)
    items = mem.cfg.items()
    if as_json:
        print_json(
            {
                name: {"value": list(v) if isinstance(v, tuple) else v, "source": src}
                for name, v, src in items
            }
        )
        return
    out.print(f"[dim]workspace {escape(str(mem.root))}[/dim]")
    for name, value, src in items:
        shown = "unset" if value is None else repr(value)  # decided elsewhere (docs/workspace.md)
        out.print(f"{name:<22} {escape(shown):<28} [dim]{escape(src)}[/dim]")


# The command modules (clawmem/commands/), in the order `clawmem --help` lists them.
COMMAND_MODULES = (
    "init",
    "context",
    "retain",
    "entities",
    "facts",
    "forget",
    "carry",
    "links",
    "check",
    "git_hooks",
    "mcp",
    "trust",
    "model",
    "reflect",
    "flush",
    "proposals",
    "watch",
    "doctor",
)


def _register_command_modules() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"clawmem.cli.commands.{name}").register(app)
    _help_from_docstrings(app)


def _help_from_docstrings(typer_app: typer.Typer, prefix: str = "") -> None:
    """Each command's help from its docstring, its paragraphs each one line: typer's rich help
    keeps a docstring's line breaks, which cut descriptions mid-sentence in `clawmem --help`.
    Its examples (``cli/examples.py``) end it."""
    import inspect
    import re

    from typer.main import get_command_name

    from clawmem.cli.examples import epilog

    def flowed(doc: str) -> str:
        return re.sub(r"(?<!\n)\n(?!\n)", " ", inspect.cleandoc(doc))

    for info in typer_app.registered_commands:
        if info.help is None and info.callback is not None and info.callback.__doc__:
            info.help = flowed(info.callback.__doc__)
        if info.callback is not None:
            name = info.name or get_command_name(info.callback.__name__)
            info.epilog = info.epilog or epilog(prefix + name)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            group.epilog = epilog(prefix + str(group.name))
            _help_from_docstrings(group.typer_instance, f"{prefix}{group.name} ")


_register_command_modules()


class CommandsOnDemand(MutableMapping):
    """``app``'s commands and command groups by name, each turned into a click command by typer
    when it is first looked up.

    Typer reads the signature of every command when it builds a group, and a run uses one:
    building clawmem's 16 took 36 ms at load 5, the root group with `recall` alone 14 ms (issue
    16: a cold recall). Looking up all of them (``--help``) gives what
    ``typer.main.get_command(app)`` gives, built the same way (``tests/test_cli.py`` compares
    the two)."""

    def __init__(self, typer_app: typer.Typer) -> None:
        from typer import main as typer_main

        opts: dict = dict(
            pretty_exceptions_short=typer_app.pretty_exceptions_short,
            rich_markup_mode=typer_app.rich_markup_mode,
        )
        self._make: dict[str, Callable[[], click.Command]] = {}
        for info in typer_app.registered_commands:
            assert info.callback is not None
            name = info.name or typer_main.get_command_name(info.callback.__name__)
            self._make[name] = partial(typer_main.get_command_from_info, info, **opts)
        opts = dict(opts)
        if hasattr(typer_app, "suggest_commands"):  # a newer typer passes it to its groups
            opts["suggest_commands"] = typer_app.suggest_commands
        for group in typer_app.registered_groups:
            assert isinstance(group.name, str), "command groups are added with add_typer(name=…)"
            self._make[group.name] = partial(typer_main.get_group_from_info, group, **opts)
        self.built: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.built:
            self.built[name] = self._make[name]()  # KeyError: no such command
        return self.built[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._make[name] = lambda: command
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._make[name]
        self.built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._make)

    def __len__(self) -> int:
        return len(self._make)


def click_group() -> click.Command:
    """The `clawmem` command as ``main`` runs it: the root group (its callback and global
    options) built by typer, and ``app``'s commands built on demand (``CommandsOnDemand``)."""
    try:
        commands = CommandsOnDemand(app)
    except AttributeError:  # pragma: no cover - a typer without these functions: build them all
        return typer.main.get_command(app)
    root = typer.Typer(**_SETTINGS)
    root.callback()(_root)
    group = typer.main.get_command(root)
    group.commands = commands  # type: ignore[attr-defined]
    return group


def _flag_given_a_value(exc: Exception, argv: list[str]) -> str | None:
    """The flag a value was written after (``--json true``): click says only "unexpected extra
    argument (true)", which sends people looking for a stray word."""
    ctx = getattr(exc, "ctx", None)
    message = str(getattr(exc, "message", ""))
    if ctx is None or "unexpected extra argument" not in message:
        return None
    flags = {
        name
        for p in ctx.command.params
        if getattr(p, "is_flag", False)
        for name in (*p.opts, *p.secondary_opts)
    }
    for before, word in itertools.pairwise(argv):
        if before in flags and (f"({word})" in message or f"({word} " in message):
            return before
    return None


def _debug() -> bool:
    return bool(state["traceback"] or os.environ.get("CLAWMEM_DEBUG"))


def main(argv: list[str] | None = None) -> None:
    """Entry point: the one place where errors become messages and exit codes. Called with no
    ``argv`` it is the program (the ``clawmem`` script, ``python -m clawmem``) and owns the process:
    one that loaded an embedding model then ends without Python's teardown of it (``_exit``)."""
    try:
        _main(argv)
    except SystemExit as exc:
        if argv is None:
            _exit(exc.code)
        raise


def _exit(code: str | int | None) -> None:
    """Leave at once, output flushed, when this process holds a llama.cpp model: freeing the
    model (the default one's 250,000-token vocabulary) costs ~0.3-0.5 s at every exit, for memory
    the kernel takes back anyway. Nothing of clawmem's is left to run by then: files are written
    atomically and closed, database connections closed by their owners, locks are the kernel's.
    Otherwise (no model) the normal exit, which costs nothing extra."""
    llama = sys.modules.get("clawmem.embedders.llama_load")
    if llama is None or not getattr(llama, "models_loaded", 0):
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): print it, exit 1, as Python does
        sys.stderr.write(f"{code}\n")
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach the reader
            pass
    os._exit(status)


def _closed_pipe() -> None:
    """The reader of stdout went away (``clawmem recall … | head -1``): that is how such a
    reader says it has enough, so leave quietly with 0, and point stdout at /dev/null so that
    Python's last flush at exit does not complain about the pipe either."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
    sys.exit(0)


def _say_waiting(text: str) -> None:
    """A writer waits for the write lock: say whom for, on stderr (above a progress bar)."""
    from clawmem.cli.render import err

    err.print(f"clawmem: {text}", markup=False, highlight=False)


def _plain_completion_help() -> None:
    """zsh and fish show each command's help beside its name: typer renders it with rich first
    (to strip markup, which clawmem's help has none of), importing rich's Markdown and
    markdown-it on every Tab, about 0.2 s of CPU. Plain text is what those shells show anyway."""
    try:
        from typer import _completion_classes
    except ImportError:  # pragma: no cover - another typer: its own completion
        return
    if hasattr(_completion_classes, "_sanitize_help_text"):
        _completion_classes._sanitize_help_text = lambda text: text


def _main(argv: list[str] | None) -> None:
    from clawmem.files import locking

    if os.environ.get("_CLAWMEM_COMPLETE"):  # a shell asks for completions (--install-completion)
        _plain_completion_help()

    locking.on_wait = _say_waiting
    try:
        code = click_group()(args=argv, prog_name="clawmem", standalone_mode=False)
    except SystemExit:
        # click turns a write to a closed pipe (EPIPE) into exit 1, wrapping stdout first.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _closed_pipe()
        raise
    except ClawmemError as exc:
        if _debug():
            raise
        from clawmem.text.visible import visible

        message, hint = exc.in_words(OPTIONS)
        sys.stderr.write(f"clawmem: error: {visible(message)}\n")
        if hint:
            sys.stderr.write(f"  hint: {visible(hint)}\n")
        sys.exit(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError:
        sys.exit(0)  # typer has already printed the help
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)  # usage errors carry the command they came from
        flag = _flag_given_a_value(exc, sys.argv[1:] if argv is None else argv)
        if flag is not None:
            sys.stderr.write(f"clawmem: error: {flag} takes no value\n")
            sys.stderr.write(f"  hint: write {flag} alone to turn it on; leave it out for off\n")
            sys.exit(2)
        sys.stderr.write(f"clawmem: error: {exc.format_message()}\n")
        if ctx is not None:
            sys.stderr.write(f"  hint: see `{ctx.command_path} --help`\n")
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("clawmem: interrupted; committed work is kept and the next run resumes\n")
        sys.exit(130)
    except BrokenPipeError:
        _closed_pipe()
    except Exception as exc:  # the boundary: anything unexpected is a bug report
        if _debug():
            raise
        sys.stderr.write(
            f"clawmem: error: internal error: {type(exc).__name__}: {exc}\n"
            "  hint: rerun with --traceback (or CLAWMEM_DEBUG=1) and report it\n"
        )
        sys.exit(70)
    if code == 130:  # typer turns Ctrl-C into Exit(130) before we can see the KeyboardInterrupt
        sys.stderr.write("clawmem: interrupted; committed work is kept and the next run resumes\n")
    sys.exit(code if isinstance(code, int) else 0)
