"""`clawmem model status | import DIR | use e5|minilm|PATH.gguf`: which embedding model a workspace uses."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from pathlib import Path
from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json

model_app = typer.Typer(help="Show, import or choose the embedding model.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(model_app, name="model")


@model_app.command("status")
def status(as_json: JsonOpt = False, workspace: WorkspaceOpt = None) -> None:
    """The configured model: name, languages, licence, identity, and whether the index was built
    with it."""
    from clawmem.cli.render import out

    info = open_mem(workspace).model_status().to_dict()  # both forms drawn from the JSON one
    if as_json:
        print_json(info)
        return
    about = info.get("about") or {}
    rows = [
        ("model", about.get("name") or info.get("model")),
        ("languages", about.get("languages")),
        ("licence", about.get("licence")),
        ("source", info.get("source")),
        ("path", info.get("path")),
        ("state", info.get("state")),
        ("index_match", info.get("index_match")),
        ("cache_dir", info.get("cache_dir")),
    ]
    for key, value in rows:
        if value is not None:
            out.print(f"{key:<12} {value}", markup=False)
    ident = info.get("identity")
    if ident:
        out.print(
            f"{'identity':<12} {ident['provider']} {ident['model']} {ident['dims']} dims, "
            f"{ident['pooling']} pooling, sha256 {ident['model_sha256'][:16]}…",
            markup=False,
        )
        out.print(
            f"{'prefixes':<12} query {ident['query_prefix']!r}, document {ident['document_prefix']!r}",
            markup=False,
        )
    others = [
        f"{m['name']} ({', '.join(m['aliases'][:2])}; {m['languages'].split(' (')[0]})"
        for m in info.get("builtins", [])
        if m["name"] != about.get("name")
    ]
    if others:
        out.print(f"{'also built in':<12} {'; '.join(others)}", markup=False)


@model_app.command("import")
def import_(
    src: Annotated[
        Path,
        typer.Argument(help="A local sentence-transformers BERT-family folder (MiniLM, bge, e5)."),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write the GGUF (default: the model cache)."),
    ] = None,
    query_prefix: Annotated[
        str | None,
        typer.Option("--query-prefix", help="Prefix for queries (default: the model family's)."),
    ] = None,
    document_prefix: Annotated[
        str | None, typer.Option("--document-prefix", help="Prefix for documents.")
    ] = None,
    use: Annotated[bool, typer.Option("--use", help="Also make this workspace use it.")] = False,
    as_json: JsonOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Convert a local model folder to GGUF (offline), optionally using it here."""
    from clawmem.cli.render import out as console
    from clawmem.embedders.convert import convert_sentence_transformers
    from clawmem.embedders.default import default_cache_dir

    src = src.expanduser()
    target = out or default_cache_dir() / "models" / f"{src.resolve().name}-f32.gguf"
    path = convert_sentence_transformers(
        src, target, query_prefix=query_prefix, document_prefix=document_prefix
    )
    result = {"path": str(path)}
    if use:
        used = open_mem(workspace).use_model(path, query_prefix=None, document_prefix=None)
        result.update(used.to_dict())
    if as_json:
        print_json(result)
    else:
        console.print(f"wrote {path}", markup=False)
        if use:
            console.print(
                "this workspace now uses it; run `clawmem index` to re-embed", markup=False
            )


@model_app.command("use")
def use(
    path: Annotated[
        str,
        typer.Argument(
            help="'default' (multilingual-e5-small), 'e5', 'e5-f32' (the same weights with "
            "float32 layers, the default before 4-bit layers: an index built with it keeps its "
            "vectors), 'minilm' (all-MiniLM-L6-v2, English, faster), or the path of a GGUF "
            "embedding model."
        ),
    ],
    query_prefix: Annotated[
        str | None,
        typer.Option("--query-prefix", help="Prefix for queries (default: from the GGUF)."),
    ] = None,
    document_prefix: Annotated[
        str | None, typer.Option("--document-prefix", help="Prefix for documents.")
    ] = None,
    as_json: JsonOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Point this workspace at an embedding model (written to clawmem.toml); the next
    `clawmem index` embeds every unit once with it."""
    from clawmem.cli.render import out

    res = open_mem(workspace).use_model(
        path, query_prefix=query_prefix, document_prefix=document_prefix
    )
    if as_json:
        print_json(res.to_dict())
    else:
        about = res.about or {}
        name = about.get("name") or res.model
        langs = f", {about['languages']}" if about.get("languages") else ""
        # One level of parentheses: the languages bring their own "(about 100 languages, …)".
        out.print(
            f"model: {name}{' (default)' if res.model is None else ''}: "
            f"{res.identity['dims']} dims{langs}; run `clawmem index` to re-embed",
            markup=False,
        )
