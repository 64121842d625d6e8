"""ONNX graph -> fpdeep IR: shape propagation per sample, constant folding, op mapping."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from types import MappingProxyType

import numpy as np
import onnx
from onnx import numpy_helper

from fpdeep.errors import ModelError
from fpdeep.frontend.fold import FOLDERS, fold, node_attrs
from fpdeep.ir import Layer, Network, NoAttrs, Op, Shape, Tensor, WeightRef
from fpdeep.ops import output_shape

# Input positions that hold parameters rather than data, per op: used to tell a weight given as a
# graph input (IR 3 style, or an export without parameters) from the image input.
PARAM_SLOTS = {"Conv": {1, 2}, "Gemm": {1, 2}, "MatMul": {1}, "BatchNormalization": {1, 2, 3, 4}}


class GraphWalk:
    """Walks an ONNX graph once in topological order and collects IR layers."""

    def __init__(self, model: onnx.ModelProto, path: Path, input_shape: Shape | None):
        self.path = path
        self.graph = model.graph
        self.opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 7
        )
        self.consts: dict[str, np.ndarray] = {}
        for init in self.graph.initializer:
            self.consts[init.name] = self._to_array(init)
        self.param_shapes: dict[str, Shape] = {}  # weights given as graph inputs, values unknown
        self.data: dict[str, Shape] = {}  # data tensor -> per-sample shape
        self.layers: list[Layer] = []
        self.layer_names: set[str] = set()
        self.used_params: dict[str, np.ndarray] = {}
        self.handled: set[int] = set()  # nodes folded into an earlier layer by a look-ahead
        self.node: onnx.NodeProto | None = None
        self.nodes = self._topological_nodes()
        self.readers: dict[str, list[int]] = {}
        for index, node in enumerate(self.nodes):
            for name in node.input:
                if name:
                    self.readers.setdefault(name, []).append(index)
        self.input_name, self.batch = self._find_input(input_shape)

    # ----- messages -------------------------------------------------------------------------
    def error(self, message: str) -> ModelError:
        where = f"{self.path.name}"
        if self.node is not None:
            where += f": node {self.node_label(self.node)} ({self.node.op_type})"
        return ModelError(f"{where}: {message}")

    @staticmethod
    def node_label(node: onnx.NodeProto) -> str:
        if node.name:
            return repr(node.name)
        return f"producing {node.output[0]!r}" if node.output else "(unnamed, no outputs)"

    def _to_array(self, tensor: onnx.TensorProto) -> np.ndarray:
        try:
            return numpy_helper.to_array(tensor)
        except Exception as exc:
            raise ModelError(
                f"{self.path.name}: initializer {tensor.name!r} cannot be decoded "
                f"(declared shape {list(tensor.dims)}): {exc}"
            ) from None

    # ----- set-up ---------------------------------------------------------------------------
    def _topological_nodes(self) -> list[onnx.NodeProto]:
        """Kahn's algorithm, ties broken by file order, so the result is deterministic."""
        nodes = list(self.graph.node)
        for node in nodes:
            if not node.output or not node.output[0]:
                raise ModelError(
                    f"{self.path.name}: node {self.node_label(node)} ({node.op_type}) has no "
                    "output; the graph is malformed."
                )
        produced_by = {out: i for i, n in enumerate(nodes) for out in n.output if out}
        waiting = [0] * len(nodes)
        dependants: dict[int, list[int]] = {}
        for i, node in enumerate(nodes):
            for name in set(node.input):
                j = produced_by.get(name)
                if j is not None and j != i:
                    waiting[i] += 1
                    dependants.setdefault(j, []).append(i)
        ready = [i for i, count in enumerate(waiting) if count == 0]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for k in dependants.get(i, ()):
                waiting[k] -= 1
                if waiting[k] == 0:
                    heapq.heappush(ready, k)
        if len(order) != len(nodes):
            stuck = [self.node_label(nodes[i]) for i in range(len(nodes)) if waiting[i] > 0]
            raise ModelError(
                f"{self.path.name}: the graph has a cycle or reads tensors nothing produces "
                f"(nodes {', '.join(stuck[:5])})."
            )
        return [nodes[i] for i in order]

    def _find_input(self, input_shape: Shape | None) -> tuple[str, int]:
        candidates = []
        for value in self.graph.input:
            if value.name in self.consts:
                continue
            if self._read_as_data(value.name):
                candidates.append(value)
            else:
                self.param_shapes[value.name] = self._declared_shape(value, what="weight input")
        if len(candidates) != 1:
            names = ", ".join(repr(v.name) for v in candidates) or "none"
            raise ModelError(
                f"{self.path.name}: fpdeep needs exactly one image input, found {names}."
            )
        value = candidates[0]
        dims = self._dims(value)
        if len(dims) not in (2, 4):
            raise ModelError(
                f"{self.path.name}: input {value.name!r} has rank {len(dims)}; fpdeep expects "
                "(N, C, H, W) images or (N, F) vectors."
            )
        batch = dims[0] if isinstance(dims[0], int) and dims[0] > 0 else 1
        if input_shape is not None:
            if len(input_shape) != len(dims) - 1 or any(d <= 0 for d in input_shape):
                raise ModelError(
                    f"--input-shape {','.join(map(str, input_shape))} does not fit input "
                    f"{value.name!r} of rank {len(dims)}; give {len(dims) - 1} positive sizes "
                    f"({'C,H,W' if len(dims) == 4 else 'F'})."
                )
            shape = tuple(int(d) for d in input_shape)
        else:
            axis_names = ("N", "C", "H", "W") if len(dims) == 4 else ("N", "F")
            for axis, dim in enumerate(dims[1:], start=1):
                if not isinstance(dim, int) or dim <= 0:
                    raise ModelError(
                        f"{self.path.name}: input {value.name!r} has a dynamic dimension "
                        f"{axis} ({axis_names[axis]}, named {dim!r}); give its size with "
                        "--input-shape C,H,W (input_shape= in the Python API)."
                    )
            shape = tuple(int(d) for d in dims[1:])
        self.data[value.name] = shape
        return value.name, batch

    def _read_as_data(self, tensor: str) -> bool:
        """Whether some node reads ``tensor`` outside a weight slot (Identity copies followed)."""
        for j in self.readers.get(tensor, []):
            node = self.nodes[j]
            if node.op_type == "Identity":  # exporters alias shared weights through Identity
                if self._read_as_data(node.output[0]):
                    return True
                continue
            slots = PARAM_SLOTS.get(node.op_type, ())
            if any(name == tensor and i not in slots for i, name in enumerate(node.input)):
                return True
        return False

    @staticmethod
    def _dims(value: onnx.ValueInfoProto) -> list[int | str]:
        tensor_type = value.type.tensor_type
        if not tensor_type.HasField("shape"):
            return []
        return [
            d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in tensor_type.shape.dim
        ]

    def _declared_shape(self, value: onnx.ValueInfoProto, *, what: str) -> Shape:
        dims = self._dims(value)
        if not all(isinstance(d, int) and d >= 0 for d in dims):
            raise ModelError(
                f"{self.path.name}: {what} {value.name!r} has no fixed shape ({dims}); fpdeep "
                "needs static weight shapes."
            )
        return tuple(int(d) for d in dims)

    # ----- accessors used by the op handlers --------------------------------------------------
    def attrs(self) -> dict[str, object]:
        assert self.node is not None
        return node_attrs(self.node)

    def data_in(self, index: int = 0) -> tuple[str, Shape]:
        assert self.node is not None
        if index >= len(self.node.input) or not self.node.input[index]:
            raise self.error(f"input {index} is missing.")
        name = self.node.input[index]
        if name not in self.data:
            raise self.error(
                f"input {index} ({name!r}) is a constant or weight where fpdeep expects a "
                "feature map computed from the image input."
            )
        return name, self.data[name]

    def has_input(self, index: int) -> bool:
        assert self.node is not None
        return index < len(self.node.input) and bool(self.node.input[index])

    def const_in(self, index: int) -> np.ndarray:
        assert self.node is not None
        name = self.node.input[index] if self.has_input(index) else ""
        if name not in self.consts:
            raise self.error(f"input {index} ({name!r}) must be a constant.")
        return self.consts[name]

    def param(self, index: int, role: str, expected: Shape | None = None) -> WeightRef:
        """A weight at input ``index``, checked against the shape the layer needs."""
        assert self.node is not None
        name = self.node.input[index] if self.has_input(index) else ""
        if name in self.consts:
            value = self.consts[name]
            shape = tuple(int(d) for d in value.shape)
        elif name in self.param_shapes:
            value, shape = None, self.param_shapes[name]
        else:
            raise self.error(
                f"input {index} ({name!r}, the {role}) is not an initializer, a constant or a "
                "weight input; fpdeep needs weights that do not depend on the image."
            )
        if expected is not None and shape != tuple(expected):
            raise self.error(
                f"{role} {name!r} has shape {shape}, but the layer needs {tuple(expected)} "
                "(the initializer does not match the layer's input or attributes)."
            )
        if value is not None:
            self.used_params[name] = value
        return WeightRef(name=name, role=role, shape=shape)

    def emit(
        self,
        op: Op,
        inputs: Sequence[tuple[str, Shape]],
        attrs: object = None,
        weights: Sequence[WeightRef] = (),
        output: str | None = None,
        suffix: str = "",
        view: Shape | None = None,
    ) -> None:
        """A layer of kind ``op``; its output shape is the op's rule (``view``: the shape a
        Reshape-like view gives its input)."""
        assert self.node is not None
        attrs = NoAttrs() if attrs is None else attrs
        out_shape = output_shape(op, attrs, [s for _, s in inputs],  # type: ignore[arg-type]
                                 [ref.shape for ref in weights], view)
        if any(d <= 0 for d in out_shape):
            raise self.error(f"the output shape {out_shape} is empty; check kernel and strides.")
        base = (self.node.name or self.node.output[0]) + suffix
        name, k = base, 1
        while name in self.layer_names:
            name, k = f"{base}_{k}", k + 1
        self.layer_names.add(name)
        out = output or self.node.output[0]
        self.layers.append(
            Layer(
                name=name,
                op=op,
                inputs=tuple(t for t, _ in inputs),
                output=out,
                in_shapes=tuple(s for _, s in inputs),
                out_shape=out_shape,
                attrs=attrs,  # type: ignore[arg-type]
                weights=tuple(weights),
                source_op=self.node.op_type,
            )
        )
        self.data[out] = out_shape

    def single_reader(self, tensor: str, op_type: str) -> onnx.NodeProto | None:
        """The one node reading ``tensor``, if there is exactly one and it is an ``op_type``."""
        readers = self.readers.get(tensor, [])
        outputs = {o.name for o in self.graph.output}
        if len(readers) == 1 and tensor not in outputs:
            node = self.nodes[readers[0]]
            if node.op_type == op_type:
                return node
        return None

    def mark_handled(self, node: onnx.NodeProto) -> None:
        self.handled.add(next(i for i, n in enumerate(self.nodes) if n is node))

    # ----- the walk ---------------------------------------------------------------------------
    def run(self, handlers: dict[str, Callable[[GraphWalk], None]]) -> Network:
        for index, node in enumerate(self.nodes):
            if index in self.handled:
                continue
            self.node = node
            known = [not name or name in self.consts for name in node.input]
            if node.op_type == "Shape":
                self._shape_of()
            elif node.op_type == "Identity" and node.input[0] in self.param_shapes:
                self.param_shapes[node.output[0]] = self.param_shapes[node.input[0]]
            elif node.op_type in FOLDERS and all(known):
                value = fold(node, [self.consts.get(name) for name in node.input])
                self.consts[node.output[0]] = value
            elif node.op_type in handlers:
                handlers[node.op_type](self)
            else:
                raise self.error(
                    f"operator {node.op_type!r} is not supported. fpdeep supports: "
                    f"{', '.join(sorted(set(handlers) | set(FOLDERS) | {'Shape'}))}."
                )
        self.node = None
        return self._network()

    def _shape_of(self) -> None:
        assert self.node is not None
        value = self._shape_value(self.node)
        if value is None:
            raise self.error(f"cannot tell the shape of {self.node.input[0]!r}.")
        self.consts[self.node.output[0]] = value

    def _shape_value(self, node: onnx.NodeProto) -> np.ndarray | None:
        """What a Shape node gives, once its input's shape is known (None before)."""
        name = node.input[0]
        if name in self.data:
            full = (self.batch, *self.data[name])
        elif name in self.consts:
            full = self.consts[name].shape
        else:
            return None
        attrs = node_attrs(node)
        start, end = int(attrs.get("start", 0)), attrs.get("end")  # type: ignore[arg-type]
        dims = list(full)[start:None if end is None else int(end)]  # type: ignore[arg-type]
        return np.array(dims, dtype=np.int64)

    def const_ahead(self, name: str) -> np.ndarray | None:
        """The value of ``name`` if it is a constant, folding ahead of the walk the constant
        sub-graph that makes it (a look-ahead may meet a shape computed later in the order);
        None where it depends on the image. Nothing is stored: the walk folds it again."""
        if name in self.consts:
            return self.consts[name]
        node = next((n for n in self.nodes if name in n.output), None)
        if node is None:
            return None
        if node.op_type == "Shape":
            return self._shape_value(node)
        if node.op_type not in FOLDERS:
            return None
        inputs = [self.const_ahead(i) if i else None for i in node.input]
        if any(v is None for v, i in zip(inputs, node.input, strict=True) if i):
            return None
        return fold(node, inputs)

    def _network(self) -> Network:
        outputs = [o.name for o in self.graph.output if o.name in self.data]
        if len(outputs) != 1:
            raise ModelError(
                f"{self.path.name}: fpdeep trains networks with one output computed from the "
                f"image; found {len(outputs)} ({', '.join(map(repr, outputs)) or 'none'})."
            )
        output = outputs[0]
        if output == self.input_name:
            raise ModelError(f"{self.path.name}: the graph has no layers between input and output.")
        # Keep only layers the output depends on (drops e.g. auxiliary classifier heads).
        by_output = {layer.output: layer for layer in self.layers}
        live: set[str] = set()
        stack = [output]
        while stack:
            tensor = stack.pop()
            layer = by_output.get(tensor)
            if layer is not None and layer.name not in live:
                live.add(layer.name)
                stack.extend(layer.inputs)
        layers = tuple(layer for layer in self.layers if layer.name in live)
        consumers: dict[str, list[str]] = {self.input_name: []}
        for layer in layers:
            consumers.setdefault(layer.output, [])
            for tensor in dict.fromkeys(layer.inputs):
                consumers[tensor].append(layer.name)
        tensors = {
            name: Tensor(
                name=name,
                shape=self.data[name],
                producer=None if name == self.input_name else by_output[name].name,
                consumers=tuple(readers),
            )
            for name, readers in consumers.items()
        }
        names = {ref.name for layer in layers for ref in layer.weights}
        params = {k: v for k, v in self.used_params.items() if k in names}
        for name, value in params.items():
            if np.issubdtype(np.asarray(value).dtype, np.number) and not np.all(np.isfinite(value)):
                bad = tuple(int(i) for i in np.argwhere(~np.isfinite(value))[0])
                raise ModelError(
                    f"{self.path.name}: weight {name!r} holds NaN or infinite values (first at "
                    f"index {bad}); every weight must be a finite number.")
        return Network(
            name=self.graph.name or self.path.stem,
            input_name=self.input_name,
            input_shape=self.data[self.input_name],
            output_name=output,
            layers=layers,
            tensors=MappingProxyType(tensors),
            params=MappingProxyType(params),
        )


def resolve_pads(
    g: GraphWalk, spatial: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int]
) -> tuple[int, int, int, int]:
    """ONNX pads (explicit or auto_pad) as (top, left, bottom, right)."""
    attrs = g.attrs()
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto in ("NOTSET", ""):
        pads = [int(p) for p in attrs.get("pads", [0, 0, 0, 0])]  # type: ignore[union-attr]
        if len(pads) != 4 or min(pads) < 0:
            raise g.error(f"pads {pads} must be four non-negative numbers for a 2-D window.")
        return pads[0], pads[1], pads[2], pads[3]
    if auto == "VALID":
        return 0, 0, 0, 0
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise g.error(f"auto_pad {auto!r} is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER.")
    begin, end = [], []
    for size, k, s in zip(spatial, kernel, stride, strict=True):
        total = max((-(-size // s) - 1) * s + k - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else large)
        end.append(large if auto == "SAME_UPPER" else small)
    return begin[0], begin[1], end[0], end[1]


def pair(g: GraphWalk, key: str, default: tuple[int, int]) -> tuple[int, int]:
    value = g.attrs().get(key)
    if value is None:
        return default
    values = [int(v) for v in value]  # type: ignore[union-attr]
    if len(values) != 2 or min(values) <= 0:
        raise g.error(f"{key} {values} must be two positive numbers (fpdeep handles 2-D layers).")
    return values[0], values[1]


def require_feature_map(g: GraphWalk, shape: Shape) -> None:
    if len(shape) != 3:
        raise g.error(f"needs a (C, H, W) feature map per sample, got shape {shape}.")


def check_dilation(g: GraphWalk) -> None:
    dilations = [int(d) for d in g.attrs().get("dilations", [1, 1])]  # type: ignore[union-attr]
    if any(d != 1 for d in dilations):
        raise g.error(f"dilations {dilations} are not supported; fpdeep supports dilation 1.")


def per_sample_reshape(g: GraphWalk, shape: Shape, full_out: Sequence[int]) -> Shape:
    if not full_out or full_out[0] != g.batch:
        raise g.error(
            f"reshapes (N, {', '.join(map(str, shape))}) to {tuple(full_out)}, which mixes the "
            "batch dimension with per-sample data."
        )
    return tuple(int(d) for d in full_out[1:])


def math_prod(shape: Sequence[int]) -> int:
    return math.prod(int(d) for d in shape)


def to_shape(value: np.ndarray) -> Shape:
    return tuple(int(d) for d in np.asarray(value).ravel())


def load_graph(
    model: onnx.ModelProto,
    path: Path,
    input_shape: Shape | None,
    handlers: dict[str, Callable[[GraphWalk], None]],
) -> Network:
    graph = None
    try:
        graph = GraphWalk(model, path, input_shape)
        return graph.run(handlers)
    except ModelError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, ArithmeticError, AttributeError) as exc:
        # A malformed node (missing attribute, impossible constant) that a check did not name.
        if graph is None:
            raise ModelError(f"{path.name}: the graph is malformed: {exc}") from None
        raise graph.error(f"cannot be interpreted: {exc}") from None

