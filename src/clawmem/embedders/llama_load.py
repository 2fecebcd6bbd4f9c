"""Loading a GGUF into llama.cpp, and the process around it: llama-cpp-python imported (or why
not), llama.cpp's chatter on file descriptor 2 captured so a failed load can quote it, flash
attention tried first, the batch size llama.cpp's graph reservation accepts, the CPUs this
process may use, the model file's mapped pages and the C heap handed back. ``LlamaEmbedder``
(embedders/llama.py) embeds with the model loaded here.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from clawmem.errors import ModelError

# Models this process has loaded (the CLI skips Python's teardown of them at exit: cli.app._exit).
models_loaded = 0


def trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc keeps them in its per-thread
    arenas, which the lanes' threads filled): 7-10 MB measured after a bulk call. Nothing
    elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # honours container/taskset limits
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def release_mapped_pages(path: Path) -> None:
    """Let the kernel take back the model file's pages until a decode touches them again.

    llama.cpp maps the GGUF and reads it all in at load (MAP_POPULATE), so every page counts in
    the process's resident memory; the default model's token table alone is 54 MB, of which a
    query touches a few rows. The pages stay in the page cache (no disk read to get one back):
    this only stops counting, in this process, the ones it does not use (measured on the default
    model: 155 MB of the file resident after load, 103 MB after a query and this). Linux only,
    best effort: elsewhere, or if anything fails, nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        target = os.path.realpath(path)
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            spans = [
                line.split()[0]
                for line in fh
                if line.rstrip("\n").endswith(" " + target) and line.split()[1].startswith("r")
            ]
        for span in spans:
            start, end = (int(x, 16) for x in span.split("-"))
            madvise(
                start, end - start, 4
            )  # MADV_DONTNEED: a shared file mapping's pages stay cached
    except (OSError, ValueError, AttributeError):
        pass


def batch_size(max_tokens: int, seq_max: int) -> int:
    """Smallest batch >= max_tokens that llama.cpp's graph reservation accepts.

    llama-cpp-python asks for min(n_batch, seq_max) parallel sequences, and
    reserving the graph asserts unless that number divides the batch size.
    """
    if max_tokens <= seq_max:
        return max_tokens
    return math.ceil(max_tokens / seq_max) * seq_max


@contextlib.contextmanager
def _captured_stderr() -> Iterator[IO[bytes]]:
    """Send file descriptor 2 to a temp file while llama.cpp loads.

    llama.cpp writes diagnostics straight to fd 2 (not through Python), so
    ``verbose=False`` alone leaves some chatter. The capture is kept so a
    failed load can quote llama.cpp's reason.
    """
    with tempfile.TemporaryFile(mode="w+b") as sink:
        try:
            saved = os.dup(2)
        except OSError:  # no fd 2 at all (some embedded hosts)
            yield sink
            return
        try:
            with contextlib.suppress(Exception):
                import sys

                sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            yield sink
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _captured_text(sink: IO[bytes]) -> str:
    sink.flush()
    sink.seek(0)
    text = sink.read().decode("utf-8", errors="replace").strip()
    return text[-800:]


def import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(
            "llama-cpp-python is not installed, so embeddings are unavailable",
            hint="pip install llama-cpp-python (it compiles llama.cpp; allow ~10 minutes).",
        ) from exc
    return llama_cpp


def load_model(path: Path, *, batch_tokens: int, n_threads: int, pooling_type: int | None) -> Any:
    llama_cpp = import_llama_cpp()
    kwargs: dict[str, Any] = {
        "model_path": str(path),
        # The Llama object's context only tokenizes: embedding contexts are made with SEQ_MAX.
        "embedding": False,
        # n_ctx is the batch capacity; each input is separately capped at the
        # trained context (max_tokens), so positions never exceed it.
        "n_ctx": batch_tokens,
        "n_batch": batch_tokens,
        # An encoder must see a whole batch in one micro-batch.
        "n_ubatch": batch_tokens,
        "n_threads": n_threads,
        "n_threads_batch": n_threads,
        "flash_attn": True,
        "verbose": False,
    }
    if pooling_type is not None:
        kwargs["pooling_type"] = pooling_type
    errors: list[str] = []
    # Flash attention is an optimisation; a build or model without it still works.
    for flash in (True, False):
        kwargs["flash_attn"] = flash
        with _captured_stderr() as sink:
            try:
                llm = llama_cpp.Llama(**kwargs)
            except Exception as exc:  # noqa: BLE001 - llama-cpp-python raises ValueError, RuntimeError and others
                reason = str(exc).replace(str(path), "").strip(" :")
                detail = _captured_text(sink)
                errors.append(reason + (f" [llama.cpp: {detail}]" if detail else ""))
                continue
        global models_loaded
        models_loaded += 1
        return llm
    raise ModelError(
        f"llama.cpp could not load {path} ({errors[-1]})",
        hint="The file may be damaged, incomplete, or need a newer llama-cpp-python.",
    )
