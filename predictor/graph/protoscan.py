"""Read an ONNX file without reading its weights: a protobuf wire-format scan with seeks.

A file of up to ``DIRECT_READ_BYTES`` is returned whole (the loader parses it and forgets the values of
its big initializers: reading a few megabytes costs less than scanning them). A bigger file is read
through a small window that seeks past what it skips, and rewritten without its payloads, which are
skipped by their length prefix (their pages are never touched): the values (raw_data, float_data, ...) of
every tensor larger than ``keep_elems`` elements or ``SKIP_BYTES`` bytes wherever it sits (graph
initializers, sparse initializers, Constant nodes and other tensor attributes, subgraphs, functions), and
doc strings, metadata values and string attributes over ``SKIP_BYTES``. Only messages bigger than
``SKIP_BYTES`` are opened (a small node cannot hold a payload), so a model with gigabytes inside the file
costs its graph structure in time and memory. A stripped tensor keeps its name, dims and type and is
marked as stored elsewhere (``data_location = EXTERNAL``), so no value is ever taken from it, even when its
dims claim fewer elements than its data holds. Any other field over ``MAX_KEPT_FIELD_BYTES`` (a name of
16 MiB) is refused. Truncated or malformed wire data raises ``ValueError`` naming what was cut.
"""
from __future__ import annotations

import os

DIRECT_READ_BYTES = 64 << 20
SKIP_BYTES = 1 << 16  # a payload above this is skipped, a message above this is opened
MAX_KEPT_FIELD_BYTES = 16 << 20  # a name, type or other kept field above this is refused
MAX_DEPTH = 64
_TENSOR_DIMS = 1
_TENSOR_DATA_LOCATION = 14
_TENSOR_VALUE_FIELDS = frozenset({4, 5, 6, 7, 9, 10, 11})  # float, int32, string, int64, raw, double, uint64
_DATA_LOCATION_EXTERNAL = bytes([(_TENSOR_DATA_LOCATION << 3) | 0, 1])
_DROP = "drop"
# message type -> {length-delimited field number: the submessage type, or _DROP for a payload string}
# (onnx.proto3 field numbers; "initializer" tensors are examined whatever their size)
_SCHEMA = {
    "model": {6: _DROP, 7: "graph", 14: "entry", 20: "training", 25: "function"},
    "graph": {1: "node", 5: "initializer", 10: _DROP, 15: "sparse", 16: "entry"},
    "node": {5: "attribute", 6: _DROP, 9: "entry"},
    "attribute": {4: _DROP, 5: "tensor", 6: "graph", 9: _DROP, 10: "tensor", 11: "graph", 13: _DROP,
                  22: "sparse", 23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},
    "function": {7: "node", 8: _DROP, 11: "attribute", 14: "entry"},
    "training": {1: "graph", 2: "graph"},
    "entry": {2: _DROP},
}


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
    if type(buf) is _Window:
        return _window_fields(buf, pos, end)
    return _plain_fields(buf, pos, end)


_HEAD = 20  # a field's tag and length varints: at most 10 bytes each


def _window_fields(w: _Window, pos: int, end: int):
    """:func:`_fields` over a file window: the tag and length are decoded from the window's bytes in place;
    a field whose head is not wholly inside both the message and the file goes through :func:`_plain_fields`
    (the same values and errors)."""
    while pos < end:
        if pos + _HEAD > end:
            yield from _plain_fields(w, pos, end)
            return
        i = pos - w.base
        d = w.data
        if i < 0 or i + _HEAD > len(d):
            w.chunk(pos, _HEAD)
            i, d = pos - w.base, w.data
            if i + _HEAD > len(d):  # the file ends within reach
                yield from _plain_fields(w, pos, end)
                return
        tag = d[i]
        j = i + 1
        if tag & 0x80:
            tag, j = _decode(d, i)
        field, wire = tag >> 3, tag & 7
        if field == 0:
            raise ValueError("field number 0")
        if wire == 2:
            length = d[j]
            j += 1
            if length & 0x80:  # (a node or a tensor's header: most often two bytes)
                b = d[j]
                if b & 0x80:
                    length, j = _decode(d, j - 1)
                else:
                    length = (length & 0x7F) | (b << 7)
                    j += 1
            vs = pos + (j - i)
            ve = vs + length
        elif wire == 0:
            _, k = _decode(d, j)
            vs = pos + (j - i)
            ve = pos + (k - i)
        elif wire == 1:
            vs = pos + (j - i)
            ve = vs + 8
        elif wire == 5:
            vs = pos + (j - i)
            ve = vs + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if ve > end:
            raise ValueError(f"field {field} runs past the end of its message (truncated)")
        yield field, wire, pos, vs, ve
        pos = ve


def _decode(d: bytes, i: int) -> tuple[int, int]:
    """The varint at ``d[i]`` (at least 10 bytes follow it) and the index after it."""
    result = shift = 0
    for k in range(i, i + 10):
        b = d[k]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, k + 1
        shift += 7
    raise ValueError("varint too long")


def _plain_fields(buf, pos: int, end: int):
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


def _ld(field: int, payload: bytes) -> bytes:
    return _encode_varint((field << 3) | 2) + _encode_varint(len(payload)) + payload


def _strip_tensor(buf, start: int, end: int, keep_elems: int) -> bytes:
    """A TensorProto as it is, or without its values (and marked as stored elsewhere: no value is ever
    taken from it) when it has more than ``keep_elems`` elements or more than ``SKIP_BYTES`` of bytes (dims
    that say [] or [1] over a gigabyte of raw_data)."""
    if end - start <= SKIP_BYTES and _numel(buf, start, end) <= keep_elems:
        return bytes(buf[start:end])
    out = bytearray()
    for field, _, fs, _, ve in _fields(buf, start, end):
        if field not in _TENSOR_VALUE_FIELDS and field != _TENSOR_DATA_LOCATION:
            if ve - fs > MAX_KEPT_FIELD_BYTES:
                raise ValueError(f"a tensor's field {field} holds {ve - fs} bytes (a name or note that large is "
                                 "not a model)")
            out += buf[fs:ve]
    out += _DATA_LOCATION_EXTERNAL
    return bytes(out)


def _strip(kind: str, buf, start: int, end: int, keep_elems: int, depth: int = 0) -> bytes:
    """The message of type ``kind`` in ``buf[start:end]`` with its payloads left out (see the module
    docstring): a submessage is rewritten only when it is bigger than SKIP_BYTES (or an initializer), so a
    graph of small nodes costs one pass over its top-level fields."""
    if depth > MAX_DEPTH:
        raise ValueError(f"messages nested deeper than {MAX_DEPTH} levels")
    schema = _SCHEMA[kind]
    out = bytearray()
    run = start  # start of the current run of fields copied as they are
    for field, wire, fs, vs, ve in _fields(buf, start, end):
        if wire != 2:
            continue
        sub = schema.get(field)
        big = ve - vs > SKIP_BYTES
        if sub is None or not (big or sub == "initializer"):
            if big and ve - vs > MAX_KEPT_FIELD_BYTES:
                raise ValueError(f"field {field} of a {kind} message holds {ve - vs} bytes (a name or "
                                 "string that large is not a model)")
            continue
        if run < fs:
            out += buf[run:fs]
        run = ve
        if sub is _DROP:
            continue  # a doc string, a metadata value, a string attribute: not needed to cost the graph
        if sub in ("tensor", "initializer"):
            out += _ld(field, _strip_tensor(buf, vs, ve, keep_elems))
        else:
            out += _ld(field, _strip(sub, buf, vs, ve, keep_elems, depth + 1))
    if run < end:
        out += buf[run:end]
    return bytes(out)


def read_model_bytes(path: str, keep_elems: int) -> bytes:
    """Serialized ModelProto of ``path``, with its payloads left out when the file is bigger than
    ``DIRECT_READ_BYTES``."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= DIRECT_READ_BYTES:
            return f.read()
        return _strip("model", _Window(f, size), 0, size, keep_elems)
