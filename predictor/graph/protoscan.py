"""Read an ONNX file without reading its weights: a protobuf wire-format scan with seeks.

A file of up to ``DIRECT_READ_BYTES`` is returned whole (the loader parses it and forgets the values of
its big initializers: reading a few megabytes costs less than scanning them). A bigger file is read
through a small window that seeks past what it skips; top-level ModelProto fields and GraphProto fields are copied as they are,
except the values (raw_data, float_data, ...) of initializers larger than ``keep_elems`` elements, which
are skipped by their length prefix: their pages are never touched, so a model with gigabytes of weights
inside the file costs only its graph structure in time and memory. The result is a ModelProto whose big
initializers keep their name, dims and type but no values. Truncated or malformed wire data raises
``ValueError`` naming what was cut.
"""
from __future__ import annotations

import os

DIRECT_READ_BYTES = 64 << 20
_MODEL_GRAPH = 7
_GRAPH_INITIALIZER = 5
_TENSOR_DIMS = 1
_TENSOR_VALUE_FIELDS = frozenset({4, 5, 6, 7, 9, 10, 11})  # float, int32, string, int64, raw, double, uint64


class _Window:
    """Byte access to a file through a cached window of ``size`` bytes; skipped ranges are never read."""

    def __init__(self, f, length: int, size: int = 1 << 16):
        self.f, self.length, self.size = f, length, size
        self.base, self.data = 0, b""

    def __len__(self) -> int:
        return self.length

    def chunk(self, pos: int, n: int) -> bytes:
        """Up to ``n`` bytes from ``pos`` (fewer at the end of the file), from the cached window."""
        if not (self.base <= pos and pos + n <= self.base + len(self.data)):
            self.f.seek(pos)
            self.base, self.data = pos, self.f.read(max(self.size, n))
        return self.data[pos - self.base:pos - self.base + n]

    def __getitem__(self, key):
        if isinstance(key, slice):
            a, b = key.start, key.stop
            if self.base <= a and b <= self.base + len(self.data):
                return self.data[a - self.base:b - self.base]
            self.f.seek(a)
            return self.f.read(b - a)
        if not self.base <= key < self.base + len(self.data):
            self.f.seek(key)
            self.base, self.data = key, self.f.read(self.size)
            if not self.data:
                raise ValueError("unexpected end of file")
        return self.data[key - self.base]


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    chunk = buf.chunk(pos, min(10, end - pos)) if isinstance(buf, _Window) else buf[pos:min(pos + 10, end)]
    result = shift = 0
    for b in chunk:
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    if len(chunk) >= 10:
        raise ValueError("varint too long")
    raise ValueError("truncated varint")


def _fields(buf, pos: int, end: int):
    """Yield (field number, wire type, start of field incl. tag, value start, value end)."""
    while pos < end:
        start = pos
        tag, pos = _varint(buf, pos, end)
        field, wire = tag >> 3, tag & 7
        if field == 0:
            raise ValueError("field number 0")
        if wire == 0:
            _, pos2 = _varint(buf, pos, end)
        elif wire == 1:
            pos2 = pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos, end)
            pos2 = pos + length
        elif wire == 5:
            pos2 = pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos2 > end:
            raise ValueError(f"field {field} runs past the end of its message (truncated)")
        yield field, wire, start, pos, pos2
        pos = pos2


def _encode_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _numel(buf, start: int, end: int) -> int:
    n, seen = 1, False
    for field, wire, _, vs, ve in _fields(buf, start, end):
        if field != _TENSOR_DIMS:
            continue
        seen = True
        if wire == 0:
            d, _ = _varint(buf, vs, ve)
            n *= d
        elif wire == 2:  # packed
            p = vs
            while p < ve:
                d, p = _varint(buf, p, ve)
                n *= d
    return n if seen else 1


def _strip_tensor(buf, start: int, end: int, keep_elems: int) -> bytes:
    if _numel(buf, start, end) <= keep_elems:
        return bytes(buf[start:end])
    out = bytearray()
    for field, _, fs, _, ve in _fields(buf, start, end):
        if field not in _TENSOR_VALUE_FIELDS:
            out += buf[fs:ve]
    return bytes(out)


def _strip_graph(buf, start: int, end: int, keep_elems: int) -> bytes:
    out = bytearray()
    run = start  # start of the current run of fields copied as they are
    for field, wire, fs, vs, ve in _fields(buf, start, end):
        if field == _GRAPH_INITIALIZER and wire == 2:
            if run < fs:
                out += buf[run:fs]
            t = _strip_tensor(buf, vs, ve, keep_elems)
            out += _encode_varint((field << 3) | 2) + _encode_varint(len(t)) + t
            run = ve
    if run < end:
        out += buf[run:end]
    return bytes(out)


def read_model_bytes(path: str, keep_elems: int) -> bytes:
    """Serialized ModelProto of ``path``, with the values of large initializers left out when the file is
    bigger than ``DIRECT_READ_BYTES``."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= DIRECT_READ_BYTES:
            return f.read()
        buf = _Window(f, size)
        out = bytearray()
        for field, wire, fs, vs, ve in _fields(buf, 0, len(buf)):
            if field == _MODEL_GRAPH and wire == 2:
                g = _strip_graph(buf, vs, ve, keep_elems)
                out += _encode_varint((field << 3) | 2) + _encode_varint(len(g)) + g
            else:
                out += buf[fs:ve]
        return bytes(out)
