"""The op registry: one spec per op kind, and the shape rule against ONNX's own shape inference."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from conftest import make_model, save, tensor
from onnx import helper, shape_inference
from onnx.reference import ReferenceEvaluator

import fpdeep
from fpdeep import ops
from fpdeep.errors import FpdeepError
from fpdeep.ir import COMPUTE_OPS, Layer, Op

rng = np.random.default_rng(0)


def _w(name: str, *shape: int) -> onnx.TensorProto:
    return tensor(name, rng.normal(size=shape).astype(np.float32))


def _i64(name: str, values) -> onnx.TensorProto:
    return tensor(name, np.array(values, dtype=np.int64))


def test_every_op_kind_has_one_spec():
    assert set(ops.OPS) == set(Op)
    assert all(op is s.op for op, s in ops.OPS.items())
    # the loop nest (MACs, planner cost) is what makes a compute layer
    assert {op for op, s in ops.OPS.items() if s.nest is not None} == COMPUTE_OPS
    golden = {Op.CONV, Op.FC, Op.RELU, Op.MAXPOOL, Op.AVGPOOL, Op.GLOBAL_AVGPOOL, Op.ADD,
              Op.FLATTEN, Op.IDENTITY, Op.SOFTMAX, Op.LRN, Op.CONCAT, Op.DROPOUT,
              Op.CHANNEL_SHUFFLE, Op.SCALE, Op.BIAS, Op.BATCHNORM}
    assert golden <= ops.GOLDEN_OPS
    for op in ops.GOLDEN_OPS:  # a golden op has both passes, or the loss computes it
        s = ops.spec(op)
        assert (s.forward is None) == (s.backward is None) == s.in_loss
        # every parameter it trains has a weight gradient
        assert (s.weight_gradient is not None) == bool(s.trainable)


def test_an_unknown_op_is_named_with_the_known_ones():
    with pytest.raises(FpdeepError, match=r"'Gelu' is not an op kind fpdeep knows; it knows "
                       r"Conv, FC, Relu, .*ChannelShuffle"):
        ops.spec("Gelu")  # type: ignore[arg-type]


def test_a_missing_estimate_raises_instead_of_returning_zero():
    relu = Layer("r", Op.RELU, ("x",), "y", ((4, 2, 2),), (4, 2, 2))
    with pytest.raises(FpdeepError, match=r"layer 'r' \(Relu\) is not a Conv or FC layer"):
        ops.loop_nest(relu)
    with pytest.raises(FpdeepError, match=r"layer 'r' \(Relu\) is not a pooling layer"):
        ops.pool_window(relu)
    with pytest.raises(FpdeepError, match=r"views its \(4, 2, 2\) input as another shape of as "
                       r"many elements; \(4, 3\) is not one"):
        ops.output_shape(Op.IDENTITY, relu.attrs, [(4, 2, 2)], given=(4, 3))


# ----- shapes: the rule the frontend uses, against ONNX shape inference ------------------------

CONV_W = [_w("w", 4, 2, 3, 3), _w("b", 4)]
FC_W = [_w("fw", 5, 32), _w("fb", 5), _w("mw", 32, 5)]
CASES = {
    "conv": ([helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])], CONV_W),
    "conv_stride_asymmetric_pads": ([helper.make_node(
        "Conv", ["x", "w"], ["y"], strides=[2, 2], pads=[0, 1, 2, 0])], CONV_W),
    "conv_same_upper": ([helper.make_node(
        "Conv", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_UPPER")], CONV_W),
    "conv_same_lower_k4": ([helper.make_node(
        "Conv", ["x", "w4"], ["y"], strides=[3, 2], auto_pad="SAME_LOWER")],
        [_w("w4", 4, 2, 4, 2)]),
    "conv_valid_grouped": ([helper.make_node(
        "Conv", ["x", "wg"], ["y"], group=2, auto_pad="VALID")], [_w("wg", 6, 1, 3, 3)]),
    "maxpool": ([helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])], []),
    "maxpool_ceil": ([helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)], []),
    "maxpool_same_upper": ([helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")],
        []),
    "avgpool_include_pad": ([helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
        count_include_pad=1)], []),
    "avgpool_ceil": ([helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)], []),
    "gap_reduce_mean": ([
        helper.make_node("GlobalAveragePool", ["x"], ["g"]),
        helper.make_node("ReduceMean", ["g"], ["y"], axes=[2, 3], keepdims=0)], []),
    "bn_lrn_dropout_relu_identity": ([
        helper.make_node("BatchNormalization", ["x", "s", "o", "m", "v"], ["a"]),
        helper.make_node("LRN", ["a"], ["l"], size=3),
        helper.make_node("Dropout", ["l"], ["d"]),
        helper.make_node("Relu", ["d"], ["r"]),
        helper.make_node("Identity", ["r"], ["y"])],
        [_w("s", 2), _w("o", 2), _w("m", 2), tensor("v", np.ones(2, np.float32))]),
    "add_sum_scale_bias_concat": ([
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Add", ["x", "r"], ["a"]),
        helper.make_node("Sum", ["x", "r", "a"], ["s"]),
        helper.make_node("Mul", ["s", "k"], ["m"]),
        helper.make_node("Add", ["m", "c"], ["c2"]),
        helper.make_node("Concat", ["c2", "x", "r"], ["y"], axis=1)],
        [_w("k", 2, 1, 1), _w("c", 1)]),
    "flatten_gemm_matmul_softmax": ([
        helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["g"], transB=1),
        helper.make_node("Gemm", ["f", "mw"], ["g2"]),
        helper.make_node("MatMul", ["f", "mw"], ["mm"]),
        helper.make_node("Add", ["mm", "fb"], ["mb"]),
        helper.make_node("Sum", ["g", "g2", "mb"], ["z"]),
        helper.make_node("Softmax", ["z"], ["y"], axis=1)], FC_W),
    "reshape_squeeze_unsqueeze_transpose": ([
        helper.make_node("Reshape", ["x", "to"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Squeeze", ["g", "axes"], ["q"]),
        helper.make_node("Unsqueeze", ["q", "axes"], ["u"]),
        helper.make_node("Transpose", ["u"], ["y"], perm=[0, 2, 1, 3])],
        [_i64("to", [2, 4, 16, 2]), _i64("axes", [2, 3])]),
    "channel_shuffle": ([
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["c", "split"], ["s"]),
        helper.make_node("Transpose", ["s"], ["t"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["t", "back"], ["y"])],
        [*CONV_W, _i64("split", [2, 2, 2, 8, 8]), _i64("back", [2, 4, 8, 8])]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_layer_shapes_match_onnx_shape_inference(tmp_path, case):
    nodes, inits = CASES[case]
    model = make_model(nodes, input_shape=(2, 2, 8, 8), initializers=inits)
    inferred = shape_inference.infer_shapes(model, strict_mode=True)
    dims = {v.name: tuple(d.dim_value for d in v.type.tensor_type.shape.dim)
            for v in (*inferred.graph.value_info, *inferred.graph.output)}
    network = fpdeep.load_onnx(save(model, tmp_path))
    assert network.tensors[network.output_name].shape == dims["y"][1:]
    checked = [layer for layer in network.layers if layer.output in dims]  # not fpdeep's own
    assert len(checked) >= len(network.layers) - 1
    for layer in checked:
        assert layer.out_shape == dims[layer.output][1:], (layer.name, layer.op)
        assert network.tensors[layer.output].shape == layer.out_shape


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize(("size", "kernel", "stride", "pad"), [
    (3, 2, 2, 1), (5, 2, 2, 1), (7, 3, 2, 1), (6, 3, 2, 0), (8, 3, 3, 1)])
def test_ceil_mode_windows_start_inside_the_input_as_onnx_computes(tmp_path, op, size, kernel,
                                                                    stride, pad):
    """In ceil mode the last window must start inside the input or its leading pad (ONNX and
    PyTorch agree). ONNX's shape inference skips that correction, so the reference is the
    shape ONNX's reference evaluator computes."""
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=[kernel, kernel],
                            strides=[stride, stride], pads=[pad] * 4, ceil_mode=1)
    model = make_model([node], input_shape=(1, 2, size, size))
    (y,) = ReferenceEvaluator(model).run(None, {"x": np.zeros((1, 2, size, size), np.float32)})
    network = fpdeep.load_onnx(save(model, tmp_path))
    assert network.layers[0].out_shape == y.shape[1:]


# ----- workload and the error rule --------------------------------------------------------------


def test_loop_nest_of_an_fc_layer_is_a_one_by_one_convolution(tmp_path):
    nodes, inits = CASES["flatten_gemm_matmul_softmax"]
    network = fpdeep.load_onnx(save(make_model(nodes, input_shape=(2, 2, 8, 8),
                                               initializers=inits), tmp_path))
    gemm = next(layer for layer in network.layers if layer.op is Op.FC)
    nest = ops.loop_nest(gemm)
    assert (nest.in_shape, nest.out_shape, nest.attrs.kernel) == ((32, 1, 1), (5, 1, 1), (1, 1))
    assert nest.macs == 32 * 5 == gemm.attrs.in_features * gemm.attrs.out_features


def test_an_error_is_needed_downstream_of_anything_trainable(tmp_path):
    """A scaling constant trains like batch-norm's gamma: the Conv after it needs BP."""
    nodes = [helper.make_node("Mul", ["x", "k"], ["m"]),
             helper.make_node("Conv", ["m", "w"], ["c"]),
             helper.make_node("Relu", ["c"], ["y"])]
    network = fpdeep.load_onnx(save(make_model(nodes, input_shape=(1, 2, 8, 8),
                                               initializers=[_w("k", 1), CONV_W[0]]), tmp_path))
    scale, conv, relu = network.layers
    assert ops.needs_error(network) == {"x": False, "m": True, "c": True, "y": True}
    assert ops.needs_input_error(network) == {conv.name, relu.name}
    assert fpdeep.analyze(network).layers[conv.name].bp_macs == ops.loop_nest(conv).macs
    assert [ref.role for ref in ops.trainable_refs(scale)] == ["scale"]


def test_element_ops_follow_the_op():
    layer = Layer("a", Op.ADD, ("p", "q", "r"), "y", ((2, 3, 3),) * 3, (2, 3, 3))
    assert ops.element_ops(layer) == 2 * math.prod(layer.out_shape)
    # training dropout: one multiply per element (kept elements scaled by 1/(1 - p))
    assert ops.element_ops(Layer("d", Op.DROPOUT, ("p",), "y", ((4,),), (4,))) == 4
    assert ops.element_ops(Layer("c", Op.CONCAT, ("p", "q"), "y", ((4,), (2,)), (6,))) == 0
