"""Convert a sentence-transformers BERT folder to a GGUF that llama.cpp embeds with.

Why our own converter: llama.cpp's ``convert_hf_to_gguf.py`` needs torch and
transformers, which clawmem deliberately does not depend on. A BERT encoder is
small and regular, so we map its tensors by hand, read ``model.safetensors``
directly, and write f32 tensors with ``gguf.GGUFWriter``. The layout follows
llama.cpp's BERT conventions (tensor names, hyperparameter keys, the
"phantom space" WordPiece vocabulary) so the file loads as ``general.architecture
= bert``.

Supported: ``model_type: bert`` with absolute position embeddings, a WordPiece
tokenizer, mean or CLS pooling, and no extra Dense layer after pooling
(all-MiniLM-*, bge-*-en*, e5-*). Only ``model.safetensors`` is read.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np  # imported by the converters: llama.py reads this module's keys only

from clawmem.errors import ModelError
from clawmem.files.atomic import replacing

# Keys of our own; LlamaEmbedder reads them back so a GGUF carries its prompts.
KEY_QUERY_PREFIX = "clawmem.query_prefix"
KEY_DOCUMENT_PREFIX = "clawmem.document_prefix"

BGE_EN_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "

_SUPPORTED_ACTS = {"gelu", "gelu_new", "gelu_pytorch_tanh"}

# HF BERT tensor names (after stripping "bert." and renaming gamma/beta) -> GGUF.
_EMBEDDING_TENSORS = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
_LAYER_TENSORS = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
_LAYER_RE = re.compile(r"^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$")
# Tensors an embedding model does not use: the NSP pooler, MLM heads, a buffer.
_SKIPPED_PREFIXES = ("pooler.", "cls.", "embeddings.position_ids")

_SPECIAL_DEFAULTS = {
    "cls": "[CLS]",
    "sep": "[SEP]",
    "unk": "[UNK]",
    "pad": "[PAD]",
    "mask": "[MASK]",
}

# gguf.TokenType values; repeated here so module import stays cheap.
_TOKEN_NORMAL = 1
_TOKEN_CONTROL = 3
_TOKEN_UNUSED = 5


@dataclass(frozen=True)
class _Vocab:
    tokens: list[str]  # already in llama.cpp's phantom-space form
    types: list[int]
    special_ids: dict[str, int]  # cls/sep/unk/pad/mask
    lowercase: bool
    strip_accents: bool


def convert_sentence_transformers(
    src_dir: Path,
    out_path: Path,
    *,
    query_prefix: str | None = None,
    document_prefix: str | None = None,
    name: str | None = None,
) -> Path:
    """Write ``out_path`` (a GGUF, f32) from the sentence-transformers folder ``src_dir``.

    Prefixes not given are taken from the model's own ``prompts`` (in
    ``config_sentence_transformers.json``), else from its family (e5, bge-en), else
    empty. ``name`` defaults to the folder name. The file appears atomically.
    """
    src_dir = Path(src_dir)
    out_path = Path(out_path)
    name = name or src_dir.resolve().name
    config = _read_config(src_dir)
    pooling = _read_pooling(src_dir)
    weights_path = src_dir / "model.safetensors"
    if not weights_path.is_file():
        if (src_dir / "pytorch_model.bin").is_file():
            raise ModelError(
                f"{src_dir}: only pytorch_model.bin is present; "
                "clawmem reads model.safetensors only",
                hint="Save the model with safetensors (model.save_pretrained(dir, "
                "safe_serialization=True)) or download its model.safetensors.",
            )
        raise ModelError(
            f"{src_dir}: model.safetensors is missing",
            hint="Point at a sentence-transformers model folder that contains model.safetensors.",
        )
    if query_prefix is None or document_prefix is None:
        q_default, d_default = _default_prefixes(src_dir, name)
        query_prefix = q_default if query_prefix is None else query_prefix
        document_prefix = d_default if document_prefix is None else document_prefix

    tensors = dict(_map_tensors(weights_path, config))
    n_vocab = tensors["token_embd.weight"].shape[0]
    vocab = _read_vocab(src_dir, n_vocab)

    with replacing(out_path, mode=0o644) as tmp_path:  # a model file is not a secret
        _write_gguf(
            tmp_path,
            config=config,
            pooling=pooling,
            vocab=vocab,
            tensors=tensors,
            name=name,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
        )
    return out_path


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"{path}: cannot read JSON ({exc})",
            hint="The model folder looks damaged; re-download it.",
        ) from exc


def _read_config(src_dir: Path) -> dict[str, Any]:
    if not src_dir.is_dir():
        raise ModelError(
            f"{src_dir}: not a folder",
            hint="Give the folder of a sentence-transformers model (with config.json).",
        )
    cfg_path = src_dir / "config.json"
    if not cfg_path.is_file():
        raise ModelError(
            f"{src_dir}: config.json is missing, so this is not a Hugging Face model folder",
            hint="Give the folder of a sentence-transformers model (with config.json).",
        )
    config = _read_json(cfg_path)
    model_type = config.get("model_type")
    if model_type != "bert":
        raise ModelError(
            f"{cfg_path}: model_type {model_type!r} is not supported (only 'bert')",
            hint="Supported are BERT-family sentence-transformers models such as "
            "all-MiniLM-L6-v2, bge-small-en-v1.5 or e5-small-v2; convert others with "
            "llama.cpp's convert_hf_to_gguf.py.",
        )
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError(
            f"{cfg_path}: position_embedding_type "
            f"{config.get('position_embedding_type')!r} is not supported (only 'absolute')",
            hint="Convert this model with llama.cpp's convert_hf_to_gguf.py.",
        )
    act = config.get("hidden_act", "gelu")
    if act not in _SUPPORTED_ACTS:
        raise ModelError(
            f"{cfg_path}: hidden_act {act!r} is not supported (llama.cpp's BERT uses GELU)",
            hint="Convert this model with llama.cpp's convert_hf_to_gguf.py.",
        )
    for key in (
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
    ):
        if not isinstance(config.get(key), int):
            raise ModelError(
                f"{cfg_path}: {key} is missing or not an integer",
                hint="The model folder looks damaged; re-download it.",
            )
    return config


def _read_pooling(src_dir: Path) -> int:
    """The GGUF pooling type (1 mean, 2 cls) from the sentence-transformers modules."""
    pooling_dir = src_dir / "1_Pooling"
    modules_path = src_dir / "modules.json"
    if modules_path.is_file():
        modules = _read_json(modules_path)
        for module in modules:
            kind = str(module.get("type", ""))
            if kind.endswith(".Pooling"):
                pooling_dir = src_dir / module.get("path", "1_Pooling")
            elif kind.endswith(".Dense"):
                # llama.cpp's BERT graph stops at pooling; a projection after it
                # would silently be dropped and give the wrong vectors.
                raise ModelError(
                    f"{modules_path}: the model has a Dense layer after pooling, which "
                    "llama.cpp's BERT cannot apply",
                    hint="Use a model whose modules are Transformer, Pooling and Normalize only.",
                )
    cfg_path = pooling_dir / "config.json"
    if not cfg_path.is_file():
        raise ModelError(
            f"{src_dir}: {cfg_path.relative_to(src_dir)} is missing, so the pooling is unknown",
            hint="Give a sentence-transformers model folder (it has 1_Pooling/config.json).",
        )
    cfg = _read_json(cfg_path)
    if cfg.get("pooling_mode_mean_tokens"):
        return 1
    if cfg.get("pooling_mode_cls_token"):
        return 2
    raise ModelError(
        f"{cfg_path}: only mean or CLS pooling is supported",
        hint="llama.cpp pools BERT embeddings by mean or CLS token only.",
    )


def _default_prefixes(src_dir: Path, name: str) -> tuple[str, str]:
    """(query, document) prefixes the model was trained with, best effort."""
    st_cfg = src_dir / "config_sentence_transformers.json"
    if st_cfg.is_file():
        prompts = _read_json(st_cfg).get("prompts") or {}
        if isinstance(prompts, dict) and prompts:
            query = prompts.get("query", "")
            doc = prompts.get("document", prompts.get("passage", ""))
            return str(query), str(doc)
    lname = name.lower()
    if re.search(r"(^|[-_/])(multilingual-)?e5([-_]|$)", lname):
        return "query: ", "passage: "
    if "bge" in lname and "en" in lname.split("bge", 1)[1]:
        return BGE_EN_QUERY_PREFIX, ""
    return "", ""


# --- weights ----------------------------------------------------------------

_ST_DTYPES: dict[str, str] = {
    "F32": "<f4",
    "F16": "<f2",
    "F64": "<f8",
}


def _read_safetensors(path: Path) -> Iterator[tuple[str, np.ndarray]]:
    """Yield (name, float32 array) from a .safetensors file.

    Read by hand (the format is an 8-byte header length, a JSON header, raw
    data) because the numpy backend of the safetensors package cannot load
    bfloat16, which some checkpoints use.
    """
    import numpy as np

    size = path.stat().st_size
    try:
        with path.open("rb") as fh:
            (header_len,) = struct.unpack("<Q", fh.read(8))
            if header_len > size - 8:
                raise ValueError("header length beyond end of file")
            header = json.loads(fh.read(header_len))
    except (OSError, ValueError, struct.error) as exc:
        raise ModelError(
            f"{path}: not a readable safetensors file ({exc})",
            hint="The model file looks damaged or truncated; re-download it.",
        ) from exc
    data_start = 8 + header_len
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    for tname, info in header.items():
        if tname == "__metadata__":
            continue
        dtype_name = info.get("dtype")
        start, end = info["data_offsets"]
        if data_start + end > size:
            raise ModelError(
                f"{path}: tensor {tname} runs past the end of the file (truncated?)",
                hint="Re-download the model file.",
            )
        chunk = raw[data_start + start : data_start + end]
        if dtype_name == "BF16":
            # bfloat16 is the top half of a float32.
            arr = (chunk.view("<u2").astype(np.uint32) << 16).view(np.float32)
        elif dtype_name in _ST_DTYPES:
            arr = chunk.view(_ST_DTYPES[dtype_name])
        else:
            # Integer buffers (position_ids) are never used; anything else is unsupported.
            if tname.endswith("position_ids"):
                continue
            raise ModelError(
                f"{path}: tensor {tname} has dtype {dtype_name}, which is not supported",
                hint="Use a float32, float16 or bfloat16 checkpoint.",
            )
        yield tname, np.ascontiguousarray(arr.reshape(info["shape"]), dtype=np.float32)


def _map_tensors(weights_path: Path, config: dict[str, Any]) -> Iterator[tuple[str, np.ndarray]]:
    n_layer = config["num_hidden_layers"]
    expected = set(_EMBEDDING_TENSORS.values()) - {"token_types.weight"}
    for i in range(n_layer):
        for short in _LAYER_TENSORS.values():
            expected |= {f"blk.{i}.{short}.weight", f"blk.{i}.{short}.bias"}
    seen: set[str] = set()
    for hf_name, arr in _read_safetensors(weights_path):
        name = hf_name.removeprefix("bert.")
        if name.endswith(".gamma"):
            name = name[: -len(".gamma")] + ".weight"
        elif name.endswith(".beta"):
            name = name[: -len(".beta")] + ".bias"
        if name.startswith(_SKIPPED_PREFIXES):
            continue
        gguf_name = _EMBEDDING_TENSORS.get(name)
        if gguf_name is None:
            match = _LAYER_RE.match(name)
            part = _LAYER_TENSORS.get(match.group(2)) if match else None
            if match is None or part is None or int(match.group(1)) >= n_layer:
                raise ModelError(
                    f"{weights_path}: unexpected tensor {hf_name!r}; "
                    "this is not a plain BERT encoder",
                    hint="Convert this model with llama.cpp's convert_hf_to_gguf.py.",
                )
            gguf_name = f"blk.{match.group(1)}.{part}.{match.group(3)}"
        seen.add(gguf_name)
        yield gguf_name, arr
    missing = sorted(expected - seen)
    if missing:
        raise ModelError(
            f"{weights_path}: {len(missing)} BERT tensors are missing (first: {missing[0]})",
            hint="The model file looks incomplete; re-download it.",
        )


# --- tokenizer --------------------------------------------------------------


def _token_name(value: Any) -> str | None:
    """A special token as written in tokenizer_config / special_tokens_map."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _read_vocab(src_dir: Path, n_vocab: int) -> _Vocab:
    tok_json_path = src_dir / "tokenizer.json"
    vocab_txt = src_dir / "vocab.txt"
    tok_json: dict[str, Any] = _read_json(tok_json_path) if tok_json_path.is_file() else {}
    model = tok_json.get("model") or {}
    if tok_json and model.get("type") != "WordPiece":
        raise ModelError(
            f"{tok_json_path}: tokenizer type {model.get('type')!r} is not supported "
            "(only WordPiece)",
            hint="Convert this model with llama.cpp's convert_hf_to_gguf.py.",
        )
    by_id: dict[int, str] = {}
    if isinstance(model.get("vocab"), dict):
        by_id = {int(i): tok for tok, i in model["vocab"].items()}
    elif vocab_txt.is_file():
        lines = vocab_txt.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        by_id = dict(enumerate(lines))
    else:
        raise ModelError(
            f"{src_dir}: neither tokenizer.json nor vocab.txt is present",
            hint="The model folder needs its tokenizer files.",
        )
    if max(by_id) >= n_vocab:
        raise ModelError(
            f"{src_dir}: the tokenizer has {max(by_id) + 1} tokens but the embedding "
            f"matrix only {n_vocab} rows",
            hint="The tokenizer does not belong to these weights.",
        )

    special: set[int] = set()
    for added in tok_json.get("added_tokens", []):
        by_id[int(added["id"])] = added["content"]
        if added.get("special"):
            special.add(int(added["id"]))

    tok_cfg_path = src_dir / "tokenizer_config.json"
    tok_cfg: dict[str, Any] = _read_json(tok_cfg_path) if tok_cfg_path.is_file() else {}
    for sid, entry in (tok_cfg.get("added_tokens_decoder") or {}).items():
        if entry.get("special"):
            special.add(int(sid))
    st_map_path = src_dir / "special_tokens_map.json"
    st_map: dict[str, Any] = _read_json(st_map_path) if st_map_path.is_file() else {}

    ids = {tok: i for i, tok in by_id.items()}
    special_ids: dict[str, int] = {}
    for role, default in _SPECIAL_DEFAULTS.items():
        key = f"{role}_token"
        tok = _token_name(tok_cfg.get(key)) or _token_name(st_map.get(key)) or default
        if tok not in ids:
            raise ModelError(
                f"{src_dir}: the {role} token {tok!r} is not in the vocabulary",
                hint="The tokenizer files are inconsistent; re-download the model.",
            )
        special_ids[role] = ids[tok]
        special.add(ids[tok])

    tokens: list[str] = []
    types: list[int] = []
    for i in range(n_vocab):
        name = by_id.get(i)
        if name is None:
            # Embedding rows beyond the tokenizer (padding to a multiple of 8 etc.)
            # still need a unique token string.
            tokens.append(f"[PAD{i}]")
            types.append(_TOKEN_UNUSED)
        elif i in special:
            tokens.append(name)
            types.append(_TOKEN_CONTROL)
        else:
            # llama.cpp's WordPiece works on "phantom space" tokens: a word start
            # carries U+2581, a continuation drops its "##".
            tokens.append(name[2:] if name.startswith("##") else "\u2581" + name)
            types.append(_TOKEN_NORMAL)

    normalizer = tok_json.get("normalizer") or {}
    if normalizer.get("type") == "BertNormalizer":
        lowercase = bool(normalizer.get("lowercase", True))
        strip = normalizer.get("strip_accents")
    else:
        lowercase = bool(tok_cfg.get("do_lower_case", True))
        strip = tok_cfg.get("strip_accents")
    # HF BERT: strip_accents=None means "follow lowercase".
    strip_accents = lowercase if strip is None else bool(strip)
    return _Vocab(tokens, types, special_ids, lowercase, strip_accents)


# --- writing ----------------------------------------------------------------


def gguf_writer(path: Path, arch: str) -> Any:
    """A ``gguf.GGUFWriter`` that packs long metadata arrays (token lists, scores) in bulk.

    The stock writer packs array items one Python call at a time: for a 250k-piece
    vocabulary that is most of a conversion's time (seconds, tens on a busy machine).
    """
    import struct as _struct

    import gguf
    import numpy as np

    vt = gguf.GGUFValueType
    bulk = {vt.FLOAT32: "<f4", vt.INT32: "<i4", vt.UINT32: "<u4"}

    class _Writer(gguf.GGUFWriter):
        def _pack_val(self, val, vtype, add_vtype, sub_type=None):  # type: ignore[no-untyped-def]
            if (
                vtype == vt.ARRAY
                and isinstance(val, list)
                and len(val) > 256
                and self.endianess == gguf.GGUFEndian.LITTLE
            ):
                ltype = sub_type if sub_type is not None else vt.get_type(val[0])
                if ltype == vt.STRING:
                    length = _struct.Struct("<Q").pack
                    body = b"".join(
                        length(len(b)) + b
                        for b in (v.encode("utf-8") if isinstance(v, str) else v for v in val)
                    )
                elif ltype in bulk:
                    body = np.asarray(val, dtype=bulk[ltype]).tobytes()
                else:
                    return super()._pack_val(val, vtype, add_vtype, sub_type)
                head = _struct.pack("<I", vtype) if add_vtype else b""
                return head + _struct.pack("<IQ", ltype, len(val)) + body
            return super()._pack_val(val, vtype, add_vtype, sub_type)

    return _Writer(path, arch)


def _write_gguf(
    path: Path,
    *,
    config: dict[str, Any],
    pooling: int,
    vocab: _Vocab,
    tensors: dict[str, np.ndarray],
    name: str,
    query_prefix: str,
    document_prefix: str,
) -> None:
    import gguf  # deferred: only conversion needs the writer

    arch = "bert"
    writer = gguf_writer(path, arch)
    writer.add_name(name)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_layer_norm_eps(float(config.get("layer_norm_eps", 1e-12)))
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType(pooling))

    writer.add_tokenizer_model("bert")
    writer.add_token_list(vocab.tokens)
    writer.add_token_types(vocab.types)
    # Token-type embeddings exist for "sentence A/B"; llama.cpp checks the count.
    writer.add_token_type_count(int(config.get("type_vocab_size", 2)))
    ids = vocab.special_ids
    # llama.cpp's WordPiece tokenizer opens with the BOS id and closes with SEP.
    writer.add_bos_token_id(ids["cls"])
    writer.add_eos_token_id(ids["sep"])
    writer.add_uint32("tokenizer.ggml.cls_token_id", ids["cls"])
    writer.add_sep_token_id(ids["sep"])
    writer.add_unk_token_id(ids["unk"])
    writer.add_pad_token_id(ids["pad"])
    writer.add_mask_token_id(ids["mask"])
    writer.add_add_bos_token(True)
    writer.add_add_sep_token(True)
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", vocab.lowercase)
    writer.add_bool("tokenizer.ggml.normalizer.strip_accents", vocab.strip_accents)

    # Written even when empty (add_string would skip ""): an explicit "" says
    # "this model takes no prefix", which readers must not second-guess.
    writer.add_key_value(KEY_QUERY_PREFIX, query_prefix, gguf.GGUFValueType.STRING)
    writer.add_key_value(KEY_DOCUMENT_PREFIX, document_prefix, gguf.GGUFValueType.STRING)

    for tname, arr in tensors.items():
        writer.add_tensor(tname, arr)
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
