"""Our GGUF header reader against gguf's own reader, on files written by gguf's writer.

gguf.GGUFReader is the reference (it is what the header reader replaced, for speed): on every
file both must agree on each scalar, on the tensor count and on where the tensor data ends; a
damaged file must be refused with ModelError, never another exception.
"""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import numpy as np
import pytest

from clawmem.embedders import LlamaEmbedder
from clawmem.embedders.gguf_header import read_header
from clawmem.embedders.model_identity import inspect_gguf
from clawmem.errors import ModelError

V = gguf.GGUFValueType


def _write(path: Path, *, big_endian: bool = False, alignment: int | None = None) -> Path:
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    w = gguf.GGUFWriter(path, "bert", endianess=endian)
    if alignment is not None:
        w.add_custom_alignment(alignment)
    w.add_name("tiny ünïcode model")
    w.add_context_length(512)
    w.add_embedding_length(8)
    w.add_key_value("bert.pooling_type", 1, V.UINT32)
    w.add_key_value("test.u8", 200, V.UINT8)
    w.add_key_value("test.i8", -5, V.INT8)
    w.add_key_value("test.u16", 60000, V.UINT16)
    w.add_key_value("test.i16", -30000, V.INT16)
    w.add_key_value("test.i32", -2_000_000_000, V.INT32)
    w.add_key_value("test.f32", 0.25, V.FLOAT32)
    w.add_key_value("test.bool", True, V.BOOL)
    w.add_key_value("test.u64", 2**63 + 5, V.UINT64)
    w.add_key_value("test.i64", -(2**62), V.INT64)
    w.add_key_value("test.f64", -1.5e300, V.FLOAT64)
    w.add_key_value("test.empty", "", V.STRING)
    w.add_array("tokenizer.ggml.tokens", ["[PAD]", "héllo", "", "世界"] * 5)
    w.add_array("tokenizer.ggml.scores", [0.5, -1.0] * 10)
    w.add_array("test.nested", [[1, 2, 3], [4]])
    w.add_key_value("test.after_arrays", "still read", V.STRING)
    w.add_tensor("a.weight", np.arange(24, dtype=np.float32).reshape(3, 8))
    w.add_tensor("b.weight", np.ones((5, 8), dtype=np.float16))
    w.add_tensor("c.bias", np.arange(7, dtype=np.int32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize("alignment", [None, 64, 8])
def test_agrees_with_ggufs_reader(tmp_path, big_endian, alignment):
    path = _write(tmp_path / "tiny.gguf", big_endian=big_endian, alignment=alignment)
    ours = read_header(path)
    ref = gguf.GGUFReader(path)
    assert ours.tensor_count == len(ref.tensors) == 3
    assert ours.data_end == max(t.data_offset + int(t.n_bytes) for t in ref.tensors)
    assert ours.data_end <= path.stat().st_size < ours.data_end + (alignment or 32)  # padding
    scalars = {
        key: field.contents()
        for key, field in ref.fields.items()
        if not key.startswith("GGUF.") and field.types[0] != V.ARRAY
    }
    assert ours.fields == scalars
    assert ours.fields["test.after_arrays"] == "still read"  # the arrays were stepped over whole
    assert ours.fields["test.bool"] is True and ours.fields["test.f32"] == 0.25
    assert ours.fields["general.name"] == "tiny ünïcode model"


def test_every_cut_of_the_header_is_refused_as_a_model_error(tmp_path):
    path = _write(tmp_path / "tiny.gguf")
    data = path.read_bytes()
    data_start = int(gguf.GGUFReader(path).data_offset)
    cut = tmp_path / "cut.gguf"
    for n in range(4, data_start + 8):
        cut.write_bytes(data[:n])
        with pytest.raises(ModelError) as err:
            inspect_gguf(cut)  # what LlamaEmbedder and the model cache validate with
        assert str(cut) in err.value.message
        assert "truncated" in err.value.message or "not a valid GGUF" in err.value.message, n


def test_damaged_counts_and_types_are_refused(tmp_path):
    path = _write(tmp_path / "tiny.gguf")
    data = path.read_bytes()
    tokens = data.index(b"tokenizer.ggml.tokens") + len("tokenizer.ggml.tokens")
    # after the key: value type ARRAY (uint32), item type STRING (uint32), count (uint64)
    assert struct.unpack_from("<IIQ", data, tokens) == (9, 8, 20)
    for patch, offset in [
        (struct.pack("<Q", 2**62), tokens + 8),  # an item count that cannot fit
        (struct.pack("<I", 99), tokens + 4),  # an unknown item type
        (struct.pack("<I", 77), tokens),  # an unknown value type
    ]:
        bad = tmp_path / "bad.gguf"
        bad.write_bytes(data[:offset] + patch + data[offset + len(patch) :])
        with pytest.raises(ModelError, match="not a valid GGUF"):
            LlamaEmbedder(bad)
    with pytest.raises(ModelError, match="not a valid GGUF"):
        bad.write_bytes(data[:4] + struct.pack("<I", 1) + data[8:])  # GGUF version 1
        LlamaEmbedder(bad)


@pytest.mark.parametrize("alignment", [None, 64, 8])
def test_the_layout_agrees_with_ggufs_reader(tmp_path, alignment):
    """``read_layout`` (the query path's cache is built from it): the arrays asked for, every
    tensor's shape, type, absolute offset and size, the scalars after the arrays."""
    from clawmem.embedders.gguf_header import read_layout

    path = _write(tmp_path / "tiny.gguf", alignment=alignment)
    layout = read_layout(path, frozenset({"tokenizer.ggml.tokens", "tokenizer.ggml.scores"}))
    ref = gguf.GGUFReader(path)
    assert layout.arrays["tokenizer.ggml.tokens"] == [
        t.encode() for t in ["[PAD]", "héllo", "", "世界"] * 5
    ]
    assert layout.arrays["tokenizer.ggml.scores"] == [0.5, -1.0] * 10
    assert "test.nested" not in layout.arrays and layout.fields["test.after_arrays"] == "still read"
    assert set(layout.tensors) == {t.name for t in ref.tensors}
    raw = path.read_bytes()
    for t in ref.tensors:
        ours = layout.tensors[t.name]
        assert ours.shape == tuple(int(d) for d in t.shape)
        assert ours.ggml_type == int(t.tensor_type)
        assert (ours.offset, ours.nbytes) == (t.data_offset, int(t.n_bytes))
        assert raw[ours.offset : ours.offset + ours.nbytes] == t.data.tobytes()


def test_the_layout_refuses_a_big_endian_file(tmp_path):
    from clawmem.embedders.gguf_header import read_layout

    with pytest.raises(ValueError, match="little-endian"):
        read_layout(_write(tmp_path / "big.gguf", big_endian=True))
