"""Read a GGUF file's header: its scalar metadata, how many tensors it has and where their data ends.

``gguf.GGUFReader`` builds a numpy view for every element of every metadata array; the default
model's 250,000-token vocabulary (three arrays of 250,000) makes that 20-50 seconds of Python on
each first load of a model. Validation needs only the scalars and the tensors' extent, so this
walks the header with ``struct`` and steps over arrays: strings one length at a time, fixed-size
items in one jump (well under a second for the default model).

The layout (GGUF v2 and v3; https://github.com/ggml-org/ggml/blob/master/docs/gguf.md):
magic, version, tensor count, metadata count; the metadata (key, type, value); then each
tensor's name, dimensions, type and offset; the tensor data starts at the next multiple of
``general.alignment`` (32 unless set).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32

_STRING, _ARRAY = 8, 9
# Fixed-size value types (GGUF's numbering) and their struct codes.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
            10: "Q", 11: "q", 12: "d"}  # fmt: skip
_UINT32 = 4

Scalar = int | float | bool | str


@dataclass(frozen=True)
class Header:
    fields: dict[str, Scalar]  # scalar metadata only; arrays (the vocabulary) are stepped over
    tensor_count: int
    data_end: int  # the byte just past the last tensor's data, as the header describes it


class _Cursor:
    def __init__(self, buf: mmap.mmap | bytes, order: str) -> None:
        self.buf, self.order, self.pos = buf, order, 0

    def take(self, code: str) -> int | float | bool:
        fmt = self.order + code
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)  # struct.error past the end
        self.pos += struct.calcsize(fmt)
        return value

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.buf):
            raise ValueError(f"a length at byte {self.pos} runs past the end of the file")
        self.pos += n

    def raw_string(self) -> bytes:
        n = int(self.take("Q"))
        start = self.pos
        self.skip(n)
        return bytes(self.buf[start : self.pos])

    def value(self, kind: int) -> Scalar | None:
        """Read one value of ``kind``; arrays are stepped over and give None."""
        if kind == _STRING:
            return self.raw_string().decode("utf-8", errors="replace")
        code = _SCALARS.get(kind)
        if code is not None:
            return self.take(code)
        if kind == _ARRAY:
            self.skip_array()
            return None
        raise ValueError(f"unknown metadata value type {kind} at byte {self.pos}")

    def skip_array(self) -> None:
        kind, count = int(self.take("I")), int(self.take("Q"))
        code = _SCALARS.get(kind)
        if code is not None:
            self.skip(count * struct.calcsize(code))
            return
        if kind not in (_STRING, _ARRAY):
            raise ValueError(f"unknown array item type {kind} at byte {self.pos}")
        # Each string or array item takes at least 8 bytes (its length): a corrupt count
        # fails here at once instead of looping over billions of items.
        if count * 8 > len(self.buf) - self.pos:
            raise ValueError(f"an array of {count} items at byte {self.pos} cannot fit the file")
        for _ in range(count):
            if kind == _STRING:
                self.skip(int(self.take("Q")))
            else:
                self.skip_array()


def read_header(path: Path) -> Header:
    """The header of the GGUF at ``path``. Raises ``ValueError`` (or ``struct.error``, a
    ``UnicodeDecodeError``, ``OSError``) when the file is not a readable GGUF."""
    import gguf  # the tensor types' block sizes; the constants module is cheap

    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != MAGIC:
            raise ValueError("GGUF magic invalid")
        order = "<"
        (version,) = struct.unpack_from("<I", buf, 4)
        if version & 0xFFFF == 0:  # written on a big-endian machine
            order = ">"
            (version,) = struct.unpack_from(">I", buf, 4)
        if version not in VERSIONS:
            raise ValueError(f"GGUF version {version} is not supported (only 2 and 3)")
        cur = _Cursor(buf, order)
        cur.pos = 8
        tensor_count, kv_count = int(cur.take("Q")), int(cur.take("Q"))

        fields: dict[str, Scalar] = {}
        seen: set[str] = set()
        alignment = DEFAULT_ALIGNMENT
        for _ in range(kv_count):
            key = cur.raw_string().decode("utf-8")
            if key in seen:
                raise ValueError(f"duplicate metadata key {key!r}")
            seen.add(key)
            kind = int(cur.take("I"))
            value = cur.value(kind)
            if key == "general.alignment":
                if kind != _UINT32 or not isinstance(value, int):
                    raise ValueError("general.alignment is not a uint32")
                if value <= 0 or value & (value - 1):
                    raise ValueError("general.alignment is not a power of two")
                alignment = value
            if value is not None:
                fields[key] = value

        names: set[str] = set()
        extent = 0
        for _ in range(tensor_count):
            name = cur.raw_string().decode("utf-8")
            if name in names:
                raise ValueError(f"duplicate tensor {name!r}")
            names.add(name)
            n_dims = int(cur.take("I"))
            n_elements = 1
            for _ in range(n_dims):
                n_elements *= int(cur.take("Q"))
            ggml_type = gguf.GGMLQuantizationType(int(cur.take("I")))  # ValueError if unknown
            offset = int(cur.take("Q"))
            block, type_size = gguf.GGML_QUANT_SIZES[ggml_type]
            extent = max(extent, offset + n_elements * type_size // block)
        data_start = -(-cur.pos // alignment) * alignment
        return Header(fields, tensor_count, data_start + extent if tensor_count else 0)


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]  # GGUF's order: the first dimension is the innermost (a row)
    ggml_type: int
    offset: int  # absolute byte offset of its data in the file
    nbytes: int


@dataclass(frozen=True)
class Layout:
    """Everything in a GGUF but the tensors' data: scalars, the arrays asked for, the tensors."""

    fields: dict[str, Scalar]
    arrays: dict[str, list]
    tensors: dict[str, Tensor]


def read_layout(path: Path, arrays: frozenset[str] = frozenset()) -> Layout:
    """The GGUF's metadata with the named ``arrays`` read (strings as bytes, numbers as
    Python numbers) and each tensor's place in the file. Slow for a 250,000-string vocabulary
    (about a second): for building derived caches, never on a query's path."""
    import gguf

    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != MAGIC:
            raise ValueError("GGUF magic invalid")
        (version,) = struct.unpack_from("<I", buf, 4)
        if version not in VERSIONS:
            raise ValueError(
                f"GGUF version {version} is not supported (only little-endian 2 and 3)"
            )
        cur = _Cursor(buf, "<")
        cur.pos = 8
        tensor_count, kv_count = int(cur.take("Q")), int(cur.take("Q"))
        fields: dict[str, Scalar] = {}
        got: dict[str, list] = {}
        alignment = DEFAULT_ALIGNMENT
        for _ in range(kv_count):
            key = cur.raw_string().decode("utf-8")
            kind = int(cur.take("I"))
            if kind == _ARRAY and key in arrays:
                got[key] = _read_array(cur)
                continue
            value = cur.value(kind)
            if key == "general.alignment" and isinstance(value, int):
                alignment = value
            if value is not None:
                fields[key] = value
        infos = []
        for _ in range(tensor_count):
            name = cur.raw_string().decode("utf-8")
            n_dims = int(cur.take("I"))
            shape = tuple(int(cur.take("Q")) for _ in range(n_dims))
            ggml_type = int(cur.take("I"))
            offset = int(cur.take("Q"))
            infos.append((name, shape, ggml_type, offset))
        data_start = -(-cur.pos // alignment) * alignment
        tensors = {}
        for name, shape, ggml_type, offset in infos:
            block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(ggml_type)]
            n = 1
            for d in shape:
                n *= d
            tensors[name] = Tensor(
                name, shape, ggml_type, data_start + offset, n * type_size // block
            )
        return Layout(fields, got, tensors)


def _read_array(cur: _Cursor) -> list:
    kind, count = int(cur.take("I")), int(cur.take("Q"))
    if kind == _STRING:
        return [cur.raw_string() for _ in range(count)]
    code = _SCALARS.get(kind)
    if code is None:
        raise ValueError(f"unsupported array item type {kind} at byte {cur.pos}")
    fmt = f"{cur.order}{count}{code}"
    values = list(struct.unpack_from(fmt, cur.buf, cur.pos))
    cur.pos += struct.calcsize(fmt)
    return values
