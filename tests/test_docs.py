"""The documentation keeps up with the code: every command, option, setting, table, column and exit
code is documented, the generated CLI reference is current, and the Python API examples run and
print what the docs say they print."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
GEN = REPO / "scripts" / "gen_cli_docs.py"


def _read(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _gen_module():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", GEN)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------------
# docs/cli.md


def _commands():
    """(command path, click command) for every visible command and sub-command."""
    import typer

    from clawmem.cli.app import app

    root = typer.main.get_command(app)
    ctx = root.make_context("clawmem", [], resilient_parsing=True)
    found = [("clawmem", root, ctx)]

    def walk(group, gctx):
        for name in group.list_commands(gctx):
            cmd = group.get_command(gctx, name)
            if cmd is None or getattr(cmd, "hidden", False):
                continue
            cctx = cmd.make_context(name, [], parent=gctx, resilient_parsing=True)
            found.append((cctx.command_path, cmd, cctx))
            if hasattr(cmd, "list_commands"):
                walk(cmd, cctx)

    walk(root, ctx)
    return found


def _section(doc: str, command_path: str) -> str:
    """The text of one command's generated section (up to the next heading of any command)."""
    if command_path == "clawmem":
        start = doc.index("### Global options")
    else:
        start = doc.index(f"`{command_path}`\n", doc.index("<!-- generated:start -->"))
    nxt = re.compile(r"^#{2,4} ", re.M).search(doc, doc.index("\n", start) + 1)
    end = min(nxt.start() if nxt else len(doc), doc.index("<!-- generated:end -->"))
    return doc[start:end]


def test_every_command_and_option_is_in_cli_md():
    doc = _read("cli.md")
    missing = []
    for path, cmd, ctx in _commands():
        if path != "clawmem" and f"`{path}`" not in doc:
            missing.append(path)
            continue
        section = _section(doc, path)
        if path != "clawmem" and cmd.help and cmd.help.split("\n")[0].strip() not in section:
            missing.append(f"{path}: its help text")
        for param in cmd.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "argument":
                if f"`{str(param.metavar or param.name).upper()}`" not in section:
                    missing.append(f"{path} {param.name}")
                continue
            for opt in [*param.opts, *param.secondary_opts]:
                if f"`{opt}`" not in section:
                    missing.append(f"{path} {opt}")
    assert not missing, f"not in docs/cli.md (run python scripts/gen_cli_docs.py): {missing}"


def test_every_mcp_tool_is_in_agents_md_and_the_mcp_help():
    """An agent's user reads the tools in docs/agents.md and `clawmem mcp --help`: a tool added
    to the catalogue shows up in both, with its arguments, and the options that drop or allow
    the writing tools name each of them."""
    from clawmem.cli.mcp.catalogue import TOOLS

    doc = _read("agents.md")
    table = doc[doc.index("## The tools") : doc.index("### Relevance")]
    mcp = next(cmd for path, cmd, _ in _commands() if path == "clawmem mcp")
    options = {p.name: p.help or "" for p in mcp.params}
    token_create = next(cmd for path, cmd, _ in _commands() if path == "clawmem token create")
    write_help = next(p.help or "" for p in token_create.params if p.name == "write")
    missing = []
    for tool in TOOLS:
        row = next((ln for ln in table.splitlines() if ln.startswith(f"| `{tool.name}` |")), None)
        if row is None:
            missing.append(f"agents.md: no row for {tool.name}")
        else:
            args = row.split(" | ")[1]
            missing += [
                f"agents.md {tool.name}: {a}"
                for a in tool.schema["properties"]
                if f"`{a}`" not in args
            ]
        if tool.name not in (mcp.help or ""):
            missing.append(f"mcp --help: {tool.name}")
        if tool.writes and tool.name.startswith("memory_proposal_"):
            continue  # named together as "accepting or rejecting proposals"
        if tool.writes:
            for where, text in (
                ("mcp --read-only", options["read_only"]),
                ("mcp --tokenless-write", options["tokenless_write"]),
                ("token create --write", write_help),
            ):
                if tool.name not in text:
                    missing.append(f"{where}: {tool.name}")
    assert not missing, missing


@pytest.mark.usefixtures("lexical")
def test_every_key_of_the_json_outputs_is_in_cli_md(ws):
    """A script's author reads the key tables of docs/cli.md: each top-level key the command
    prints is named there, in its own section (``transcripts`` of `index --json` and
    ``supersedes``/``similar`` of `retain --json` were missing)."""
    import json

    from .conftest import cli

    doc = _read("cli.md")

    def section(title: str) -> str:
        start = doc.index(f"### `{title}`")
        return doc[start : doc.index("\n### ", start + 1)]

    w = ["-w", str(ws)]
    printed = {
        "index --json": cli(*w, "index", "--json").out,
        "retain --json": cli(*w, "retain", "Peter likes figs", "--entity", "Peter", "--json").out,
        "status --json": cli(*w, "status", "--json").out,
        "context --json": cli(*w, "context", "where do EU deploys of DEC-0054 go?", "--json").out,
        "recall --json": cli(*w, "recall", "DEC-0054", "--json").out,
    }
    missing = [
        f"{title}: {key}"
        for title, out in printed.items()
        for key in json.loads(out)
        if f"`{key}`" not in section(title) and f"`{key}." not in section(title)
    ]
    assert not missing, missing


def test_generated_cli_reference_is_up_to_date():
    proc = subprocess.run(
        [sys.executable, str(GEN), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr + "\nrun: python scripts/gen_cli_docs.py"


def test_generator_keeps_prose_and_reports_stale_files(tmp_path):
    gen = _gen_module()
    doc = tmp_path / "cli.md"
    prose_before = "# Title\n\nHand-written *before*.\n\n"
    prose_after = "\n## After\n\nHand-written after, with `<!-- markers -->` talk.\n"
    doc.write_text(f"{prose_before}{gen.START}\nstale\n{gen.END}{prose_after}", encoding="utf-8")
    assert gen.main(["--check", str(doc)]) == 1
    assert gen.main([str(doc)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith(prose_before + gen.START + "\n")
    assert text.endswith(gen.END + prose_after)
    assert "stale" not in text and "### `clawmem recall`" in text
    assert gen.main(["--check", str(doc)]) == 0
    doc.write_text("no markers here\n", encoding="utf-8")
    assert gen.main(["--check", str(doc)]) == 2


def _import_all_clawmem_modules() -> None:
    """Error classes may live beside the code that raises them; import every module to see them."""
    import importlib
    import pkgutil

    import clawmem

    for info in pkgutil.walk_packages(clawmem.__path__, "clawmem."):
        if info.name != "clawmem.__main__":
            importlib.import_module(info.name)


def test_every_exit_code_is_in_cli_md():
    from clawmem.errors import ClawmemError

    _import_all_clawmem_modules()
    doc = _read("cli.md")
    table = doc[doc.index("## Exit codes") :]
    classes, todo = [], [ClawmemError]
    while todo:
        cls = todo.pop()
        classes.append(cls)
        todo.extend(cls.__subclasses__())
    assert len(classes) > 5
    for cls in classes:
        row = re.search(rf"^\| {cls.exit_code} \|.*$", table, re.M)
        assert row, f"exit code {cls.exit_code} ({cls.__name__}) is not in docs/cli.md"
        assert f"`{cls.__name__}`" in row.group(), (
            f"{cls.__name__} is not in the row for {cls.exit_code}"
        )
    for code in (0, 70, 130):
        assert re.search(rf"^\| {code} \|", table, re.M)


# --------------------------------------------------------------------------------------------
# docs/workspace.md and docs/storage.md


def test_every_setting_is_in_workspace_md():
    from clawmem.config import Config

    doc = _read("workspace.md")
    table = doc[doc.index("## Configuration") :]
    names = [name for name, _, _ in Config().items()]
    missing = [n for n in names if not re.search(rf"^\| `{n}` \|", table, re.M)]
    assert not missing, f"settings missing from docs/workspace.md: {missing}"


def _schema_tables() -> dict[str, list[str]]:
    """Every table clawmem creates, with its columns, read from schema.py's DDL."""
    from clawmem.store import schema

    ddl = "\n".join([schema.DDL, schema.vec0_ddl(4), schema.PLAIN_VECTORS_DDL])
    tables: dict[str, list[str]] = {}
    for m in re.finditer(
        r"CREATE (?:VIRTUAL )?TABLE IF NOT EXISTS (\w+)\s*(?:USING \w+)?\((.*?)\n\)", ddl, re.S
    ):
        cols = []
        for line in m.group(2).splitlines():
            line = re.sub(r"--.*", "", line).strip()
            word = re.match(r"(\w+)", line)
            if word and word.group(1).upper() not in {"PRIMARY", "FOREIGN", "UNIQUE", "CHECK"}:
                if "=" in line.split(",")[0] and not line.startswith(("body", "heading")):
                    continue  # fts5 options: content='', tokenize=…
                cols.append(word.group(1))
        tables[m.group(1)] = cols
    return tables


def test_every_table_and_column_is_in_storage_md():
    doc = _read("storage.md")
    tables = _schema_tables()
    assert {
        "meta",
        "files",
        "chunks",
        "chunk_entities",
        "chunks_fts",
        "embedding_cache",
        "chunk_vectors",
        "chunk_vectors_plain",
    } <= set(tables)
    missing = []
    for table, cols in tables.items():
        if f"`{table}`" not in doc:
            missing.append(table)
        missing.extend(f"{table}.{c}" for c in cols if f"`{c}`" not in doc)
    assert not missing, f"not in docs/storage.md: {missing}"


def test_the_status_json_example_names_the_versions_clawmem_writes():
    """docs/cli.md's `status --json` example said schema "1" and chunker "1" (11 and 7 now):
    a reader comparing it with their own output took their index for an old one."""
    from clawmem.store import schema
    from clawmem.text.textnorm import NORMALIZER_VERSION

    doc = _read("cli.md")
    example = doc[doc.index("### `status --json`") : doc.index("### `index --json`")]
    for key, now in (
        ("schema_version", schema.SCHEMA_VERSION),
        ("chunker_version", schema.CHUNKER_VERSION),
        ("normalizer_version", NORMALIZER_VERSION),
    ):
        assert f'"{key}": "{now}"' in example, (key, now)


def test_storage_md_names_the_versions_and_ranking_names():
    from clawmem.recall import fusion
    from clawmem.store import schema
    from clawmem.text.textnorm import NORMALIZER_VERSION

    doc = _read("storage.md")
    for name in (fusion.RRF, fusion.WEIGHTED):
        assert f"`{name}`" in doc
    assert f"schema_version` {schema.SCHEMA_VERSION}" in doc
    assert f"chunker_version` {schema.CHUNKER_VERSION}" in doc
    assert f"normalizer_version` {NORMALIZER_VERSION}" in doc
    assert f"redaction_version` {schema.REDACTION_VERSION}" in doc
    # The meta table's rows say each version "now N" too (chunker 7 went out saying 6).
    for name, now in (
        ("CHUNKER_VERSION", schema.CHUNKER_VERSION),
        ("NORMALIZER_VERSION", NORMALIZER_VERSION),
        ("REDACTION_VERSION", schema.REDACTION_VERSION),
    ):
        said = re.findall(rf"`{name}` \((?:in `schema.py`, )?now (\d+)\)", doc)
        assert said == [str(now)], (name, said, now)


# --------------------------------------------------------------------------------------------
# docs/python-api.md: the examples run, in order, and print what they say


def _python_blocks(doc: str) -> list[str]:
    blocks = []
    for m in re.finditer(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)```", doc, re.S):
        if "not run by tests" in m.group("before"):
            continue
        blocks.append(m.group("code"))
    return blocks


def _expected_output(code: str) -> list[str]:
    # Lines that are a whole comment show the output; two spaces and "(" start a remark on it.
    out = []
    for line in code.splitlines():
        if line.startswith("# "):
            out.append(re.split(r"\s{2,}\(", line[2:])[0].rstrip())
    return out


def test_python_api_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("CLAWMEM_VECTORS", "0")
    monkeypatch.delenv("CLAWMEM_WORKSPACE", raising=False)
    blocks = _python_blocks(_read("python-api.md"))
    assert len(blocks) >= 8
    namespace: dict = {"__name__": "__docs__"}
    for i, code in enumerate(blocks, 1):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                exec(compile(code, f"docs/python-api.md block {i}", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - name the block that failed
                pytest.fail(f"docs/python-api.md block {i} raised {exc!r}:\n{code}")
        printed = buf.getvalue().splitlines()
        # In the order shown: an example that lists hits says which comes first.
        at = 0
        for want in _expected_output(code):
            found = [n for n in range(at, len(printed)) if printed[n].startswith(want)]
            assert found, (
                f"docs/python-api.md block {i}: expected a line starting with {want!r} "
                f"after {printed[:at]}, got {printed}"
            )
            at = found[0] + 1
