"""Reusing per-node results across nodes that differ only in their tensor names.

A network repeats a few kinds of node many times (a transformer's layers, a ResNet's blocks): a 100k-node
decoder has 19 distinct nodes once names are left out. :func:`node_key` is a node's identity without
names: op type, domain, attributes, each input's and output's (dtype, shape, is_initializer), which inputs
are the same tensor, the known values of its inputs. Keys are only compared within one call (they hold the
id of the attribute map). What a node's cost formula and a calibration's
``predict_op`` compute is a function of that key (and of the precision policy, the opset, the GPU), except
for the names they carry: ``OpWork.input_bytes`` is keyed by input tensor names, which :func:`work_template`
and :func:`with_names` map to input positions and back. Results are identical to computing every node.
"""
from __future__ import annotations

from operator import attrgetter, itemgetter
from types import MappingProxyType as _proxy  # frozen_map of a dict made here (no copy)

from ..types import Node, OpWork


def node_key(node: Node) -> tuple:
    """A hashable identity of ``node`` without its names. Its attributes enter by the identity of their map:
    the loader gives nodes with equal attributes one shared map (graph/loader.py), and a map stays alive as
    long as its node, so equal ids are equal attributes (other equal maps only miss a reuse)."""
    ins = node.inputs
    const = node.const_inputs
    if len(ins) == 2 and ins[0] is not None and ins[1] is not None:  # (most nodes: binary ops, MatMul; as below)
        a, b = ins
        an, bn = a.name, b.name
        same = (0, 0) if an == bn else (0, 1)
        known = (const.get(an), const.get(bn)) if const else ()
        in_sigs = ((a.dtype, a.shape, a.is_initializer), (b.dtype, b.shape, b.is_initializer))
    elif len(ins) > 1:
        names = [t.name if t is not None else None for t in ins]
        same = tuple([names.index(x) for x in names])
        known = tuple([const.get(x) for x in names]) if const else ()
        if all(ins):  # (no omitted input: the signatures by attrgetter, without a Python frame per tensor)
            in_sigs = tuple(map(_in_sig, ins))
        else:
            in_sigs = tuple([_in_sig(t) if t is not None else None for t in ins])
    else:
        same = ()
        t = ins[0] if ins else None
        known = (const.get(t.name),) if const and t is not None else ()
        in_sigs = ((t.dtype, t.shape, t.is_initializer),) if t is not None else ((None,) if ins else ())
    outs = node.outputs
    if len(outs) == 1:
        o = outs[0]
        out_sigs = ((o.dtype, o.shape, o.is_initializer, not o.name),)
    else:
        out_sigs = tuple([(t.dtype, t.shape, t.is_initializer, not t.name) for t in outs])
    return (node.op_type, node.domain, id(node.attrs), in_sigs, out_sigs, same, known)


_in_sig = attrgetter("dtype", "shape", "is_initializer")  # (dtype, shape, is_initializer) of a TensorInfo


def work_template(node: Node, work: OpWork) -> tuple | None:
    """``work.input_bytes`` by input position: (the positions, the bytes, an itemgetter of those positions), ``()``
    when it is empty, None when it names a tensor that is not one of the node's inputs (then the work cannot be
    carried to another node)."""
    if not work.input_bytes:
        return ()
    pos = {}
    for i, t in enumerate(node.inputs):
        if t is not None and t.name not in pos:
            pos[t.name] = i
    at, values = [], []
    for name, b in work.input_bytes.items():
        i = pos.get(name)
        if i is None:
            return None
        at.append(i)
        values.append(b)
    return tuple(at), tuple(values), itemgetter(*at)


def with_names(work: OpWork, template: tuple, node: Node) -> OpWork:
    """``work`` with its ``input_bytes`` named after ``node``'s inputs (``template``: :func:`work_template`)."""
    if not template:
        return work
    at, values, getter = template
    ins = node.inputs
    if len(at) == 1:
        named = {ins[at[0]].name: values[0]}
    else:  # (the names by C calls: no comprehension frame)
        named = dict(zip(map(_name, getter(ins)), values))
    w = work
    return _new_work(w.flops, w.bytes_read, w.bytes_written, w.kernels, w.weight_bytes, w.notes, _proxy(named), w.gemm,
                  w.gemm_operand_bytes, w.rows, w.overlaps_producer, w.runtime_kernel, w.channel_walk,
                  w.attention_tiles, w.attention_causal, w.thread_loop)


_name = attrgetter("name")
_new_work = OpWork._fast_new  # (OpWork(...) without the type call)
