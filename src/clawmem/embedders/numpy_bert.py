"""A BERT encoder's forward pass in NumPy, on weights memory-mapped from its GGUF.

For one short text (a query) this is as fast as llama.cpp (a few milliseconds of matrix
products) and needs no model load: the weights are read where they lie in the file, and of the
token table only the rows of the text's tokens are touched (dequantised from Q4_0 on the fly).
It computes what llama.cpp's ``bert`` graph computes, in float32:

* token, position and token-type-0 embeddings summed, then LayerNorm;
* per block, post-norm: self-attention (biases, scale 1/sqrt(head width), no mask: one
  sequence), output projection, residual, LayerNorm; then the feed-forward (GELU), residual,
  LayerNorm;
* mean pooling over every token, the start and end tokens included.

GELU is ggml's: the tanh approximation, looked up in a float16 table (``GGML_GELU_FP16``), so
its input and output are rounded to float16 here too. Attention runs on float32 (llama.cpp's
flash attention rounds Q, K and V to float16; the vectors still agree to a cosine above
0.99999 on every evaluation text: ``benchmarks.suites.query_path``).
"""

from __future__ import annotations

import math
import mmap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

GGML_F32, GGML_Q4_0, GGML_F16 = 0, 2, 1
SUPPORTED_TYPES = frozenset({GGML_F32, GGML_F16, GGML_Q4_0})
_Q4_BLOCK = 32
_Q4_BYTES = 18
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
BLOCK_TENSORS = (  # each block's, after blk.N.
    "attn_q.weight", "attn_q.bias", "attn_k.weight", "attn_k.bias", "attn_v.weight",
    "attn_v.bias", "attn_output.weight", "attn_output.bias", "attn_output_norm.weight",
    "attn_output_norm.bias", "ffn_up.weight", "ffn_up.bias", "ffn_down.weight", "ffn_down.bias",
    "layer_output_norm.weight", "layer_output_norm.bias",
)  # fmt: skip


@dataclass(frozen=True)
class Hyper:
    layers: int
    heads: int
    eps: float
    context: int


class NumpyBert:
    """The encoder of one GGUF; ``tensors`` maps a name to (shape in GGUF order, ggml type,
    absolute offset), as ``query_cache`` records it."""

    def __init__(
        self,
        path: Path,
        tensors: dict[str, tuple[list[int], int, int]],
        hp: Hyper,
        expanded: tuple[Path, dict[str, int]] | None = None,
    ):
        self.hp = hp
        # The 4-bit layers already expanded to float32 (``expand_layers``): the file and each
        # tensor's offset in it, in floats. Without it they are expanded here (~0.1 s of CPU).
        self._expanded: dict[str, int] = {}
        if expanded is not None:
            with open(expanded[0], "rb") as fh:
                self._xmap = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            self._xfile = np.frombuffer(self._xmap, dtype=np.float32)
            self._expanded = expanded[1]
        # A plain array over a read-only mapping (np.memmap's subclass costs a Python call per
        # view and per operation): the pages are read in on first touch and shared with every
        # other process mapping the file, llama.cpp's included.
        with open(path, "rb") as fh:
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self._file = np.frombuffer(self._map, dtype=np.uint8)
        self._t = tensors
        self._embd = self._raw("token_embd.weight")
        width = tensors["token_embd.weight"][0][0]
        self.width = width
        self._pos = self._f32("position_embd.weight")
        self._type0 = self._f32("token_types.weight")[0]
        self._ln0 = (self._f32("token_embd_norm.weight"), self._f32("token_embd_norm.bias"))
        # llama.cpp multiplies 4-bit weights by activations rounded to Q8_0 blocks (int8 and an
        # fp16 scale per 32 values); rounding them the same way here brings the query path's
        # vectors closer to llama.cpp's (cosine 0.99996 on average on REALTALK questions, from
        # 0.99992; the lowest 0.99989 on tests/test_query_path.py's tricky texts).
        self.q8_inputs = tensors["blk.0.attn_q.weight"][1] == GGML_Q4_0
        # Each block's weights as views, the matrices transposed (x @ W.T): made once.
        self._blocks = [
            {
                name: self._f32(f"blk.{i}.{name}").T
                if name.endswith(".weight") and "norm" not in name
                else self._f32(f"blk.{i}.{name}")
                for name in BLOCK_TENSORS
            }
            for i in range(hp.layers)
        ]

    def _raw(self, name: str) -> Any:
        shape, kind, offset = self._t[name]
        rows = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        if kind == GGML_Q4_0:
            row_bytes = shape[0] // _Q4_BLOCK * _Q4_BYTES
        elif kind == GGML_F16:
            row_bytes = shape[0] * 2
        else:
            row_bytes = shape[0] * 4
        return self._file[offset : offset + rows * row_bytes].reshape(rows, row_bytes), kind

    def _f32(self, name: str) -> np.ndarray:
        (raw, kind) = self._raw(name)
        shape = self._t[name][0]
        if kind == GGML_Q4_0 and name in self._expanded:
            at = self._expanded[name]
            out = self._xfile[at : at + raw.shape[0] * shape[0]]
        elif kind == GGML_Q4_0:
            # 4-bit layers (the default model's): expanded once, exactly, when the model is
            # made (the token table stays 4-bit and is expanded row by row in ``_rows``).
            out = _dequantize_q4_0(raw).reshape(-1)
        else:
            out = raw.view(np.float16 if kind == GGML_F16 else np.float32)
        return out.reshape(shape[::-1]) if len(shape) > 1 else out.reshape(-1)

    def _rows(self, ids: list[int]) -> np.ndarray:
        raw, kind = self._embd
        rows = raw[np.asarray(ids, dtype=np.int64)]
        if kind == GGML_F32:
            return rows.view(np.float32).copy()
        if kind == GGML_F16:
            return rows.view(np.float16).astype(np.float32)
        return _dequantize_q4_0(rows).reshape(len(ids), self.width)

    def pooled(self, ids: list[int]) -> np.ndarray:
        """The mean-pooled output (not normalised) for one sequence of at most ``context``."""
        n = len(ids)
        if n > self.hp.context:
            raise ValueError(f"{n} tokens is more than the model's context ({self.hp.context})")
        x = self._rows(ids) + self._pos[:n] + self._type0
        x = _layer_norm(x, *self._ln0, self.hp.eps)
        for w in self._blocks:
            x = self._block(x, w)
        return x.mean(axis=0, dtype=np.float64).astype(np.float32)

    def _block(self, x: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
        n, width = x.shape
        heads = self.hp.heads
        d = width // heads
        qin = _q8_0 if self.q8_inputs else _same
        xq = qin(x)
        q = xq @ w["attn_q.weight"] + w["attn_q.bias"]
        k = xq @ w["attn_k.weight"] + w["attn_k.bias"]
        v = xq @ w["attn_v.weight"] + w["attn_v.bias"]
        q = q.reshape(n, heads, d).transpose(1, 0, 2)
        k = k.reshape(n, heads, d).transpose(1, 2, 0)
        v = v.reshape(n, heads, d).transpose(1, 0, 2)
        s = (q @ k) * np.float32(1.0 / math.sqrt(d))
        s -= s.max(axis=2, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=2, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(n, width)
        a = qin(a) @ w["attn_output.weight"] + w["attn_output.bias"]
        eps = self.hp.eps
        x = _layer_norm(x + a, w["attn_output_norm.weight"], w["attn_output_norm.bias"], eps)
        h = _gelu(qin(x) @ w["ffn_up.weight"] + w["ffn_up.bias"])
        h = qin(h) @ w["ffn_down.weight"] + w["ffn_down.bias"]
        return _layer_norm(x + h, w["layer_output_norm.weight"], w["layer_output_norm.bias"], eps)


def expand_layers(path: Path, tensors: dict[str, tuple[list[int], int, int]], out: Path) -> dict:
    """Write every 4-bit tensor but the token table (whose rows ``_rows`` expands as a text
    needs them) to ``out`` as float32, in name order; {name: offset in floats}. What the
    encoder would expand on every cold start, done once: the file is mapped instead."""
    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        raw = np.frombuffer(mapped, dtype=np.uint8)
        offsets: dict[str, int] = {}
        at = 0
        with open(out, "wb") as dest:
            for name in sorted(tensors):
                shape, kind, offset = tensors[name]
                if kind != GGML_Q4_0 or name == "token_embd.weight":
                    continue
                rows = int(np.prod(shape[1:])) if len(shape) > 1 else 1
                row_bytes = shape[0] // _Q4_BLOCK * _Q4_BYTES
                block = raw[offset : offset + rows * row_bytes].reshape(rows, row_bytes)
                values = _dequantize_q4_0(block)
                dest.write(values.tobytes())
                offsets[name] = at
                at += values.size
                del block
            del raw
    finally:
        mapped.close()
    return offsets


def _same(x: np.ndarray) -> np.ndarray:
    return x


def _q8_0(x: np.ndarray) -> np.ndarray:
    """``x`` (rows, columns) rounded as ggml's quantize_row_q8_0 rounds a matrix product's
    input for quantised weights: per block of 32, scale max|x| / 127 stored as fp16, values
    rounded half to even by x * 127 / max|x|."""
    n, width = x.shape
    b = x.reshape(n, width // _Q4_BLOCK, _Q4_BLOCK)
    amax = np.abs(b).max(axis=2, keepdims=True)
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, np.float32(127.0) / amax, np.float32(0.0))
    q = np.rint(b * inv)
    scale = (amax / np.float32(127.0)).astype(np.float16).astype(np.float32)
    return (q * scale).reshape(n, width)


# A nibble's value (q - 8) for every byte, low and high half: one gather per half.
_NIBBLE_LOW = ((np.arange(256) & 0x0F) - 8).astype(np.float32)
_NIBBLE_HIGH = ((np.arange(256) >> 4) - 8).astype(np.float32)


def _dequantize_q4_0(rows: np.ndarray) -> np.ndarray:
    """float32 (rows, columns) from Q4_0 bytes (rows, columns / 32 * 18): each block an fp16
    scale and 32 nibbles, byte j holding weights j (low) and j + 16 (high), value (q - 8) * scale.
    Table lookups into one preallocated array: the default model's 21M layer weights in ~0.1 s."""
    blocks = rows.reshape(len(rows), -1, _Q4_BYTES)
    scale = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)  # (n, blocks, 1)
    qs = blocks[:, :, 2:]
    out = np.empty((len(rows), blocks.shape[1], 32), dtype=np.float32)
    np.multiply(_NIBBLE_LOW[qs], scale, out=out[:, :, :16])
    np.multiply(_NIBBLE_HIGH[qs], scale, out=out[:, :, 16:])
    return out.reshape(len(rows), -1)


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True, dtype=np.float64).astype(np.float32)
    c = x - mean
    var = (c.astype(np.float64) ** 2).mean(axis=1, keepdims=True).astype(np.float32)
    return c * (1.0 / np.sqrt(var + np.float32(eps))) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    """ggml's GELU: tanh approximation through a float16 table; 0 below -10, x above 10."""
    h = x.astype(np.float16).astype(np.float32)
    y = 0.5 * h * (1.0 + np.tanh(np.float32(_SQRT_2_OVER_PI) * h * (1.0 + 0.044715 * h * h)))
    y = y.astype(np.float16).astype(np.float32)
    return np.where(x <= -10.0, np.float32(0.0), np.where(x >= 10.0, x, y)).astype(np.float32)
