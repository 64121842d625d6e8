"""A copy of an ONNX graph at another input height and width, for a simulation that must be short.

Most model-zoo graphs are written for one input size: a 7 x 7 average pool closes them where the
map is 7 x 7, reshapes name the map's height and width (a channel shuffle's split and merge, the
flatten before the classifier), and the first fully connected layer takes exactly the flattened
map. ``resize_input`` rewrites those parts for a new size and nothing else:

- an AveragePool whose window covers the whole map at the graph's size (stride 1, no padding)
  becomes a GlobalAveragePool: the same op at that size, and at any other;
- a Reshape that splits or merges the channels of a map (a channel shuffle) or flattens it
  keeps what it does to the channels and follows the new height and width;
- a Gemm or MatMul whose input width changes gets weights of the new width, where its weights
  are made by ConstantOfShape (the light zoo graphs shipped with onnx); real weight data cannot be
  resized and is refused.

Every other node, and every weight outside those layers, is as it was. The result passes onnx's
checker and its strict shape inference.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from fpdeep.errors import ModelError


def resize_input(model: onnx.ModelProto, height: int, width: int, *,
                 name: str = "model") -> onnx.ModelProto:
    """``model`` with its image input ``height`` x ``width`` (see the module's docstring);
    ``name`` names the model in errors."""
    if height <= 0 or width <= 0:
        raise ModelError(f"{name}: an input of {height} x {width} is empty; give positive sizes.")
    model = _copy(model)
    graph = model.graph
    image = _image_input(graph, name)
    dims = image.type.tensor_type.shape.dim
    if len(dims) != 4:
        raise ModelError(f"{name}: input {image.name!r} has rank {len(dims)}; resizing needs "
                         "(N, C, H, W) images.")
    before = _shapes(model, name)
    del graph.value_info[:]
    dims[2].dim_value, dims[3].dim_value = height, width
    for node in graph.node:
        if node.op_type == "AveragePool" and _covers_the_map(node, before.get(node.input[0])):
            _make_global(node)
    for node in graph.node:
        if node.op_type == "Reshape":
            _follow_reshape(model, node, before, name)
    for node in graph.node:
        if node.op_type in ("Gemm", "MatMul"):
            _resize_weights(model, node, name)
    del graph.value_info[:]
    try:
        onnx.checker.check_model(model)
        shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as exc:  # onnx raises several types; each names the node
        raise ModelError(f"{name}: the graph does not take a {height} x {width} input: "
                         f"{str(exc).strip().splitlines()[0]}") from None
    _refuse_empty_maps(model, height, width, name)
    return model


def _refuse_empty_maps(model: onnx.ModelProto, height: int, width: int, name: str) -> None:
    shapes = _shapes(model, name)
    for node in model.graph.node:
        dims = shapes.get(node.output[0]) if node.output else None
        if dims is not None and min(dims, default=1) <= 0:
            raise ModelError(f"{name}: at a {height} x {width} input node {node.name!r} "
                             f"({node.op_type}) has an empty output {tuple(dims)}; give a "
                             "larger size.")


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def _image_input(graph: onnx.GraphProto, name: str) -> onnx.ValueInfoProto:
    """The one graph input some node reads as its data (slot 0); weights given as graph inputs
    are read in other slots."""
    constants = {t.name for t in graph.initializer}
    data = {n.input[0] for n in graph.node if n.input and n.op_type != "Identity"}
    found = [v for v in graph.input if v.name not in constants and v.name in data]
    if len(found) != 1:
        listed = ", ".join(repr(v.name) for v in found) or "none"
        raise ModelError(f"{name}: resizing needs exactly one image input; found {listed}.")
    return found[0]


def _shapes(model: onnx.ModelProto, name: str) -> dict[str, list[int]]:
    """Every tensor's dims as onnx's shape inference gives them (only fully known shapes)."""
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception as exc:  # as above
        raise ModelError(f"{name}: onnx shape inference fails: "
                         f"{str(exc).strip().splitlines()[0]}") from None
    graph = inferred.graph
    shapes = {}
    for value in (*graph.input, *graph.value_info, *graph.output):
        dims = value.type.tensor_type.shape.dim
        if dims and all(d.HasField("dim_value") for d in dims):
            shapes[value.name] = [d.dim_value for d in dims]
    for tensor in graph.initializer:
        shapes[tensor.name] = list(tensor.dims)
    return shapes


def _attribute(node: onnx.NodeProto, key: str, default):
    for attribute in node.attribute:
        if attribute.name == key:
            return helper.get_attribute_value(attribute)
    return default


def _covers_the_map(node: onnx.NodeProto, dims: list[int] | None) -> bool:
    """Whether the pool averages the whole map into one value a channel: its window is the map
    and the padding around it (padding that is not counted, as Caffe's ceil-mode pools are
    exported), with one output position."""
    if dims is None or len(dims) != 4:
        return False
    kernel = list(_attribute(node, "kernel_shape", []))
    pads = list(_attribute(node, "pads", [0, 0, 0, 0]))
    padded = [dims[2] + pads[0] + pads[2], dims[3] + pads[1] + pads[3]]
    counted = _attribute(node, "count_include_pad", 0)
    return (kernel == padded and (not any(pads) or not counted)
            and _attribute(node, "auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET"))


def _make_global(node: onnx.NodeProto) -> None:
    node.op_type = "GlobalAveragePool"
    del node.attribute[:]


def _constant(model: onnx.ModelProto, tensor: str) -> onnx.TensorProto | None:
    for initializer in model.graph.initializer:
        if initializer.name == tensor:
            return initializer
    return None


def _set_constant(model: onnx.ModelProto, node: onnx.NodeProto, slot: int,
                  values: list[int]) -> None:
    """Point ``node``'s input ``slot`` at a new int64 constant of ``values`` (a fresh name,
    so that other readers of the old constant keep it)."""
    taken = {t.name for t in model.graph.initializer} | {
        o for n in model.graph.node for o in n.output} | {v.name for v in model.graph.input}
    base = f"{node.input[slot]}_resized"
    new, k = base, 1
    while new in taken:
        k += 1
        new = f"{base}_{k}"
    constant = numpy_helper.from_array(np.array(values, np.int64), new)
    model.graph.initializer.append(constant)
    if model.ir_version < 4:  # before IR 4 every initializer is also a graph input
        model.graph.input.append(helper.make_tensor_value_info(
            new, onnx.TensorProto.INT64, list(constant.dims)))
    node.input[slot] = new


def _follow_reshape(model: onnx.ModelProto, node: onnx.NodeProto,
                    before: dict[str, list[int]], name: str) -> None:
    """Give a Reshape of a map the target its input has now: the channel split or merge, or the
    flatten, it did at the graph's size."""
    target = _constant(model, node.input[1])
    old_in = before.get(node.input[0])
    if target is None or old_in is None:
        return
    old = [int(v) for v in numpy_helper.to_array(target)]
    now = _shapes(model, name).get(node.input[0])
    if now is None or now == old_in:
        return
    if len(old) == 2 and len(old_in) >= 3 and old[1] in (-1, math.prod(old_in[1:])):
        new = [now[0], math.prod(now[1:])]  # the flatten before a classifier
    elif len(old_in) == 4 and len(old) == 5 and old[3:] == old_in[2:]:
        new = [now[0], old[1], old[2], *now[2:]]  # a channel shuffle's split of the channels
    elif len(old_in) == 5 and len(old) == 4 and old[2:] == old_in[3:]:
        new = [now[0], old[1], *now[3:]]  # and its merge
    else:
        raise ModelError(f"{name}: node {node.name!r} (Reshape) reshapes {tuple(old_in)} to "
                         f"{old}; resizing knows flattens and channel splits and merges only.")
    _set_constant(model, node, 1, new)


def _resize_weights(model: onnx.ModelProto, node: onnx.NodeProto, name: str) -> None:
    """Weights of the width the layer's input has now, where ConstantOfShape makes them."""
    shapes = _shapes(model, name)
    features = shapes.get(node.input[0])
    weights = shapes.get(node.input[1])
    if features is None or weights is None or len(weights) != 2:
        return
    trans_a = node.op_type == "Gemm" and _attribute(node, "transA", 0)
    trans_b = node.op_type == "Gemm" and _attribute(node, "transB", 0)
    width = features[0] if trans_a else features[-1]
    axis = 1 if trans_b else 0
    if weights[axis] == width:
        return
    maker = next((n for n in model.graph.node if node.input[1] in n.output), None)
    if maker is None or maker.op_type != "ConstantOfShape" or _constant(
            model, maker.input[0]) is None:
        raise ModelError(f"{name}: node {node.name!r} ({node.op_type}) reads {width} features "
                         f"at the new size but its weights {node.input[1]!r} hold "
                         f"{weights[axis]}; weights that are data cannot be resized.")
    shape = list(weights)
    shape[axis] = width
    _set_constant(model, maker, 0, shape)
