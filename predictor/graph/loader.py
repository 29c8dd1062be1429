"""Load an ONNX file into a typed graph without reading weights.

Steps: parse the protobuf (external data is never loaded, so a missing ``.data`` file is fine;
initializer values stored inside the file are skipped unless small); inline local functions (the
dynamo exporter nests them); bind symbolic input dimensions (``batch`` = the leading symbolic dim of
every graph input, ``shapes`` = whole input shapes); then one pass in topological order folds small
tensors (shape arithmetic, masks) and computes every output's shape and type with our own shape
functions (``graph/shapes.py``). ONNX shape inference (with data propagation) runs only when
that pass leaves outputs unknown (ops we have no shape function for), seeded with what we know, and
our pass runs again after it. Neither numpy nor the ``onnx`` package is imported on the common path
(only the generated protobuf module, see :func:`onnx_pb`). Tensors fixed before inference runs (initializers, Constant outputs and
what is computed only from them) are marked ``is_initializer``. The result is a frozen :class:`Graph`
of :class:`Node` with typed tensors.
"""
from __future__ import annotations

import gc
import os
from itertools import repeat
from operator import attrgetter
from dataclasses import field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

from ..types import Node, PredictorError, TensorInfo, frozen_map
from ..frozen import frozen_dataclass
from . import shapes as shape_fns
from . import shapes_contrib  # noqa: F401  (registers the shape rules of com.microsoft fusions, MatMulNBits)
from . import shapes_onehot  # noqa: F401  (registers the folding of OneHot: repeat counts of Tile)
from .onnx_proto import onnx_pb
from .protoscan import read_model_bytes
from .shapes import ONNX_TYPE_NAMES, ONNX_TYPES, RawNode, Val

if TYPE_CHECKING:
    import onnx
from .scopes import node_scope, scope_of_head

MAX_CONST_ELEMS = shape_fns.MAX_FOLD_ELEMS  # tensors up to this size are tracked by value (shapes, axes, masks)
MAX_DIM = 2**40  # a dimension above this is rejected as absurd
MAX_INFER_ROUNDS = 4
# inlinings of a model's If/Loop/Scan bodies at most: again while a condition left to data folds once the bodies
# before it are inlined (an If on another If's outputs: one more round per level of such nesting)
MAX_CONTROL_ROUNDS = 4


@frozen_dataclass
class Graph:
    """A loaded network: nodes in topological order with typed tensors."""

    name: str
    path: str
    opset: int
    nodes: tuple[Node, ...]
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    producer: str = ""
    input_bindings: Mapping[str, tuple[int, ...]] = field(default_factory=frozen_map)
    notes: tuple[str, ...] = ()  # what the loader changed to read the model (e.g. an opset upgrade)
    control: object = None  # graph/control_flow.ControlFlow when If/Loop/Scan bodies were inlined

    @cached_property
    def input_names(self) -> frozenset[str]:
        """The names of the graph's inputs (what tells them from initializers and constants)."""
        return frozenset(t.name for t in self.inputs)

    @cached_property
    def digraph(self):
        """networkx DiGraph: one vertex per node name (attribute ``node``), an edge per tensor."""
        import networkx as nx

        g = nx.DiGraph()
        producer: dict[str, str] = {}
        for n in self.nodes:
            g.add_node(n.name, node=n)
            for t in n.outputs:
                if t.name:
                    producer[t.name] = n.name
        for n in self.nodes:
            for t in n.inputs:
                if t is not None and t.name in producer:
                    g.add_edge(producer[t.name], n.name, tensor=t)
        return g


def dtype_name(elem_type: int) -> str:
    """numpy-style name of an ONNX element type (float32, int64, bool, ...), 'unknown' if none."""
    return ONNX_TYPE_NAMES.get(elem_type, "unknown")


_EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL



def read_model(path: str) -> onnx.ModelProto:
    """Parse an ONNX file (weights stay on disk); every failure becomes a one-line PredictorError."""
    if not os.path.exists(path):
        raise PredictorError(f"no such file: {path}")
    if os.path.isdir(path):
        raise PredictorError(f"{path} is a directory, not an ONNX file")
    if os.path.getsize(path) == 0:
        raise PredictorError(f"{path} is empty, not an ONNX model")
    try:
        data = read_model_bytes(path, MAX_CONST_ELEMS)
    except OSError as e:
        raise PredictorError(f"cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise PredictorError(f"{path} is not a valid ONNX model ({e})") from None
    model = onnx_pb().ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as e:
        if "depth" in str(e).lower() or isinstance(e, RecursionError):
            raise PredictorError(f"{path} nests subgraphs (If/Loop/Scan bodies) deeper than protobuf parses "
                                 "(about 30 levels)") from None
        raise PredictorError(f"{path} is not a valid ONNX model (corrupt or truncated protobuf)") from None
    if not model.HasField("graph") or len(model.graph.node) == 0:
        raise PredictorError(f"{path} holds no ONNX graph with nodes (not an ONNX model, or empty)")
    if not model.opset_import or not model.graph.output:
        # opset_import is serialised after the graph: a file cut at a field boundary parses but lacks it
        raise PredictorError(f"{path} is not a complete ONNX model (no opset import or no graph outputs: truncated?)")
    return model


def opset_of(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return 0


def load(path: str, batch: int | None = None, shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
    """Load ``path`` and bind its symbolic dims; see the module docstring."""
    # the parsed model is handed over in a list nothing else holds: the loader drops it before it builds the
    # nodes, so its memory (several times the file's) is not held while the graph's is allocated
    return _load_owned([read_model(path)], batch, shapes, path)


def load_model_proto(model: onnx.ModelProto, batch: int | None = None,
                     shapes: Mapping[str, tuple[int, ...]] | None = None, path: str = "<memory>") -> Graph:
    return _load_owned([model], batch, shapes, path)


def _load_owned(box: list, batch: int | None, shapes: Mapping[str, tuple[int, ...]] | None, path: str) -> Graph:
    """Load the model in ``box`` (a one-item list, emptied: the caller's list is then the loader's only way to it)."""
    # the loader allocates a few objects per tensor and keeps them all: the cyclic garbage collector
    # would only re-scan them (a third of the load time of a 6,000-node graph)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if _has_control_flow(box[0]):
            return _load_control_flow(box.pop(), batch, shapes, path)
        return _load(box, batch, shapes, path)
    finally:
        if was_enabled:
            gc.enable()


def _load(model: onnx.ModelProto | list, batch: int | None, shapes: Mapping[str, tuple[int, ...]] | None,
          path: str) -> Graph:
    """``model``: the ModelProto, or a one-item list holding it (then the proto is dropped as soon as the graph's
    nodes no longer need it)."""
    if isinstance(model, list):
        model = model.pop()
    if len(model.graph.sparse_initializer):
        _dense_stubs(model)
    if model.functions:
        model = _inline(model)
    opset = opset_of(model)
    model, notes = _upgrade_old_opset(model, opset)
    opset = opset_of(model)
    if opset and not 7 <= opset <= 30:
        raise PredictorError(f"unsupported default-domain opset {opset}")
    _check_opset_known(opset)
    init_names = {t.name for t in model.graph.initializer}
    from .validation import check_declarations

    check_declarations(model)  # duplicate initializers, inputs and outputs, conflicting shadowing inputs
    declared = _declared_shapes(model, init_names)
    bindings = _bind_inputs(model, batch, dict(shapes or {}), init_names)
    raw = _check_graph(model, init_names)
    from .validation import check_subgraphs

    check_subgraphs(raw)  # cycles inside If/Loop/Scan bodies
    static = _static_tensors(raw, init_names)
    consts = _initial_consts(model)  # (and the large initializers' values dropped)
    infos = _collect_infos(model)
    unknown = _complete_shapes(raw, infos, consts)
    recorded: set[str] = set()
    for round_ in range(MAX_INFER_ROUNDS):
        if not unknown:
            break
        # ONNX inference knows ops we have no shape function for: hand it what we know, then go on
        if round_ == 0:
            _sort_proto(model, raw)
        _record_value_info(model, {k: v for k, v in infos.items() if k not in recorded and v.shape is not None})
        recorded.update(infos)
        model = _infer(model)
        inferred = _collect_infos(model)
        gained = [k for k, v in inferred.items() if v.shape is not None and (k not in infos or infos[k].shape is None)]
        # sequence / optional values ONNX inference typed: kept, so the ops on them are named as such
        for k, v in inferred.items():
            if v.dtype in CONTAINER_DTYPES and (k not in infos or infos[k].dtype == "unknown"):
                infos[k] = v
        if not gained:
            break
        for k in gained:
            infos[k] = inferred[k]
        unknown = _complete_shapes(raw, infos, consts)
    if unknown and declared:  # sizes that are data (a Slice's starts, a Resize's scales given as inputs)
        filled = _fill_declared(raw, infos, consts, declared)
        if filled:
            notes += (f"{filled} tensor shape(s) the graph computes from data taken from the model's declared "
                      "shapes (its inputs are fixed)",)
    stop = _shape_stop(raw, infos) if unknown else None
    if stop:
        notes += (stop,)
    g = model.graph
    graph_name = g.name or os.path.basename(path)
    input_names = [i.name for i in g.input if i.name not in init_names]
    output_names = [o.name for o in g.output]
    producer = f"{model.producer_name} {model.producer_version}".strip()
    del g, model  # from here on the graph is built from Python objects alone
    nodes = _build_nodes(raw, infos, consts, static)

    def info(name: str) -> TensorInfo:
        return infos.get(name) or _unknown(infos, name, static)

    return Graph(
        name=graph_name,
        path=path,
        opset=opset,
        nodes=nodes,
        inputs=tuple(info(n) for n in input_names),
        outputs=tuple(info(n) for n in output_names),
        producer=producer,
        input_bindings=frozen_map(bindings),
        notes=notes,
    )


def _declared_shapes(model: onnx.ModelProto, init_names: set[str]) -> dict[str, TensorInfo]:
    """Fully fixed shapes the model declares for the tensors its nodes write (value_info, graph outputs), when
    every graph input is a tensor of fixed shape: the run they describe is the one predicted, so they stand
    for what shape functions cannot compute (sizes that are data). Empty otherwise (a bound symbolic or
    re-bound dimension makes them stale)."""
    g = model.graph
    for inp in g.input:
        if inp.name in init_names:
            continue
        if not inp.type.HasField("tensor_type") or not inp.type.tensor_type.HasField("shape"):
            return {}
        dims = inp.type.tensor_type.shape.dim
        if not all(d.HasField("dim_value") and d.dim_value >= (1 if k == 0 and len(dims) > 1 else 0)
                   for k, d in enumerate(dims)):
            return {}
    out: dict[str, TensorInfo] = {}
    produced = {o for n in g.node for o in n.output if o}
    for vi in (*g.value_info, *g.output):
        if vi.name in produced and vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            info = _info_from_value_info(vi)
            if info.shape is not None and info.dtype != "unknown":
                out[vi.name] = info
    return out


def _fill_declared(raw: list[RawNode], infos: dict[str, TensorInfo], consts: dict[str, Val],
                   declared: Mapping[str, TensorInfo]) -> int:
    """Give the declared shapes to the unknown outputs of the nodes whose cost formula needs them (it raises
    ShapeUnknown without), then complete the shapes downstream; nodes costed without them keep their costs.
    Returns how many tensors were filled."""
    from ..precision import policy
    from .context import ShapeUnknown
    from .cost import node_work

    pol = policy("fp32")
    filled = 0
    for _ in range(MAX_INFER_ROUNDS):
        fill: dict[str, TensorInfo] = {}
        for n in raw:
            outs = [o for o in n.output if o and o in declared and (o not in infos or infos[o].shape is None)]
            if not outs:
                continue
            probe = _probe_node(n, infos, consts)
            try:
                node_work(probe, pol)
            except ShapeUnknown:
                fill.update((o, declared[o]) for o in outs)
            except Exception:  # noqa: BLE001 - a malformed node: left as it is
                pass
        infos.update(fill)
        back = _shapes_backward(raw, infos)
        if not fill and not back:
            break
        filled += len(fill) + back
        _complete_shapes(raw, infos, consts)
    return filled


_KEEPS_DTYPE = frozenset(shape_fns.SAME_SHAPE) - {"Cast", "CastLike", "QuantizeLinear", "DequantizeLinear", "Not",
                                                  "IsNaN", "IsInf"}
_SAME_SHAPE = frozenset(shape_fns.SAME_SHAPE)


def _shapes_backward(raw: list[RawNode], infos: dict[str, TensorInfo]) -> int:
    """Shapes known after an op whose output has its input's shape (Log, Sqrt, Relu, Cast, CastLike...) given to
    that input when it is unknown (a declared output behind a chain of them); how many were given. The input keeps
    the output's type through an op that keeps it; through one that converts (Cast, CastLike, DequantizeLinear...)
    it takes the type the graph writes there (the type rules of the ops before it)."""
    produced = {o for n in raw for o in n.output if o}
    dtypes: dict[str, str] | None = None
    given = 0
    for n in reversed(raw):
        if n.op_type not in _SAME_SHAPE or not n.input or not n.output or not n.input[0] or not n.output[0]:
            continue
        src, out = n.input[0], infos.get(n.output[0])
        cur = infos.get(src)
        if out is None or out.shape is None or src not in produced or (cur is not None and cur.shape is not None):
            continue
        if n.op_type in _KEEPS_DTYPE:
            dtype = out.dtype
        else:
            if dtypes is None:
                dtypes = _forward_dtypes(raw, infos)
            dtype = dtypes.get(src, "unknown")
        infos[src] = TensorInfo(src, dtype, out.shape)
        given += 1
    return given


def _forward_dtypes(raw: list[RawNode], infos: Mapping[str, TensorInfo]) -> dict[str, str]:
    """The element type of every tensor the graph writes, by the ops' type rules in topological order (shapes
    need not be known: a type follows from the input types and attributes alone)."""
    dtypes = {k: v.dtype for k, v in infos.items() if v.dtype != "unknown"}
    for n in raw:
        ins = [TensorInfo(i, dtypes.get(i, "unknown"), None) if i else None for i in n.input]
        for k, o in enumerate(n.output):
            if o and o not in dtypes:
                dt = _output_dtype(n, ins, k)
                if dt != "unknown":
                    dtypes[o] = dt
    return dtypes


def _probe_node(n: RawNode, infos: Mapping[str, TensorInfo], consts: Mapping[str, Val]) -> Node:
    """``n`` as a Node with the shapes known so far (for a cost formula's try; not part of the graph)."""
    def info(name: str) -> TensorInfo:
        return infos.get(name) or TensorInfo(name, "unknown", None)

    known = {i: tuple(consts[i].data) for i in n.input
             if i in consts and (consts[i].dtype in shape_fns.INT_TYPES or consts[i].dtype == "bool")}
    return Node(name=n.name or n.op_type, op_type=n.op_type, domain=n.domain,
                inputs=tuple(info(i) if i else None for i in n.input), outputs=tuple(info(o) for o in n.output),
                attrs=frozen_map(_attrs(n)) if n.attrs else _EMPTY, const_inputs=frozen_map(known))


_CONTROL_OPS = frozenset({"If", "Loop", "Scan"})


def _has_control_flow(model: onnx.ModelProto) -> bool:
    return not _CONTROL_OPS.isdisjoint(map(_op_type, model.graph.node))


_op_type = attrgetter("op_type")


def _load_control_flow(model: onnx.ModelProto, batch, shapes, path: str) -> Graph:
    """Load once to fold conditions, trip counts and shapes, then again with the bodies inlined
    (graph/control_flow.py)."""
    from dataclasses import replace

    from . import control_flow

    control_flow.name_control_nodes(model)
    pristine = type(model)()
    pristine.CopyFrom(model)
    first = _load(model, batch, shapes, path)
    pristine, _ = _upgrade_old_opset(pristine, opset_of(pristine))
    known: dict[str, tuple] = {}
    tensor_shapes: dict[str, tuple] = {}
    _note_values(first, known, tensor_shapes)
    try:
        for _ in range(MAX_CONTROL_ROUNDS):
            inlined, cf = control_flow.inline(pristine, known, tensor_shapes, first.opset)
            g = _load(inlined, batch, shapes, path)
            if not cf.conditions:
                break
            _note_values(g, known, tensor_shapes)
            if not any(c in known for c in cf.conditions.values()):
                break   # no data condition folded once the bodies were inlined: this inlining stands
        probes = {name + control_flow.CONDITION_PROBE for name in cf.conditions}
        if probes:      # their work done: the probes leave the graph
            g = replace(g, nodes=tuple(n for n in g.nodes if n.outputs[0].name not in probes))
    except PredictorError:
        raise
    except Exception as e:  # a body we cannot inline: the control nodes stay, reported as not costed
        cf = control_flow.ControlFlow(frozen_map(), frozen_map(),
                                      notes=(f"control-flow bodies not inlined: {_one_line(e)}",))
        return replace(first, control=cf)
    return replace(g, control=cf, notes=tuple(dict.fromkeys(first.notes + g.notes)))


def _note_values(g: Graph, known: dict[str, tuple], tensor_shapes: dict[str, tuple]) -> None:
    """Add the small values and the shapes a load folded to ``known`` and ``tensor_shapes``."""
    for n in g.nodes:
        known.update(n.const_inputs)
        for t in (*n.inputs, *n.outputs):
            if t is not None and t.shape is not None:
                tensor_shapes[t.name] = t.shape


def _upgrade_old_opset(model: onnx.ModelProto, opset: int) -> tuple[onnx.ModelProto, tuple[str, ...]]:
    """An opset older than the cost model reads is converted (graph/upgrade.py); else the model as it is."""
    from . import upgrade

    if not upgrade.needs_upgrade(opset):
        return model, ()
    model, note = upgrade.upgrade(model, opset)
    return model, (note,)


# --------------------------------------------------------------------------------------------
def _inline(model: onnx.ModelProto) -> onnx.ModelProto:
    try:
        from onnx import inliner
    except ImportError as e:  # onnx < 1.16
        raise PredictorError("this model nests ONNX functions; inlining them needs onnx >= 1.16") from e
    _check_inlined_size(model)
    try:
        return inliner.inline_local_functions(model)
    except Exception as e:
        raise PredictorError(f"cannot inline the model's local functions: {_one_line(e)}") from None


MAX_INLINED_NODES = 1_000_000  # a graph whose local functions expand to more nodes is refused


def _check_inlined_size(model: onnx.ModelProto) -> None:
    """Refuse to inline when the local functions expand to more than MAX_INLINED_NODES nodes (functions
    calling each other twice, 40 levels deep, make 2**40 from a 4 KB file) or call themselves."""
    funcs = {(f.domain, f.name, getattr(f, "overload", "")): f for f in model.functions}
    size: dict = {}
    visiting: set = set()

    def nodes_size(nodes) -> int:
        total = 0
        for n in nodes:
            key = (n.domain, n.op_type, getattr(n, "overload", ""))
            total += fn_size(key) if key in funcs else 1
            for a in n.attribute:  # If/Loop/Scan bodies may call functions too
                if a.HasField("g"):
                    total += nodes_size(a.g.node)
                for sub in a.graphs:
                    total += nodes_size(sub.node)
            if total > MAX_INLINED_NODES:
                break
        return total

    def fn_size(key) -> int:
        if key in size:
            return size[key]
        if key in visiting:
            raise PredictorError(f"local function '{key[1]}' calls itself (directly or through others): "
                                 "it cannot be inlined")
        visiting.add(key)
        size[key] = nodes_size(funcs[key].node)
        visiting.discard(key)
        return size[key]

    total = nodes_size(model.graph.node)
    if total > MAX_INLINED_NODES:
        raise PredictorError(f"the model's local functions expand to more than {MAX_INLINED_NODES:,} nodes when "
                             "inlined (functions calling each other many times over): refused")


_OPSET_KNOWN_WITHOUT_ONNX = 23  # every onnx release this tool supports knows opsets up to here


def _check_opset_known(opset: int) -> None:
    """An opset newer than the installed onnx knows is refused, as ``onnx.checker`` does (the onnx package is
    imported only for an opset above 23)."""
    if opset <= _OPSET_KNOWN_WITHOUT_ONNX:
        return
    import onnx
    from onnx.defs import onnx_opset_version

    if opset > onnx_opset_version():
        raise PredictorError(f"default-domain opset {opset} is newer than the installed onnx {onnx.__version__} "
                             f"knows (up to {onnx_opset_version()}), as onnx.checker reports: unknown opset")


def _dense_stubs(model: onnx.ModelProto) -> None:
    """Sparse initializers as the dense tensors a runtime makes of them (ONNX Runtime densifies them on
    load), without values: name, dims and the values' type."""
    g = model.graph
    for sp in g.sparse_initializer:
        t = g.initializer.add()
        t.name, t.data_type, t.data_location = sp.values.name, sp.values.data_type, _EXTERNAL
        t.dims.extend(sp.dims)
    g.ClearField("sparse_initializer")


def _bind_inputs(model, batch, shapes, init_names) -> dict[str, tuple[int, ...]]:
    graph_inputs = [i for i in model.graph.input if i.name not in init_names]
    names = {i.name for i in graph_inputs}
    for name in shapes:
        if name not in names:
            raise PredictorError(
                f"--shape names unknown input '{name}' (inputs: {', '.join(sorted(names)) or 'none'})")
    bound: dict[str, tuple[int, ...]] = {}
    batch_bound = False  # whether --batch bound any symbolic leading dimension
    for inp in graph_inputs:
        tt = inp.type.tensor_type
        container = container_kind(inp.type)
        if container:  # a sequence or optional value: no tensor shape to bind; the ops reading it are named
            if inp.name in shapes:
                raise PredictorError(f"--shape {inp.name}: input '{inp.name}' is {container} value, not a tensor "
                                     "(--shape binds tensor inputs only)")
            continue
        if not inp.type.HasField("tensor_type") or not tt.HasField("shape"):
            if inp.name in shapes:
                dims = shapes[inp.name]
            else:
                raise PredictorError(
                    f"input '{inp.name}' has no shape; bind it with --shape {inp.name}=D1,D2,...")
        elif inp.name in shapes:
            dims = shapes[inp.name]
            if len(dims) != len(tt.shape.dim):
                raise PredictorError(
                    f"--shape {inp.name} gives {len(dims)} dims but the input has {len(tt.shape.dim)}")
            for d in dims:
                if d <= 0 or d > MAX_DIM:
                    raise PredictorError(f"input '{inp.name}': dimension {d} out of range (1..2**40)")
            for k, (given, d) in enumerate(zip(dims, tt.shape.dim)):
                if d.HasField("dim_value") and d.dim_value > 0 and given != d.dim_value:
                    raise PredictorError(
                        f"--shape {inp.name}={','.join(map(str, dims))} contradicts the model: dimension {k} of input "
                        f"'{inp.name}' is fixed at {d.dim_value} (exported with static shapes: re-export with this "
                        "axis dynamic)")
        else:
            dims = []
            rank = len(tt.shape.dim)
            for k, d in enumerate(tt.shape.dim):
                if d.HasField("dim_value") and (d.dim_value > 0 or (d.dim_value == 0 and (k > 0 or rank == 1))):
                    dims.append(int(d.dim_value))  # a fixed 0 past the leading axis or of a vector: empty (costs 0)
                elif d.HasField("dim_value") and not (k == 0 and d.dim_value in (0, -1)):
                    # 0 or -1 on the leading axis is how some exporters mark a dynamic batch
                    raise PredictorError(
                        f"input '{inp.name}': dimension {d.dim_value} at axis {k} out of range (1..2**40); "
                        f"bind it with --shape {inp.name}=D1,D2,...")
                elif k == 0:
                    dims.append(1 if batch is None else batch)
                    batch_bound = True
                else:
                    sym = d.dim_param or "?"
                    raise PredictorError(
                        f"input '{inp.name}' has unbound symbolic dimension '{sym}' at axis {k}; "
                        f"bind it with --shape {inp.name}=" + ",".join(
                            str(x.dim_value) if x.HasField("dim_value") else ("N" if j == 0 else sym)
                            for j, x in enumerate(tt.shape.dim)))
        for k, d in enumerate(dims):
            if d < 0 or d > MAX_DIM or (d == 0 and ((k == 0 and len(dims) > 1) or inp.name in shapes)):
                raise PredictorError(f"input '{inp.name}': dimension {d} out of range (1..2**40)")
        tt.elem_type = tt.elem_type or ONNX_TYPES["float32"]
        tt.shape.ClearField("dim")
        for d in dims:
            tt.shape.dim.add().dim_value = int(d)
        bound[inp.name] = tuple(int(d) for d in dims)
    if batch is not None and not batch_bound:
        fixed = [(n, d[0]) for n, d in bound.items() if n not in shapes and d and d[0] != batch]
        if fixed:
            name, d0 = fixed[0]
            raise PredictorError(f"--batch {batch} contradicts the model: no input has a symbolic leading dimension "
                                 f"and dimension 0 of input '{name}' is fixed at {d0} (exported with static shapes: "
                                 f"re-export with a dynamic batch axis, or give --shape)")
    # value_info and outputs may carry stale symbolic dims from the exporter: let inference redo them
    del model.graph.value_info[:]
    for o in model.graph.output:
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    return bound


def _check_graph(model: onnx.ModelProto, init_names: set[str]) -> list[RawNode]:
    """The graph's nodes in topological order (the proto is reordered to match when it was not).

    Rejects graphs whose nodes read tensors nothing produces or that contain a cycle, and names that are
    not UTF-8 (protobuf then hands out bytes instead of str).
    """
    g = model.graph
    raw = [RawNode(n, k) for k, n in enumerate(g.node)]
    known = {i.name for i in g.input} | init_names | {""}
    try:  # str.join refuses any item that is not a str (bytes: a name that is not UTF-8)
        "".join([s for n in raw for s in (n.op_type, n.domain, n.name, *n.input, *n.output, *n.attrs)])
        utf8 = True
    except TypeError:
        utf8 = False
    if not utf8 or not all(type(s) is str for s in (g.name, *known, *(o.name for o in g.output))):
        raise PredictorError("a graph, node or tensor name is not valid UTF-8 (corrupt file)")
    produced_by = {o: k for k, n in enumerate(raw) for o in n.output if o}
    read = {i for n in raw for i in n.input}
    if not read.difference(produced_by).issubset(known):
        for n in raw:  # the first node in the file's order that reads a tensor nothing produces
            for i in n.input:
                if i not in known and i not in produced_by:
                    raise PredictorError(
                        f"node '{n.name or n.op_type}' reads tensor '{i}' that no node, input or initializer produces")
    order = _topo_order(raw, produced_by)
    if order is None:
        raise PredictorError("the graph contains a cycle")
    if any(k != j for j, k in enumerate(order)):
        raw = [raw[k] for k in order]
    return raw


def _sort_proto(model: onnx.ModelProto, raw: list[RawNode]) -> None:
    """Put the proto's nodes in ``raw``'s (topological) order, as ONNX inference needs."""
    g = model.graph
    if all(b.index == k for k, b in enumerate(raw)):
        return
    nodes = [g.node[b.index] for b in raw]
    del g.node[:]
    g.node.extend(nodes)  # copies of the (now detached) originals
    for k, b in enumerate(raw):
        b.index = k


def _topo_order(raw: list[RawNode], produced_by: dict[str, int]) -> list[int] | None:
    indeg = [0] * len(raw)
    users: list[list[int]] = [[] for _ in raw]
    get = produced_by.get
    for k, n in enumerate(raw):
        ins = n.input
        if len(ins) == 1:  # (most nodes: no set to build)
            d = get(ins[0], -1)
            if d != -1:
                indeg[k] = 1
                users[d].append(k)
            continue
        deps = set(map(get, ins, repeat(-1)))  # the producers (-1: an input or initializer)
        deps.discard(-1)
        indeg[k] = len(deps)
        for d in deps:
            users[d].append(k)
    ready = [k for k in range(len(raw)) if indeg[k] == 0]
    ready.reverse()
    order: list[int] = []
    pop, push, emit = ready.pop, ready.append, order.append
    while ready:
        k = pop()
        emit(k)
        us = users[k]
        if len(us) == 1:  # (most tensors have one reader)
            u = us[0]
            indeg[u] -= 1
            if indeg[u] == 0:
                push(u)
            continue
        for u in reversed(us):
            indeg[u] -= 1
            if indeg[u] == 0:
                push(u)
    return order if len(order) == len(raw) else None


# ops whose outputs are not fixed by their inputs, and control flow (bodies may read activations)
_NOT_FOLDABLE = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                           "Bernoulli", "If", "Loop", "Scan"})


def _static_tensors(raw: list[RawNode], init_names: set[str]) -> set[str]:
    """Tensors whose values are fixed before inference runs: initializers, Constant outputs, and the
    outputs of nodes computed only from those (weight reordering, transposed or reshaped parameters)."""
    static = set(init_names)
    for n in raw:
        op = n.op_type
        if op == "Constant":
            static.update(o for o in n.output if o)
        elif op not in _NOT_FOLDABLE:
            ins = n.input
            if static.issuperset(ins):
                if any(ins):  # at least one input given
                    static.update(o for o in n.output if o)
            elif "" in ins:  # omitted optional inputs do not count
                present = [i for i in ins if i]
                if present and static.issuperset(present):
                    static.update(o for o in n.output if o)
    return static


def _infer(model: onnx.ModelProto) -> onnx.ModelProto:
    import onnx.shape_inference  # the onnx package: only when our own pass left outputs unknown

    try:
        return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception:
        # inference gives up on some malformed graphs; our own shape functions still run
        return model


def _collect_infos(model: onnx.ModelProto) -> dict[str, TensorInfo]:
    infos: dict[str, TensorInfo] = {}
    g = model.graph
    for vis in (g.output, g.value_info, g.input):  # inputs last: an input also listed as an output keeps its shape
        for vi in vis:
            if vi.name not in infos or infos[vi.name].shape is None:
                infos[vi.name] = _info_from_value_info(vi)
    dtype = ONNX_TYPE_NAMES.get
    new_info = TensorInfo._fast_new
    for t in g.initializer:  # fixed before inference runs: is_initializer (see _static_tensors)
        name = t.name  # (each read of a field is a protobuf call; dims[:] is a list made at once)
        infos[name] = new_info(name, dtype(t.data_type, "unknown"), tuple(t.dims[:]), True)
    return infos


CONTAINER_DTYPES = frozenset({"sequence", "optional"})  # TensorInfo.dtype of a sequence or optional value


def container_kind(type_proto) -> str:
    """'a sequence' / 'an optional' for a sequence or optional type (no tensor shape), else ''."""
    which = type_proto.WhichOneof("value")
    return {"sequence_type": "a sequence", "optional_type": "an optional"}.get(which, "")


def _info_from_value_info(vi) -> TensorInfo:
    name = vi.name
    if not vi.type.HasField("tensor_type"):
        which = vi.type.WhichOneof("value")
        return TensorInfo(name, which[:-len("_type")] if which in ("sequence_type", "optional_type") else "unknown",
                          None)
    tt = vi.type.tensor_type
    elem = tt.elem_type
    dtype = dtype_name(elem) if elem else "unknown"
    if not tt.HasField("shape"):
        return TensorInfo(name, dtype, None)
    dims = []
    for d in tt.shape.dim:
        v = d.dim_value
        if v > 0 or (v == 0 and d.HasField("dim_value")):
            dims.append(v)
        else:
            return TensorInfo(name, dtype, None)
    return TensorInfo(name, dtype, tuple(dims))


def _initial_consts(model: onnx.ModelProto) -> dict[str, Val]:
    """Small tensors stored inside the graph (never external data). The values of the large initializers stored
    inside the file are forgotten: only their dims and type matter, and shape inference would otherwise copy them on
    every round."""
    consts: dict[str, Val] = {}
    for t in model.graph.initializer:
        if _is_external(t):
            continue
        if shape_fns.numel_of(t.dims) > MAX_CONST_ELEMS:
            for f in _DATA_FIELDS:
                t.ClearField(f)
            continue
        v = shape_fns.tensor_value(t)
        if v is not None:
            consts[t.name] = v
    return consts


_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def _is_external(t) -> bool:
    return t.data_location == _EXTERNAL or any(e.key == "location" for e in t.external_data)


_NO_INPUT_FOLDS = frozenset({"Constant", "Shape", "Size"})


def _complete_shapes(raw: list[RawNode], infos: dict[str, TensorInfo], consts: dict[str, Val]) -> int:
    """One pass in topological order: fold small tensors and fill unknown output shapes and types (in ``infos``).

    Returns how many node outputs are still unknown.
    """
    unknown = 0
    infer, folders = shape_fns.infer, shape_fns.FOLDERS
    new_info = TensorInfo._fast_new  # (TensorInfo(...) without the type call: one per tensor)
    get_info, get_const = infos.get, consts.get
    # (op type, domain, attributes, inputs' (dtype, shape) and values, outputs) -> {k: (shape, dtype)} of the
    # outputs inferred from those alone: a network's repeated layers are inferred once
    memo: dict[tuple, dict] = {}
    # an omitted input ('') is None: a plain lookup gives that unless a tensor is named '' (never added below)
    plain = "" not in infos and "" not in consts
    for n in raw:
        if plain:
            ins = list(map(get_info, n.input))
            vals = list(map(get_const, n.input))
        else:
            ins = [get_info(i) if i else None for i in n.input]
            vals = [get_const(i) if i else None for i in n.input]
        folder = folders.get(n.op_type)
        if folder is not None and (n.op_type in _NO_INPUT_FOLDS or vals.count(None) != len(vals)):
            try:
                out_vals = folder(n, vals, ins)
            except Exception:
                out_vals = None
            if out_vals is not None:
                for name, v in zip(n.output, out_vals):
                    if name and v is not None and v.size <= MAX_CONST_ELEMS:
                        consts[name] = v
        found = None
        for k, name in enumerate(n.output):
            if not name:
                continue
            cur = get_info(name)
            if cur is not None and cur.shape is not None and cur.dtype != "unknown":
                continue
            if cur is None and name not in consts:  # inferred from the node's inputs alone: memoised
                if found is None:
                    found = _inferred(memo, n, ins, vals)
                shape, dtype = found.get(k) or found.setdefault(k, _infer_output(n, ins, vals, k))
            else:
                shape = cur.shape if cur is not None else None
                dtype = cur.dtype if cur is not None else "unknown"
                if shape is None:
                    if name in consts:
                        shape = tuple(int(d) for d in consts[name].shape)
                        if dtype == "unknown":
                            dtype = consts[name].dtype
                    else:
                        try:
                            shape = infer(n, ins, vals, k)
                        except Exception:
                            shape = None
                shape = _checked_shape(shape)
                if shape is not None and dtype == "unknown":
                    dtype = _output_dtype(n, ins, k)
            if shape is not None:
                infos[name] = new_info(name, dtype, shape)
            else:
                unknown += 1
    return unknown


def _shape_stop(raw: list[RawNode], infos: Mapping[str, TensorInfo]) -> str | None:
    """Where shape inference stopped, as a note: the first node (graph order) whose first output has no shape
    although every input has one, named with those shapes (the unknown shapes after it follow from it); None
    when there is no such node (every shape known, or the unknown ones start at a sequence value or at an If,
    Loop or Scan: their bodies are inlined or reported by graph/control_flow.py)."""
    for n in raw:
        if n.op_type in _CONTROL_OPS and n.domain in ("", "ai.onnx"):
            continue
        out = infos.get(n.output[0]) if n.output and n.output[0] else None
        if out is not None and (out.shape is not None or out.dtype in CONTAINER_DTYPES):
            continue
        if not n.output or not n.output[0]:
            continue
        ins = [infos.get(i) for i in n.input if i]
        if not all(t is not None and t.shape is not None for t in ins):
            continue
        shapes = ", ".join("x".join(map(str, t.shape)) if t.shape else "scalar" for t in ins) or "none"
        return (f"shapes stay unknown from {n.name or n.op_type} ({n.op_type}) on: no output shape follows from "
                f"its input shapes ({shapes}) (shapes that do not fit together, as in an invalid export; a size "
                "computed from data; or an op whose shape rules are not known here)")
    return None


def _inferred(memo: dict, n: RawNode, ins: list, vals: list) -> dict:
    """The memo entry {output index: (shape, dtype)} of nodes like ``n`` (a fresh dict when ``n`` cannot be keyed).
    The key holds all that shape and type inference read: op type, domain, attributes, which inputs are
    given, their dtypes and shapes and known values, the number of outputs."""
    if n.attr_key is None:
        return {}
    if all(ins):  # (every input given and typed: no Python frame per input)
        in_key = tuple(map(_dtype_shape, ins))
    else:
        in_key = tuple([(i.dtype, i.shape) if i is not None else (x != "") for i, x in zip(ins, n.input)])
    if vals.count(None) == len(vals):  # (no known input value: most nodes) as below, all None
        val_key = tuple(vals)
    else:
        val_key = tuple([(v.dtype, v.shape, tuple(v.data)) if v is not None else None for v in vals])
    key = (n.op_type, n.domain, n.attr_key, len(n.output), in_key, val_key)
    try:
        entry = memo.get(key)
    except TypeError:  # an unhashable value (a string tensor's bytes are hashable; anything else is not)
        return {}
    if entry is None:
        entry = memo[key] = {}
    return entry


_dtype_shape = attrgetter("dtype", "shape")  # (dtype, shape) of a TensorInfo


def _infer_output(n: RawNode, ins: list, vals: list, k: int) -> tuple:
    """(shape, dtype) of output ``k`` of ``n`` from its inputs alone (shape None when not known)."""
    try:
        shape = shape_fns.infer(n, ins, vals, k)
    except Exception:
        shape = None
    shape = _checked_shape(shape)
    return shape, (_output_dtype(n, ins, k) if shape is not None else "unknown")


def _checked_shape(shape):
    if shape is not None and (type(shape) is not tuple or
                              not all(type(d) is int and 0 <= d <= MAX_DIM for d in shape)):
        return _valid_shape(shape)
    return shape


def _output_dtype(n: RawNode, ins: list, k: int) -> str:
    try:
        return shape_fns.output_dtype(n, ins, k)
    except Exception:  # an attribute of the wrong type (a malformed node): type unknown
        return "unknown"




def _valid_shape(shape) -> tuple[int, ...] | None:
    """``shape`` as a tuple of ints in 0..MAX_DIM; None when a shape function (or an attribute of the wrong
    type in a malformed node) gave anything else."""
    if shape is None:
        return None
    try:
        dims = tuple(shape)
    except TypeError:
        return None
    if all(isinstance(d, (int, float)) and 0 <= d <= MAX_DIM for d in dims):
        return tuple(int(d) for d in dims)
    return None


def _record_value_info(model, added: dict[str, TensorInfo]) -> None:
    from onnx import helper

    g = model.graph
    skip = {o.name for o in g.output} | {i.name for i in g.input} | {t.name for t in g.initializer}
    for name, info in added.items():
        elem = ONNX_TYPES.get(info.dtype)
        if name in skip or info.shape is None or elem is None or info.dtype == "string":
            continue
        model.graph.value_info.append(helper.make_tensor_value_info(name, elem, list(info.shape)))


def _attrs(n: RawNode) -> dict:
    graph_type = onnx_pb().GraphProto
    out = {}
    for name, v in n.attrs.items():
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        elif isinstance(v, list):
            if v and not isinstance(v[0], (int, float, bytes)):
                v = "<subgraph>" if isinstance(v[0], graph_type) else "<tensor>"
            else:
                v = tuple(x.decode(errors="replace") if isinstance(x, bytes) else x for x in v)
        elif isinstance(v, graph_type):
            v = "<subgraph>"
        elif not isinstance(v, (int, float)):
            v = "<tensor>"
        out[name] = v
    return out


def _build_nodes(raw: list[RawNode], infos: dict[str, TensorInfo], consts: dict[str, Val],
                 static: set[str]) -> tuple[Node, ...]:
    for name in static:
        t = infos.get(name)
        if t is not None and not t.is_initializer:
            infos[name] = TensorInfo(t.name, t.dtype, t.shape, True)
    known_values: dict[str, tuple] = {}
    int_types = shape_fns.INT_TYPES
    for name, v in consts.items():
        if v.dtype in int_types or v.dtype == "bool":
            known_values[name] = tuple(v.data)
    known_names = known_values.keys()
    get = infos.get
    no_fast = "" in infos  # (an empty name is an omitted input: never looked up)
    nodes = []
    seen: set[str] = set()
    shared_attrs: dict[tuple, object] = {}  # nodes with equal attributes share one read-only map
    scopes: dict[str, str] = {}  # node name without its last component -> scope_from_name
    paths: dict[str, tuple] = {}  # scopes.scope_of_head's memo
    new_node = Node._fast_new  # (Node(...) without the type call)
    for k, n in enumerate(raw):
        name = n.name or f"{n.op_type}_{k}"
        if name in seen:
            name = f"{name}#{k}"
        seen.add(name)
        ins = tuple(map(get, n.input))
        if not all(ins) or no_fast:  # an omitted input or a tensor not typed yet
            ins = tuple([(get(i) or _unknown(infos, i, static)) if i else None for i in n.input])
        outs = tuple(map(get, n.output))
        if not all(outs) or no_fast:
            outs = tuple([get(o) or _unknown(infos, o, static) for o in n.output])
        if known_values and not known_names.isdisjoint(n.input):
            known = MappingProxyType({i: known_values[i] for i in n.input if i in known_values})  # frozen_map
        else:
            known = _EMPTY
        meta = n.meta
        if meta and not all(type(x) is str for kv in meta.items() for x in kv):
            raise PredictorError(f"node '{name}': metadata is not valid UTF-8 (corrupt file)")
        if not n.attrs:
            attrs = _EMPTY
        elif n.attr_key is None:  # a tensor or graph attribute (a Constant's value): shared by its text form
            converted = _attrs(n)
            ck = _exact_key(converted)
            attrs = shared_attrs.get(ck) if ck is not None else None
            if attrs is None:
                attrs = frozen_map(converted)
                if ck is not None:
                    shared_attrs[ck] = attrs
        else:
            attrs = shared_attrs.get(n.attr_key)
            if attrs is None:
                attrs = shared_attrs[n.attr_key] = frozen_map(_attrs(n))
        if meta is None:
            head = n.name[:n.name.rfind("/") + 1]
            scope = scopes.get(head)
            if scope is None:
                scope = scopes[head] = scope_of_head(head, paths)  # = node_scope(n.name, None)
        else:
            scope = node_scope(n.name, meta)
        nodes.append(new_node(name, n.op_type, n.domain, ins, outs, attrs, known, scope))
    return tuple(nodes)


_EMPTY = frozen_map()  # shared by the nodes with no attributes / no known input values (read-only)


def _exact_key(attrs: dict) -> tuple | None:
    """A hashable key equal only for attribute maps equal in every value and its type (floats by their hex form:
    -0.0 is not 0.0, NaN is NaN), tagged apart from the raw attribute keys (RawNode.attr_key); None for a value
    of another type."""
    out: list = ["converted"]
    for name, v in attrs.items():
        t = type(v)
        if t is float:
            out.append((name, t, v.hex()))
        elif t is int or t is str:
            out.append((name, t, v))
        elif t is tuple:
            items = []
            for x in v:
                tx = type(x)
                if tx is float:
                    items.append((tx, x.hex()))
                elif tx is int or tx is str:
                    items.append((tx, x))
                else:
                    return None
            out.append((name, t, tuple(items)))
        else:
            return None
    return tuple(out)


def _unknown(infos: dict[str, TensorInfo], name: str, static: set[str]) -> TensorInfo:
    t = infos[name] = TensorInfo(name, "unknown", None, name in static)
    return t


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]
