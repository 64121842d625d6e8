"""Constant folding: numpy evaluation of the ONNX nodes that only compute weights or shapes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

Attrs = dict[str, object]
Inputs = Sequence[np.ndarray | None]


def node_attrs(node: onnx.NodeProto) -> Attrs:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _axes(node_inputs: Inputs, attrs: Attrs, index: int) -> list[int] | None:
    """Axes given as an attribute (older opsets) or as an input (opset 13+)."""
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]  # type: ignore[union-attr]
    if len(node_inputs) > index and node_inputs[index] is not None:
        return [int(a) for a in np.asarray(node_inputs[index]).ravel()]
    return None


def _constant(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    if "value" in attrs:
        return numpy_helper.to_array(attrs["value"])  # type: ignore[arg-type]
    for key, dtype in (("value_float", np.float32), ("value_int", np.int64)):
        if key in attrs:
            return np.array(attrs[key], dtype=dtype)
    for key, dtype in (("value_floats", np.float32), ("value_ints", np.int64)):
        if key in attrs:
            return np.array(list(attrs[key]), dtype=dtype)  # type: ignore[call-overload]
    raise ValueError("Constant node has no value attribute fpdeep understands")


def _constant_of_shape(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    shape = tuple(int(d) for d in np.asarray(inputs[0]).ravel())
    if any(d < 0 for d in shape):
        raise ValueError(f"ConstantOfShape with negative dimension in {shape}")
    value = attrs.get("value")
    fill = numpy_helper.to_array(value).ravel()[0] if value is not None else np.float32(0)
    # A zero-stride view: weights of shape-only models cost no memory.
    return np.broadcast_to(np.asarray(fill), shape)


def _unsqueeze(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    x = np.asarray(inputs[0])
    axes = _axes(inputs, attrs, 1) or []
    rank = x.ndim + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = np.expand_dims(x, axis)
    return x


def _squeeze(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    x = np.asarray(inputs[0])
    axes = _axes(inputs, attrs, 1)
    return np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(a % x.ndim for a in axes))


def reshape_target(shape_in: Sequence[int], target: Sequence[int], allowzero: bool) -> tuple:
    """ONNX Reshape's output shape: 0 copies the input dimension, one -1 is inferred."""
    out = [
        int(shape_in[i]) if (d == 0 and not allowzero) else int(d) for i, d in enumerate(target)
    ]
    if out.count(-1) > 1:
        raise ValueError(f"Reshape target {list(target)} has more than one -1")
    total = int(np.prod(shape_in))
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1]))
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape {tuple(shape_in)} to {list(target)}")
        out[out.index(-1)] = total // known
    if int(np.prod(out)) != total:
        raise ValueError(f"cannot reshape {tuple(shape_in)} to {list(target)}")
    return tuple(out)


def _reshape(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    x = np.asarray(inputs[0])
    target = np.asarray(inputs[1]).ravel().tolist()
    return x.reshape(reshape_target(x.shape, target, bool(attrs.get("allowzero", 0))))


def _slice(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    x = np.asarray(inputs[0])
    if "starts" in attrs:  # opset < 10
        starts, ends = list(attrs["starts"]), list(attrs["ends"])  # type: ignore[call-overload]
        axes = list(attrs.get("axes", range(len(starts))))  # type: ignore[call-overload]
        steps = [1] * len(starts)
    else:
        starts = np.asarray(inputs[1]).ravel().tolist()
        ends = np.asarray(inputs[2]).ravel().tolist()
        axes = _opt_list(inputs, 3) or list(range(len(starts)))
        steps = _opt_list(inputs, 4) or [1] * len(starts)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        index[int(axis) % x.ndim] = slice(int(start), int(end), int(step))
    return x[tuple(index)]


def _opt_list(inputs: Inputs, index: int) -> list[int] | None:
    if len(inputs) > index and inputs[index] is not None:
        return [int(v) for v in np.asarray(inputs[index]).ravel()]
    return None


def _cast(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    dtype = helper.tensor_dtype_to_np_dtype(int(attrs["to"]))  # type: ignore[arg-type]
    return np.asarray(inputs[0]).astype(dtype)


def _gather(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    axis = int(attrs.get("axis", 0))  # type: ignore[arg-type]
    return np.take(np.asarray(inputs[0]), np.asarray(inputs[1]), axis=axis)


def _concat(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    return np.concatenate([np.asarray(x) for x in inputs if x is not None], axis=int(attrs["axis"]))


def _transpose(inputs: Inputs, attrs: Attrs) -> np.ndarray:
    perm = attrs.get("perm")
    return np.transpose(np.asarray(inputs[0]), None if perm is None else list(perm))  # type: ignore


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    def apply(inputs: Inputs, attrs: Attrs) -> np.ndarray:
        a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
        return np.asarray(fn(a, b)).astype(np.result_type(a, b))

    return apply


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b)  # ONNX integer Div truncates
    return a / b


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    return lambda inputs, attrs: np.asarray(fn(np.asarray(inputs[0])))


FOLDERS: dict[str, Callable[[Inputs, Attrs], np.ndarray]] = {
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
    "Identity": _unary(lambda x: x),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Reshape": _reshape,
    "Flatten": lambda inputs, attrs: np.asarray(inputs[0]).reshape(
        int(np.prod(np.asarray(inputs[0]).shape[: int(attrs.get("axis", 1))])), -1  # type: ignore
    ),
    "Slice": _slice,
    "Cast": _cast,
    "Gather": _gather,
    "Concat": _concat,
    "Transpose": _transpose,
    "Add": _binary(np.add),
    "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply),
    "Div": _binary(_div),
    "Neg": _unary(np.negative),
    "Sqrt": _unary(np.sqrt),
    "Reciprocal": _unary(np.reciprocal),
}


def fold(node: onnx.NodeProto, inputs: Inputs) -> np.ndarray:
    """Evaluate one node whose inputs are all constants. Raises ValueError when it cannot."""
    return FOLDERS[node.op_type](inputs, node_attrs(node))
