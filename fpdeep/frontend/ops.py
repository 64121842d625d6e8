"""One handler per ONNX operator that becomes an IR layer."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fpdeep.frontend.convert import (
    GraphWalk,
    check_dilation,
    math_prod,
    pair,
    per_sample_reshape,
    require_feature_map,
    resolve_pads,
    to_shape,
)
from fpdeep.frontend.fold import node_attrs, reshape_target
from fpdeep.ir import (
    BatchNormAttrs,
    ConvAttrs,
    DropoutAttrs,
    FCAttrs,
    LRNAttrs,
    Op,
    PoolAttrs,
    Shape,
    ShuffleAttrs,
    SoftmaxAttrs,
    WeightRef,
)


def conv(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    require_feature_map(g, shape)
    check_dilation(g)
    ci, h, w = shape
    groups = int(g.attrs().get("group", 1))  # type: ignore[arg-type]
    if groups <= 0 or ci % groups:
        raise g.error(f"group={groups} does not divide the {ci} input channels.")
    weight_name = g.node.input[1] if g.has_input(1) else ""  # type: ignore[union-attr]
    declared = g.param(1, "weight").shape
    if len(declared) != 4:
        raise g.error(f"weight {weight_name!r} has shape {declared}; a 2-D Conv needs 4 dims.")
    co, kh, kw = declared[0], declared[2], declared[3]
    kernel = pair(g, "kernel_shape", (kh, kw))
    if co % groups:
        raise g.error(f"group={groups} does not divide the {co} output channels.")
    weight = g.param(1, "weight", (co, ci // groups, *kernel))
    stride = pair(g, "strides", (1, 1))
    pads = resolve_pads(g, (h, w), kernel, stride)
    weights = [weight]
    if g.has_input(2):
        weights.append(g.param(2, "bias", (co,)))
    attrs = ConvAttrs(
        kernel=kernel, stride=stride, pads=pads, groups=groups, has_bias=len(weights) == 2
    )
    g.emit(Op.CONV, [(x, shape)], attrs, weights)


def gemm(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    attrs = g.attrs()
    if int(attrs.get("transA", 0)):  # type: ignore[arg-type]
        raise g.error("transA=1 would transpose the batch into features; fpdeep needs transA=0.")
    if len(shape) != 1:
        raise g.error(f"needs a flat input per sample, got shape {shape}; add a Flatten first.")
    out_in = bool(int(attrs.get("transB", 0)))  # type: ignore[arg-type]
    declared = g.param(1, "weight").shape
    if len(declared) != 2:
        raise g.error(f"weight has shape {declared}; Gemm needs a 2-D weight.")
    out = declared[0] if out_in else declared[1]
    expected = (out, shape[0]) if out_in else (shape[0], out)
    weights = [g.param(1, "weight", expected)]
    if g.has_input(2):
        bias = g.param(2, "bias")
        if math_prod(bias.shape) != out or len(bias.shape) > 2:
            raise g.error(f"bias {bias.name!r} has shape {bias.shape}; the layer needs ({out},).")
        weights.append(bias)
    _fc(g, x, shape, out, weights, out_in,
        alpha=float(attrs.get("alpha", 1.0)), beta=float(attrs.get("beta", 1.0)))  # type: ignore


def matmul(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    if len(shape) != 1:
        raise g.error(f"needs a flat input per sample, got shape {shape}; add a Flatten first.")
    declared = g.param(1, "weight").shape
    if len(declared) != 2:
        raise g.error(f"weight has shape {declared}; fpdeep handles MatMul by a 2-D weight.")
    out = declared[1]
    weights = [g.param(1, "weight", (shape[0], out))]
    # MatMul + Add(bias) is how some exporters write a Linear layer: make it one FC layer.
    output = None
    add = g.single_reader(g.node.output[0], "Add")  # type: ignore[union-attr]
    if add is not None:
        other = [name for name in add.input if name != g.node.output[0]]  # type: ignore
        if len(other) == 1 and other[0] in g.consts and g.consts[other[0]].size == out:
            value = g.consts[other[0]]
            g.used_params[other[0]] = value
            weights.append(WeightRef(name=other[0], role="bias", shape=to_shape(value.shape)))
            g.mark_handled(add)
            output = add.output[0]
    _fc(g, x, shape, out, weights, False, output=output)


def _fc(
    g: GraphWalk, x: str, shape: Shape, out: int, weights: list[WeightRef], out_in: bool,
    *, alpha: float = 1.0, beta: float = 1.0, output: str | None = None,
) -> None:
    attrs = FCAttrs(
        in_features=shape[0], out_features=out, has_bias=len(weights) == 2,
        alpha=alpha, beta=beta, weight_out_in=out_in,
    )
    g.emit(Op.FC, [(x, shape)], attrs, weights, output=output)


def batchnorm(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    channels = (shape[0],)
    weights = [
        g.param(1, "scale", channels), g.param(2, "bias", channels),
        g.param(3, "mean", channels), g.param(4, "var", channels),
    ]
    attrs = g.attrs()
    if not int(attrs.get("spatial", 1)):  # type: ignore[arg-type]
        raise g.error("spatial=0 normalises every activation on its own; fpdeep supports the "
                      "per-channel BatchNormalization (spatial=1, the only form from opset 9).")
    # Opsets 9-13 mark training by the extra outputs (running mean and variance, saved mean and
    # variance), 14+ by training_mode; fpdeep trains with batch statistics in either case.
    mode = BatchNormAttrs(
        epsilon=_float32_attr(attrs.get("epsilon", 1e-5)),
        momentum=_float32_attr(attrs.get("momentum", 0.9)),
        training_mode=bool(int(attrs.get("training_mode", len(g.node.output) > 1))),  # type: ignore
    )
    if not 0 <= mode.momentum <= 1:
        raise g.error(f"momentum {mode.momentum} must lie in [0, 1] (ONNX: running <- momentum "
                      "* running + (1 - momentum) * batch).")
    g.emit(Op.BATCHNORM, [(x, shape)], mode, weights)


def _float32_attr(value: object) -> float:
    """A float attribute (stored as float32) as the shortest decimal it stands for: 0.9, not
    0.899999976, so that the model means what its exporter wrote."""
    return float(str(np.float32(value)))  # type: ignore[arg-type]


def pool(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    require_feature_map(g, shape)
    check_dilation(g)
    h, w = shape[1:]
    attrs = g.attrs()
    if "kernel_shape" not in attrs:
        raise g.error("has no kernel_shape attribute.")
    kernel = pair(g, "kernel_shape", (1, 1))
    stride = pair(g, "strides", (1, 1))
    pads = resolve_pads(g, (h, w), kernel, stride)
    ceil = bool(int(attrs.get("ceil_mode", 0)))  # type: ignore[arg-type]
    is_max = g.node.op_type == "MaxPool"  # type: ignore[union-attr]
    mode = PoolAttrs(
        kernel=kernel, stride=stride, pads=pads, ceil_mode=ceil,
        count_include_pad=not is_max and bool(int(attrs.get("count_include_pad", 0))),  # type: ignore
    )
    g.emit(Op.MAXPOOL if is_max else Op.AVGPOOL, [(x, shape)], mode)


def global_avgpool(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    require_feature_map(g, shape)
    g.emit(Op.GLOBAL_AVGPOOL, [(x, shape)])


def reduce_mean(g: GraphWalk) -> None:
    """ReduceMean over H and W is a global average pool (some exporters write it so)."""
    x, shape = g.data_in(0)
    require_feature_map(g, shape)
    attrs = g.attrs()
    axes = attrs.get("axes")
    if axes is None and g.has_input(1):
        axes = g.const_in(1).ravel().tolist()
    axes = sorted(int(a) % 4 for a in (axes or []))  # type: ignore[union-attr]
    if axes != [2, 3]:
        raise g.error(f"ReduceMean over axes {axes} is supported only over H and W ([2, 3]).")
    if int(attrs.get("keepdims", 1)):  # type: ignore[arg-type]
        g.emit(Op.GLOBAL_AVGPOOL, [(x, shape)])
        return
    pooled = f"{g.node.output[0]}__pooled"  # type: ignore[union-attr]
    g.emit(Op.GLOBAL_AVGPOOL, [(x, shape)], output=pooled, suffix="_pool")
    g.emit(Op.FLATTEN, [(pooled, g.data[pooled])])


def relu(g: GraphWalk) -> None:
    g.emit(Op.RELU, [g.data_in(0)])


def identity(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    g.emit(Op.IDENTITY, [(x, shape)], view=shape)


def lrn(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    require_feature_map(g, shape)
    attrs = g.attrs()
    mode = LRNAttrs(
        size=int(attrs["size"]),  # type: ignore[arg-type]
        alpha=float(attrs.get("alpha", 1e-4)),  # type: ignore[arg-type]
        beta=float(attrs.get("beta", 0.75)),  # type: ignore[arg-type]
        bias=float(attrs.get("bias", 1.0)),  # type: ignore[arg-type]
    )
    g.emit(Op.LRN, [(x, shape)], mode)


def dropout(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    ratio = g.attrs().get("ratio")
    if ratio is None:
        ratio = float(g.const_in(1).ravel()[0]) if g.has_input(1) else 0.5
    g.emit(Op.DROPOUT, [(x, shape)], DropoutAttrs(ratio=float(ratio)))  # type: ignore


def softmax(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    default = -1 if g.opset >= 13 else 1
    axis = int(g.attrs().get("axis", default))  # type: ignore[arg-type]
    full_rank = len(shape) + 1
    if len(shape) != 1 and axis % full_rank != 1:
        raise g.error(f"softmax over axis {axis} of shape {shape}; fpdeep supports class vectors.")
    g.emit(Op.SOFTMAX, [(x, shape)], SoftmaxAttrs(axis=axis))


def add_or_sum(g: GraphWalk) -> None:
    names = [n for n in g.node.input if n]  # type: ignore[union-attr]
    data = [n for n in names if n in g.data]
    consts = [n for n in names if n in g.consts]
    if len(data) == len(names):
        shapes = {g.data[n] for n in data}
        if len(shapes) != 1:
            raise g.error(f"adds feature maps of different shapes {sorted(shapes)}.")
        shape = shapes.pop()
        g.emit(Op.ADD if len(data) > 1 else Op.IDENTITY, [(n, shape) for n in data], view=shape)
        return
    if g.node.op_type == "Add" and len(data) == 1 and len(consts) == 1:  # type: ignore[union-attr]
        _channel_constant(g, Op.BIAS, "bias", data[0], consts[0])
        return
    raise g.error("needs feature-map inputs (or one feature map and one constant).")


def mul(g: GraphWalk) -> None:
    names = list(g.node.input)  # type: ignore[union-attr]
    data = [n for n in names if n in g.data]
    consts = [n for n in names if n in g.consts]
    if len(data) != 1 or len(consts) != 1:
        raise g.error("fpdeep supports Mul of one feature map by one constant (a scaling).")
    _channel_constant(g, Op.SCALE, "scale", data[0], consts[0])


def _channel_constant(g: GraphWalk, op: Op, role: str, x: str, const: str) -> None:
    shape = g.data[x]
    value = g.consts[const]
    full = (1, *shape)
    try:
        broadcast = np.broadcast_shapes(value.shape, full)
    except ValueError:
        broadcast = None
    aligned = (1,) * (len(full) - value.ndim) + tuple(value.shape)
    per_channel = all(d == 1 for i, d in enumerate(aligned) if i != 1)
    if broadcast != full or not per_channel:
        raise g.error(
            f"constant {const!r} of shape {tuple(value.shape)} must be a scalar or one value per "
            f"channel of the {shape} feature map."
        )
    g.used_params[const] = value
    ref = WeightRef(name=const, role=role, shape=to_shape(value.shape))
    g.emit(op, [(x, shape)], weights=[ref])


def flatten(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    axis = int(g.attrs().get("axis", 1))  # type: ignore[arg-type]
    if axis % (len(shape) + 1) != 1:
        raise g.error(f"Flatten with axis={axis} mixes batch and sample; fpdeep needs axis=1.")
    _view(g, x, shape, (math_prod(shape),))


def reshape(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    target = g.const_in(1).ravel().tolist()
    allowzero = bool(int(g.attrs().get("allowzero", 0)))  # type: ignore[arg-type]
    out = per_sample_reshape(g, shape, reshape_target((g.batch, *shape), target, allowzero))
    if len(out) == 4 and len(shape) == 3 and _channel_shuffle(g, x, shape, out):
        return
    _view(g, x, shape, out)


def squeeze_unsqueeze(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    attrs = g.attrs()
    axes = attrs.get("axes")
    if axes is None and g.has_input(1):
        axes = g.const_in(1).ravel().tolist()
    full = (g.batch, *shape)
    if g.node.op_type == "Squeeze":  # type: ignore[union-attr]
        drop = {int(a) % len(full) for a in (axes or [i for i, d in enumerate(full) if d == 1])}
        out = [d for i, d in enumerate(full) if i not in drop]
        if 0 in drop or any(full[i] != 1 for i in drop):
            raise g.error(f"cannot squeeze axes {sorted(drop)} of {full}.")
    else:
        out = list(full)
        rank = len(full) + len(axes or [])
        for axis in sorted(int(a) % rank for a in (axes or [])):
            out.insert(axis, 1)
    _view(g, x, shape, per_sample_reshape(g, shape, out))


def _view(g: GraphWalk, x: str, shape: Shape, out: Shape) -> None:
    """A reshape keeps the C-order memory layout: a Flatten to a vector, else an Identity."""
    if len(out) not in (1, 3):
        raise g.error(f"reshapes {shape} to {out}; fpdeep handles (C, H, W) and flat vectors.")
    g.emit(Op.FLATTEN if len(out) == 1 and len(shape) != 1 else Op.IDENTITY, [(x, shape)],
           view=out)


def _channel_shuffle(g: GraphWalk, x: str, shape: Shape, split: Shape) -> bool:
    """Reshape (C,H,W)->(G,C/G,H,W), Transpose(1,2), Reshape back: ShuffleNet's channel shuffle."""
    groups = split[0]
    if split[2:] != shape[1:] or groups * split[1] != shape[0]:
        return False
    transpose = g.single_reader(g.node.output[0], "Transpose")  # type: ignore[union-attr]
    if transpose is None:
        return False
    perm = [int(p) for p in node_attrs(transpose).get("perm", [])]  # type: ignore
    back = g.single_reader(transpose.output[0], "Reshape")
    target_value = None if back is None else g.const_ahead(back.input[1])
    if perm != [0, 2, 1, 3, 4] or target_value is None:
        return False
    target = target_value.ravel().tolist()
    full = reshape_target((g.batch, split[1], groups, *shape[1:]), target, False)
    if tuple(full) != (g.batch, *shape):
        return False
    g.mark_handled(transpose)
    g.mark_handled(back)
    g.emit(Op.CHANNEL_SHUFFLE, [(x, shape)], ShuffleAttrs(groups=groups),
           output=back.output[0])
    return True


def transpose(g: GraphWalk) -> None:
    x, shape = g.data_in(0)
    perm = [int(p) for p in g.attrs().get("perm", range(len(shape), -1, -1))]  # type: ignore
    full = (g.batch, *shape)
    moved = [a for a in perm if full[a] != 1]
    if sorted(perm) != list(range(len(full))) or perm[0] != 0 or moved != sorted(moved):
        raise g.error(
            f"Transpose with perm {perm} reorders the data of a {full} tensor; fpdeep supports "
            "only transposes that keep the per-sample memory layout (no-ops)."
        )
    g.emit(Op.IDENTITY, [(x, shape)], view=tuple(full[a] for a in perm[1:]))


def concat(g: GraphWalk) -> None:
    inputs = [g.data_in(i) for i in range(len(g.node.input))]  # type: ignore[union-attr]
    rank = len(inputs[0][1])
    axis = int(g.attrs().get("axis", 1)) % (rank + 1)  # type: ignore[arg-type]
    if axis != 1 or any(len(s) != rank or s[1:] != inputs[0][1][1:] for _, s in inputs):
        shapes = [s for _, s in inputs]
        raise g.error(f"concatenates {shapes} along axis {axis}; fpdeep concatenates channels.")
    g.emit(Op.CONCAT, inputs)


HANDLERS: dict[str, Callable[[GraphWalk], None]] = {
    "Conv": conv,
    "Gemm": gemm,
    "MatMul": matmul,
    "BatchNormalization": batchnorm,
    "MaxPool": pool,
    "AveragePool": pool,
    "GlobalAveragePool": global_avgpool,
    "ReduceMean": reduce_mean,
    "Relu": relu,
    "Identity": identity,
    "LRN": lrn,
    "Dropout": dropout,
    "Softmax": softmax,
    "Add": add_or_sum,
    "Sum": add_or_sum,
    "Mul": mul,
    "Flatten": flatten,
    "Reshape": reshape,
    "Squeeze": squeeze_unsqueeze,
    "Unsqueeze": squeeze_unsqueeze,
    "Transpose": transpose,
    "Concat": concat,
}
