"""``clawmem model status`` and ``clawmem model use``: the workspace's model as a person checks
and changes it (which model, and loading it: ``embedders/model_choice.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The module, not its names: a test's stand-in model (conftest.py) replaces them there.
import clawmem.embedders.model_choice as chosen
from clawmem.embedders.default import DEFAULT, builtin
from clawmem.text.records import as_json

if TYPE_CHECKING:
    from clawmem.ingest.indexing import Indexer


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelStatus:
    """What ``clawmem model status`` reports. ``to_dict()`` leaves out what does not apply:
    ``available``/``detail`` without a built-in model, ``default_available``/``default`` unless
    it is the default, ``damaged`` when its bytes are sound, ``identity`` and ``index_match``
    when the model does not load."""

    source: str  # where the choice comes from: "default", "clawmem.toml", "CLAWMEM_MODEL"…
    model: str | None  # the built-in model's name; None for a user's GGUF
    path: str | None  # the model file
    cache_dir: str
    about: dict | None  # name, languages, licence
    available: bool | None = None  # a built-in model: whether it can be used…
    detail: str | None = None  # …and why (not)
    default_available: bool | None = None  # the same, when it is the default
    default: str | None = None
    builtins: list[dict]  # every built-in model: its description, aliases, available
    damaged: str | None = None  # why the cached built-in model's bytes are not its own
    state: str  # "ok" (maybe with a repair note) or "unusable: why"
    identity: dict | None = None  # when it loads: provider, model, sha256, dims, prefixes…
    index_match: str | None = None  # "yes", or why the index's vectors are another model's

    def to_dict(self) -> dict:
        """``clawmem model status --json``."""
        d: dict = {
            "source": self.source,
            "model": self.model,
            "path": self.path,
            "cache_dir": self.cache_dir,
            "about": self.about,
        }
        if self.available is not None:
            d["available"], d["detail"] = self.available, self.detail
        if self.default_available is not None:
            d["default_available"], d["default"] = self.default_available, self.default
        d["builtins"] = self.builtins
        if self.damaged is not None:
            d["damaged"] = self.damaged
        d["state"] = self.state
        if self.identity is not None:
            d["identity"] = self.identity
        if self.index_match is not None:
            d["index_match"] = self.index_match
        return d


@dataclass(frozen=True, slots=True)
class ModelUsed:
    """What ``use_model`` wrote to ``clawmem.toml``, and the model it checked."""

    model: str | None  # the ``model`` setting written; None: the default
    identity: dict  # provider, model, sha256, dims, prefixes, pooling
    about: dict | None  # name, languages, licence of a built-in model

    def to_dict(self) -> dict:
        """``clawmem model use --json``."""
        return as_json(self)


def model_status(ix: Indexer) -> ModelStatus:
    """What ``clawmem model status`` reports for the workspace of ``ix``."""
    from clawmem.embedders.default import BUILTINS, builtin_available, default_cache_dir
    from clawmem.store import db
    from clawmem.store.index import Index

    choice = chosen.model_choice(ix.root, ix.cfg)
    info: dict[str, Any] = {
        "source": ix.cfg.sources.get("model", "default") if ix.cfg.model else "default",
        "model": choice.builtin.name if choice.builtin is not None else None,
        "path": str(choice.path) if choice.path else None,
        "cache_dir": str(default_cache_dir()),
        "about": choice.describe(),
    }
    if choice.builtin is not None:
        ok, why = builtin_available(choice.builtin)
        info["available"], info["detail"] = ok, why
        if choice.is_default:
            info["default_available"], info["default"] = ok, why
    info["builtins"] = [
        {**m.describe(), "aliases": list(m.aliases), "available": builtin_available(m)[0]}
        for m in BUILTINS
    ]
    if choice.builtin is not None:
        from clawmem.embedders.default import REPAIRS, verify_cached

        damaged = verify_cached(choice.builtin)  # the bytes themselves, not the cached hash
        if damaged is not None:
            info["damaged"] = damaged
    emb = ix.supply.embedder()
    if emb is None:
        return ModelStatus(**info, state=f"unusable: {ix.supply.error}")
    info["state"] = "ok"
    if choice.builtin is not None and str(emb.model_path) in REPAIRS:
        info["state"] = f"ok, {REPAIRS[str(emb.model_path)]}"
    info["path"] = str(emb.model_path)
    info["identity"] = emb.identity.to_dict()
    info["about"] = getattr(emb, "about", None) or info["about"]
    if ix.index_path.exists():
        try:
            idx = Index.open(ix.index_path, readonly=True)
            try:
                built = idx.get_meta("embedder")
            finally:
                idx.close()
            info["index_match"] = (
                "yes"
                if built == emb.identity.key()
                else f"no: index built with {built or 'no model'}; run `clawmem index`"
            )
        except db.DatabaseError:
            pass
    return ModelStatus(**info)


def use_model(
    ix: Indexer,
    target: str | Path | None = None,
    *,
    query_prefix: str | None = None,
    document_prefix: str | None = None,
) -> ModelUsed:
    """Make the workspace of ``ix`` use ``target`` after checking that it loads.

    ``target``: None or "default" for the default model, a built-in model's name or
    alias ("e5", "minilm"), or the path of a GGUF embedding model. Written to
    ``clawmem.toml``; the next ``clawmem index`` embeds every unit once with it
    (vectors of different models never mix; the old ones wait in the cache).
    """
    from dataclasses import replace

    from clawmem.config import CONFIG_FILE, load_config, trust, trust_state
    from clawmem.embedders.llama import LlamaEmbedder
    from clawmem.files.tomlfile import set_keys

    named = DEFAULT if target is None else None
    if isinstance(target, str) and not target.lower().endswith(".gguf"):
        named = builtin(target)
    value: str | None
    if named is not None:
        value = None if named is DEFAULT else named.name
        probe = chosen.load_embedder(
            ix.root,
            replace(
                ix.cfg,
                model=value or "",
                query_prefix=query_prefix,
                document_prefix=document_prefix,
            ),
        )
    else:
        path = Path(target).expanduser().resolve()  # type: ignore[arg-type]
        probe = LlamaEmbedder(path, query_prefix=query_prefix, document_prefix=document_prefix)
        try:
            value = path.relative_to(ix.root).as_posix()
        except ValueError:
            value = str(path)
    identity = probe.identity.to_dict()
    about = getattr(probe, "about", None)
    probe.close()
    config = ix.root / CONFIG_FILE
    before = config.read_bytes() if config.is_file() else None
    reached = trust_state(ix.root).needed  # whether the file led outside before this change
    set_keys(
        config,
        {"model": value, "query_prefix": query_prefix, "document_prefix": document_prefix},
    )
    # The user named this model: the file stays approved if it was, or needed no approval.
    trust.carry_over(ix.root, before, reached)
    ix.reconfigure(load_config(ix.root))
    return ModelUsed(model=value, identity=identity, about=about)
