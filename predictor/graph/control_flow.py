"""Cost the bodies of If, Loop and Scan: the control node is replaced by its bodies' nodes, repeated.

The body's outputs are wired to the control node's outputs: an If's and the loop-carried / state outputs
by free Identity nodes; the stacked scan outputs of a Loop or Scan (``[trips, *per-iteration shape]``) by an
Expand of the last iteration's output (one copy kernel writing the stacked tensor, as ONNX Runtime's
concatenation at the end of a loop; its shape is folded from ``Shape`` of that output). How each body is
costed:

* **If**: a condition whose value the loader folds (a constant, or derived from shapes: ``Equal(Shape(x)[0],
  1)``) takes its branch. Otherwise the condition is data: with ``branch="max"`` (the default) both branches
  are inlined, each branch's time is reported in a note and the larger is kept; ``branch="then"`` or
  ``"else"`` inlines that branch only.
* **Loop**: the body runs ``M`` times when the trip count ``M`` is a constant or folds (a loop whose
  condition is data is costed at that bound, ``M`` being its upper limit); where ``M`` is data,
  ``loop_trips={"NODE": N}`` gives it, else one iteration is costed and the Loop is reported as not
  fully costed (``Loop (trip count is data)``). ``iteration_num`` is bound to a constant 0, loop-carried
  inputs to the Loop's initial values (shape-invariant carried state assumed).
* **Scan**: the body runs once per element of the scan axis of the first scan input; each scan input is fed
  to the body as one slice (a Gather of index 0 along its scan axis, so the body sees the slice's shape; that
  gather is repeated with the body: the scan input is read once in all). Opset-8 Scan (batch axis) is not
  inlined and is reported.
* Nested bodies inline recursively; repeats multiply. Names: ``<control node>/<then|else|body>/<node>``.
* A data-dependent If's outputs are wired to its then branch (the branches' shapes are assumed equal).
  Scan outputs stacked on an axis other than 0 are stacked on axis 0 (same bytes; a note says so).

NB: a body is costed as ordinary nodes of the graph (PyTorch-eager kernels for its ops); ONNX Runtime's
per-iteration overhead of a Loop/Scan (a few microseconds) is not modelled. The choice and the counts are
reported as notes on the prediction.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterator, Mapping

from ..types import FlopCount, OpPrediction, frozen_map

if TYPE_CHECKING:
    import onnx

CONTROL_OPS = frozenset({"If", "Loop", "Scan"})
BRANCHES = ("then", "else", "max")


@dataclass(frozen=True)
class Options:
    """How to cost what the graph leaves to data: the branch of an If, the trip count of a Loop."""

    branch: str = "max"
    loop_trips: Mapping[str, int] = field(default_factory=frozen_map)


_OPTIONS: ContextVar[Options] = ContextVar("predictor_control_flow_options", default=Options())


@contextmanager
def options(branch: str = "max", loop_trips: Mapping[str, int] | None = None) -> Iterator[Options]:
    """Within the block, models loaded take ``branch`` for data-dependent Ifs and ``loop_trips`` for Loops."""
    if branch not in BRANCHES:
        raise ValueError(f"branch must be one of {BRANCHES}, not {branch!r}")
    token = _OPTIONS.set(Options(branch, frozen_map(dict(loop_trips or {}))))
    try:
        yield _OPTIONS.get()
    finally:
        _OPTIONS.reset(token)


@dataclass(frozen=True)
class ControlFlow:
    """What inlining did, for the prediction stage (:func:`resolve`)."""

    repeats: Mapping[str, int]                      # inlined node -> runs per graph run (when > 1)
    branch_of: Mapping[str, tuple]                  # inlined node -> ((If node, "then"|"else"), ...) outermost first
    undecided: tuple[str, ...] = ()                 # Ifs whose both branches were inlined (branch "max")
    not_costed: Mapping[str, int] = field(default_factory=frozen_map)   # reported like unsupported ops
    notes: tuple[str, ...] = ()
    # loop-carried / scan state of a body run more than once: initial tensor -> the body's next-state output
    # (the body reads the initial value in every iteration; a training step's backward chains them, train/loops.py)
    carried: Mapping[str, str] = field(default_factory=frozen_map)
    # If whose condition was data when inlined -> its condition tensor (read by a free probe node, CONDITION_PROBE):
    # the loader inlines again where loading the inlined graph folded it (a condition on another If's outputs)
    conditions: Mapping[str, str] = field(default_factory=frozen_map)


# the free Identity that keeps a data condition's tensor read in the inlined graph, so that its loading folds it
CONDITION_PROBE = "/condition"


def has_control_flow(model: onnx.ModelProto) -> bool:
    return any(n.op_type in CONTROL_OPS and n.domain in ("", "ai.onnx") for n in model.graph.node)


def name_control_nodes(model: onnx.ModelProto) -> None:
    """Give every unnamed top-level control node a stable name (``If_3``: its index in the graph)."""
    names = {n.name for n in model.graph.node if n.name}
    for k, n in enumerate(model.graph.node):
        if n.op_type in CONTROL_OPS and not n.name:
            name = f"{n.op_type}_{k}"
            while name in names:
                name += "_"
            n.name = name
            names.add(name)


# ----------------------------------------------------------------------------- inlining
class _Inliner:
    def __init__(self, opts: Options, known: Mapping[str, tuple], opset: int):
        self.opts, self.known, self.opset = opts, known, opset
        self.nodes: list = []
        self.inits: list = []
        self.repeats: dict[str, int] = {}
        self.branch_of: dict[str, tuple] = {}
        self.undecided: list[str] = []
        self.conditions: dict[str, str] = {}
        self.not_costed: dict[str, int] = {}
        self.notes: list[str] = []
        self.loops: set[str] = set()
        self.carried: dict[str, str] = {}
        self.const_scalars: dict[str, object] = {}   # tensor name -> scalar value (Constant / small initializer)

    # ---- values known at proto level (nested bodies) or from the first load (top level)
    def scalar(self, name: str):
        if not name:
            return None
        if name in self.known and len(self.known[name]) == 1:
            return self.known[name][0]
        return self.const_scalars.get(name)

    def note_constants(self, nodes, initializers, scope: Mapping[str, str]) -> None:
        from onnx import numpy_helper

        for t in initializers:
            if len(t.dims) == 0 or (len(t.dims) == 1 and t.dims[0] == 1):
                try:
                    self.const_scalars[scope.get(t.name, t.name)] = numpy_helper.to_array(t).reshape(-1)[0].item()
                except Exception:  # noqa: BLE001 - external or odd data: not a known value
                    pass
        for n in nodes:
            if n.op_type == "Constant" and n.output:
                for a in n.attribute:
                    if a.name == "value" and len(a.t.dims) <= 1:
                        try:
                            arr = numpy_helper.to_array(a.t).reshape(-1)
                            if arr.size == 1:
                                self.const_scalars[scope.get(n.output[0], n.output[0])] = arr[0].item()
                        except Exception:  # noqa: BLE001
                            pass
                    elif a.name in ("value_int", "value_float"):
                        self.const_scalars[scope.get(n.output[0], n.output[0])] = a.i if a.name == "value_int" else a.f

    # ---- emit
    def _emit(self, node, repeat: int, tags: tuple) -> None:
        self.nodes.append(node)
        if repeat > 1:
            self.repeats[node.name] = repeat
        if tags:
            self.branch_of[node.name] = tags

    def _const(self, name: str, value, repeat: int, tags: tuple) -> None:
        from onnx import TensorProto, helper

        dtype = TensorProto.BOOL if isinstance(value, bool) else TensorProto.INT64
        t = helper.make_tensor(name + "_value", dtype, [], [value])
        self._emit(helper.make_node("Constant", [], [name], name=name, value=t), repeat, tags)

    def body(self, graph, prefix: str, bind: Mapping[str, str], scope: Mapping[str, str], repeat: int,
             tags: tuple) -> dict[str, str]:
        """Inline ``graph``'s nodes: its formal inputs renamed by ``bind``, its own tensors prefixed, names
        of enclosing scopes by ``scope``; returns the body's renaming."""
        from onnx import NodeProto

        inner = dict(scope)
        inner.update(bind)
        for t in graph.initializer:
            inner[t.name] = prefix + t.name
        for n in graph.node:
            for o in n.output:
                if o:
                    inner[o] = prefix + o
        self.note_constants(graph.node, graph.initializer, inner)
        for t in graph.initializer:
            c = type(t)()
            c.CopyFrom(t)
            c.name = inner[t.name]
            self.inits.append(c)
        for j, n in enumerate(graph.node):
            name = prefix + (n.name or f"{n.op_type}_{j}")
            if n.op_type in CONTROL_OPS and n.domain in ("", "ai.onnx"):
                self.control(n, name, inner, repeat, tags)
                continue
            c = NodeProto()
            c.CopyFrom(n)
            c.name = name
            del c.input[:]
            c.input.extend(inner.get(i, i) if i else "" for i in n.input)
            del c.output[:]
            c.output.extend(inner[o] if o else "" for o in n.output)
            self._emit(c, repeat, tags)
        return inner

    def control(self, n, name: str, scope: Mapping[str, str], repeat: int, tags: tuple) -> None:
        """Replace control node ``n`` (named ``name``) by its bodies' nodes and the wiring of its outputs."""
        ins = [scope.get(i, i) if i else "" for i in n.input]
        outs = [scope.get(o, o) if o else "" for o in n.output]
        graphs = {a.name: a.g for a in n.attribute if a.HasField("g")}
        attrs = {a.name: a for a in n.attribute}
        getattr(self, "_" + n.op_type.lower())(name, ins, outs, graphs, attrs, scope, repeat, tags)

    def _identity(self, src: str, dst: str, repeat: int, tags: tuple) -> None:
        from onnx import helper

        if dst:
            self._emit(helper.make_node("Identity", [src], [dst], name=dst + "/wire"), repeat, tags)

    def _stack(self, src: str, dst: str, trips: int, axis: int, repeat: int, tags: tuple) -> None:
        """dst = ``trips`` copies of src stacked on a new leading axis: Expand(Unsqueeze(src), [trips, *shape])."""
        from onnx import TensorProto, helper

        if not dst:
            return
        if axis != 0:
            self.notes.append(f"'{dst}': scan output axis {axis} stacked on axis 0 (same bytes)")
        p = dst + "/stack"
        zero, lead = p + "/axes", p + "/trips"
        self.inits += [helper.make_tensor(zero, TensorProto.INT64, [1], [0]),
                       helper.make_tensor(lead, TensorProto.INT64, [1], [int(trips)])]
        if self.opset >= 13:
            unsq = helper.make_node("Unsqueeze", [src, zero], [p + "/one"], name=p + "/unsqueeze")
        else:
            unsq = helper.make_node("Unsqueeze", [src], [p + "/one"], name=p + "/unsqueeze", axes=[0])
        for node in (unsq, helper.make_node("Shape", [src], [p + "/shape"], name=p + "/shape_of"),
                     helper.make_node("Concat", [lead, p + "/shape"], [p + "/full"], name=p + "/concat", axis=0),
                     helper.make_node("Expand", [p + "/one", p + "/full"], [dst], name=p)):
            self._emit(node, repeat, tags)

    def _outputs(self, graph, prefix_scope: Mapping[str, str]) -> list[str]:
        return [prefix_scope.get(o.name, o.name) for o in graph.output]

    def _if(self, name, ins, outs, graphs, attrs, scope, repeat, tags) -> None:
        cond = self.scalar(ins[0])
        mode = self.opts.branch
        if cond is not None:
            takes = ["then" if bool(cond) else "else"]
            self.notes.append(f"If '{name}': condition is known ({bool(cond)}): costed the {takes[0]} branch")
        else:
            self.conditions[name] = ins[0]
            self._identity(ins[0], name + CONDITION_PROBE, repeat, tags)
            if mode == "max":
                self.undecided.append(name)
                takes = ["then", "else"]
            else:
                takes = [mode]
                self.notes.append(f"If '{name}': condition is data: costed the {mode} branch (--branch {mode})")
        for take in takes:
            inner = self.body(graphs[f"{take}_branch"], f"{name}/{take}/", {}, scope, repeat, tags + ((name, take),))
            if take == takes[0]:
                for src, dst in zip(self._outputs(graphs[f"{take}_branch"], inner), outs):
                    self._identity(src, dst, repeat, tags)

    def _loop(self, name, ins, outs, graphs, attrs, scope, repeat, tags) -> None:
        body = graphs["body"]
        self.loops.add(name)
        m_name = ins[0] if ins else ""
        cond_name = ins[1] if len(ins) > 1 else ""
        trips = self.scalar(m_name)
        given = self.opts.loop_trips.get(name)
        if given is not None:
            trips, how = int(given), f"{given} (--loop-trips)"
        elif trips is not None:
            trips = int(trips)
            how = str(trips) + ("" if not cond_name or self.scalar(cond_name) is not None else
                                " (its upper bound: the loop condition is data)")
        else:
            trips, how = 1, None
            key = "Loop (trip count is data)"
            self.not_costed[key] = self.not_costed.get(key, 0) + 1
            self.notes.append(f"Loop '{name}': trip count is data: costed 1 iteration; give it with "
                              f"--loop-trips {name}=N")
        if how is not None:
            self.notes.append(f"Loop '{name}': body costed {how} times")
        trips = max(0, trips)
        prefix = f"{name}/body/"
        formal = [i.name for i in body.input]
        bind: dict[str, str] = {}
        if formal:
            bind[formal[0]] = prefix + "iteration_num"
            self._const(prefix + "iteration_num", 0, repeat * max(trips, 1), tags)
        if len(formal) > 1:
            if cond_name:
                bind[formal[1]] = cond_name
            else:
                bind[formal[1]] = prefix + "cond_in"
                self._const(prefix + "cond_in", True, repeat * max(trips, 1), tags)
        for k, f in enumerate(formal[2:]):
            if 2 + k < len(ins) and ins[2 + k]:
                bind[f] = ins[2 + k]
        n_carried = max(0, len(ins) - 2)
        if trips == 0:
            self.notes.append(f"Loop '{name}': 0 iterations: body not costed")
            for k in range(min(n_carried, len(outs))):
                self._identity(ins[2 + k], outs[k], repeat, tags)
            return
        inner = self.body(body, prefix, bind, scope, repeat * trips, tags)
        body_outs = self._outputs(body, inner)[1:]          # after the condition
        for k, (src, dst) in enumerate(zip(body_outs, outs)):
            if k < n_carried:
                self._identity(src, dst, repeat, tags)
                if trips > 1 and ins[2 + k]:
                    self.carried[ins[2 + k]] = src
            else:
                self._stack(src, dst, trips, 0, repeat, tags)

    def _scan(self, name, ins, outs, graphs, attrs, scope, repeat, tags) -> None:
        from onnx import helper

        if self.opset < 9:
            key = "Scan (opset 8, batch axis)"
            self.not_costed[key] = self.not_costed.get(key, 0) + 1
            return
        body = graphs["body"]
        n_scan = attrs["num_scan_inputs"].i
        n_state = len(ins) - n_scan
        axes = list(attrs["scan_input_axes"].ints) if "scan_input_axes" in attrs else [0] * n_scan
        formal = [i.name for i in body.input]
        bind = {f: ins[k] for k, f in enumerate(formal[:n_state]) if ins[k]}
        prefix = f"{name}/body/"
        length = self._scan_length(ins[n_state] if n_scan else "", axes[0] if axes else 0)
        if length is None:
            length = 1
            key = "Scan (sequence length unknown)"
            self.not_costed[key] = self.not_costed.get(key, 0) + 1
            self.notes.append(f"Scan '{name}': sequence length unknown: costed 1 step")
        else:
            self.notes.append(f"Scan '{name}': body costed {length} times (its sequence length)")
        times = repeat * length
        for k, f in enumerate(formal[n_state:n_state + n_scan]):
            src = ins[n_state + k]
            idx = prefix + f"{f}_step"
            self._const(idx, 0, times, tags)
            slice_name = prefix + f + "_slice"
            self._emit(helper.make_node("Gather", [src, idx], [slice_name], name=slice_name,
                                        axis=int(axes[k]) if k < len(axes) else 0), times, tags)
            bind[f] = slice_name
        inner = self.body(body, prefix, bind, scope, times, tags)
        out_axes = list(attrs["scan_output_axes"].ints) if "scan_output_axes" in attrs else []
        for k, (src, dst) in enumerate(zip(self._outputs(body, inner), outs)):
            if k < n_state:
                self._identity(src, dst, repeat, tags)
                if length > 1 and ins[k]:
                    self.carried[ins[k]] = src
            else:
                j = k - n_state
                self._stack(src, dst, length, out_axes[j] if j < len(out_axes) else 0, repeat, tags)

    def _scan_length(self, name: str, axis: int):
        dims = self.shapes.get(name) if name else None
        if dims is None or not -len(dims) <= axis < len(dims):
            return None
        return int(dims[axis])


def inline(model: onnx.ModelProto, known: Mapping[str, tuple], shapes: Mapping[str, tuple],
           opset: int) -> tuple[onnx.ModelProto, ControlFlow]:
    """A copy of ``model`` with every control node's bodies inlined before it (top level and nested).

    ``known``: small tensor values the first load folded (conditions, trip counts); ``shapes``: tensor shapes
    from it (scan lengths)."""
    inl = _Inliner(_OPTIONS.get(), known, opset)
    inl.shapes = shapes
    out = type(model)()
    out.CopyFrom(model)
    g = out.graph
    inl.note_constants(g.node, g.initializer, {})
    new_nodes = []
    for n in g.node:
        if n.op_type in CONTROL_OPS and n.domain in ("", "ai.onnx"):
            inl.nodes = []
            inl.control(n, n.name, {}, 1, ())
            new_nodes += inl.nodes
        else:
            new_nodes.append(n)
    unknown = sorted(set(inl.opts.loop_trips) - inl.loops)
    if unknown:
        from ..types import PredictorError

        raise PredictorError(f"--loop-trips names no Loop node: {', '.join(unknown)} (Loops: "
                             f"{', '.join(sorted(inl.loops)) or 'none'})")
    nodes = list(new_nodes)
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(inl.inits)
    cf = ControlFlow(repeats=frozen_map(inl.repeats), branch_of=frozen_map(inl.branch_of),
                     undecided=tuple(inl.undecided), not_costed=frozen_map(inl.not_costed), notes=tuple(inl.notes),
                     carried=frozen_map(inl.carried), conditions=frozen_map(inl.conditions))
    return out, cf


# ----------------------------------------------------------------------------- prediction stage
def scaled(op: OpPrediction, times: int) -> OpPrediction:
    """``op`` run ``times`` times: time, FLOPs, bytes and kernels multiplied."""
    c = op.cost
    cost = replace(c, flops=tuple(FlopCount(f.precision, f.unit, f.flops * times) for f in c.flops),
                   bytes=frozen_map({k: v * times for k, v in c.bytes.items()}), kernels=c.kernels * times)
    return replace(op, cost=cost, time_s=op.time_s * times, extra_time_s=op.extra_time_s * times,
                   level_time_s=frozen_map({k: v * times for k, v in op.level_time_s.items()}))


def resolve(ops: tuple[OpPrediction, ...], cf: ControlFlow) -> tuple[tuple[OpPrediction, ...], tuple[str, ...]]:
    """Repeat the ops of Loop/Scan bodies, keep the larger branch of each undecided If; (ops, notes)."""
    ops = tuple(scaled(o, cf.repeats[o.cost.name]) if cf.repeats.get(o.cost.name, 1) != 1 else o for o in ops)
    notes = list(cf.notes)
    depth = {name: next((k for tags in cf.branch_of.values() for k, t in enumerate(tags) if t[0] == name), 0)
             for name in cf.undecided}
    dropped: set[tuple[str, str]] = set()
    for name in sorted(cf.undecided, key=lambda x: -depth[x]):  # innermost first: outer sums see the choice
        time = {"then": 0.0, "else": 0.0}
        for o in ops:
            for t in cf.branch_of.get(o.cost.name, ()):
                if t[0] == name:
                    time[t[1]] += o.time_s
        keep = "then" if time["then"] >= time["else"] else "else"
        lose = "else" if keep == "then" else "then"
        dropped.add((name, lose))
        ops = tuple(o for o in ops if (name, lose) not in cf.branch_of.get(o.cost.name, ()))
        notes.append(f"If '{name}': condition is data: then branch {time['then'] * 1e6:.2f} us, else branch "
                     f"{time['else'] * 1e6:.2f} us; costed the larger ({keep}; --branch then|else picks one)")
    return ops, tuple(notes)
