"""ONNX frontend: every supported op, graph styles, DAG bookkeeping, shapes vs ONNX's own tools."""

from __future__ import annotations

import random

import numpy as np
import onnx
import pytest
from conftest import (
    LIGHT_MODELS,
    light_model,
    make_model,
    rand,
    save,
    tensor,
    tiny_cnn,
)
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import fpdeep
from fpdeep.ir import ConvAttrs, FCAttrs, Op, PoolAttrs, ShuffleAttrs


def onnx_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """Per-sample shapes of every tensor according to ONNX shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {}
    for value in [*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input]:
        dims = value.type.tensor_type.shape.dim
        if dims and all(d.HasField("dim_value") for d in dims):
            shapes[value.name] = tuple(d.dim_value for d in dims)[1:]
    return shapes


def evaluated_shapes(model: onnx.ModelProto, x: np.ndarray) -> dict[str, tuple[int, ...]]:
    """Per-sample shapes of every node output, by running ONNX's reference evaluator."""
    names = [out for node in model.graph.node for out in node.output if out]
    session = ReferenceEvaluator(model)
    values = session.run(names, {"x": x})
    return {n: tuple(np.asarray(v).shape[1:]) for n, v in zip(names, values, strict=True)}


def check_against_reference(model: onnx.ModelProto, tmp_path, batch: int = 1) -> fpdeep.ir.Network:
    """Load through fpdeep and compare every layer's output shape with an evaluated run."""
    net = fpdeep.load_onnx(save(model, tmp_path))
    x = rand(batch, *net.input_shape)
    shapes = evaluated_shapes(model, x)
    for layer in net.layers:
        if layer.output in shapes:
            assert layer.out_shape == shapes[layer.output], layer.name
    assert net.layers[-1].out_shape == shapes[net.output_name]
    return net


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_model_shapes_match_onnx_shape_inference(name):
    path = light_model(name)
    net = fpdeep.load_onnx(path)
    reference = onnx_shapes(onnx.load(str(path)))
    compared = 0
    for layer in net.layers:
        if layer.output in reference:
            assert layer.out_shape == reference[layer.output], layer.name
            compared += 1
    assert compared >= 0.9 * len(net.layers)
    assert net.input_shape == (3, 224, 224)
    assert fpdeep.analyze(net).fp_macs > 0


def test_tiny_cnn_layers_and_weights(tmp_path):
    net = check_against_reference(tiny_cnn(), tmp_path)
    assert [layer.op for layer in net.layers] == [
        Op.CONV, Op.RELU, Op.MAXPOOL, Op.CONV, Op.RELU, Op.FLATTEN, Op.FC]
    conv = net.layers[0]
    assert conv.attrs == ConvAttrs(kernel=(3, 3), pads=(1, 1, 1, 1), has_bias=True)
    assert [w.name for w in conv.weights] == ["w1", "b1"]
    assert net.params["w1"].shape == (4, 3, 3, 3)
    fc = net.layers[-1]
    assert fc.attrs == FCAttrs(in_features=24, out_features=4, has_bias=True, weight_out_in=True)


@pytest.mark.parametrize(
    ("attrs", "wshape"),
    [
        ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 2, 1]}, (5, 3, 3, 3)),
        ({"kernel_shape": [5, 5], "auto_pad": "SAME_UPPER", "strides": [2, 2]}, (4, 3, 5, 5)),
        ({"kernel_shape": [4, 4], "auto_pad": "SAME_LOWER", "strides": [3, 3]}, (4, 3, 4, 4)),
        ({"kernel_shape": [3, 1], "auto_pad": "VALID"}, (2, 3, 3, 1)),
        ({"kernel_shape": [1, 1]}, (7, 3, 1, 1)),
        ({"kernel_shape": [11, 11], "strides": [4, 4], "pads": [2, 2, 2, 2]}, (4, 3, 11, 11)),
    ],
)
def test_conv_geometry_matches_reference(tmp_path, attrs, wshape):
    node = helper.make_node("Conv", ["x", "w"], ["y"], **attrs)
    model = make_model([node], input_shape=(1, 3, 13, 11),
                       initializers=[tensor("w", rand(*wshape))])
    net = check_against_reference(model, tmp_path)
    assert net.layers[0].out_shape[0] == wshape[0]


def test_grouped_conv(tmp_path):
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], group=2)
    model = make_model([node], input_shape=(1, 4, 6, 6),
                       initializers=[tensor("w", rand(6, 2, 3, 3)), tensor("b", rand(6))])
    net = check_against_reference(model, tmp_path)
    assert net.layers[0].attrs.groups == 2
    assert fpdeep.analyze(net).fp_macs == 6 * 4 * 4 * 2 * 3 * 3


@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2]}),
        ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1],
                     "ceil_mode": 1}),
        ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
        ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ],
)
def test_pooling_geometry_matches_reference(tmp_path, op, attrs):
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)], input_shape=(1, 2, 9, 8))
    net = check_against_reference(model, tmp_path)
    layer = net.layers[0]
    assert isinstance(layer.attrs, PoolAttrs)
    assert layer.attrs.count_include_pad == bool(attrs.get("count_include_pad", 0))


def test_gemm_without_transb_and_matmul_add_fusion(tmp_path):
    nodes = [
        helper.make_node("Flatten", ["x"], ["f"]),
        helper.make_node("Gemm", ["f", "w1"], ["g"], alpha=0.5),
        helper.make_node("MatMul", ["g", "w2"], ["m"]),
        helper.make_node("Add", ["m", "b2"], ["y"]),
    ]
    inits = [tensor("w1", rand(48, 10)), tensor("w2", rand(10, 3)), tensor("b2", rand(3))]
    net = check_against_reference(
        make_model(nodes, input_shape=(1, 3, 4, 4), initializers=inits), tmp_path)
    gemm, fused = net.layers[1], net.layers[2]
    assert gemm.attrs == FCAttrs(in_features=48, out_features=10, alpha=0.5, weight_out_in=False)
    assert fused.op == Op.FC and fused.attrs.has_bias and fused.output == "y"
    assert [w.role for w in fused.weights] == ["weight", "bias"]
    assert len(net.layers) == 3


def test_residual_dag_records_producers_and_consumers(tmp_path):
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["b"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Add", ["b", "r"], ["s"]),
        helper.make_node("Conv", ["s", "w3"], ["c"], kernel_shape=[1, 1]),
        helper.make_node("Concat", ["c", "s"], ["y"], axis=1),
    ]
    inits = [tensor("w1", rand(4, 3, 3, 3)), tensor("w2", rand(4, 4, 3, 3)),
             tensor("w3", rand(2, 4, 1, 1))]
    model = make_model(nodes, initializers=inits)
    net = check_against_reference(model, tmp_path)
    assert net.tensors["r"].producer == net.layers[1].name
    assert set(net.tensors["r"].consumers) == {net.layers[2].name, net.layers[3].name}
    assert net.tensors["x"].producer is None
    assert net.layers[-1].out_shape == (6, 8, 8)
    # The order does not depend on how the file lists the nodes.
    shuffled = make_model(random.Random(3).sample(nodes, len(nodes)), initializers=inits)
    again = fpdeep.load_onnx(save(shuffled, tmp_path, "shuffled.onnx"))
    assert [layer.output for layer in again.layers] == [layer.output for layer in net.layers]


def test_shape_computing_chain_is_folded_into_a_flatten(tmp_path):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as PyTorch's `x.view(x.size(0), -1)`."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Shape", ["r"], ["s"]),
        helper.make_node("Constant", [], ["i0"], value=tensor("i0v", np.array(0))),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
        helper.make_node("Constant", [], ["m1"], value=tensor("m1v", np.array([-1]))),
        helper.make_node("Concat", ["n1", "m1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["r", "shape"], ["y"]),
    ]
    model = make_model(nodes, initializers=[tensor("ax", np.array([0]))], input_shape=(2, 3, 4, 4))
    net = check_against_reference(model, tmp_path, batch=2)
    assert [layer.op for layer in net.layers] == [Op.RELU, Op.FLATTEN]
    assert net.layers[-1].out_shape == (48,)


def test_ir3_weights_as_graph_inputs_with_initializers(tmp_path):
    model = tiny_cnn()
    for init in model.graph.initializer:
        model.graph.input.append(
            helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    model.ir_version = 3
    model.opset_import[0].version = 8
    net = fpdeep.load_onnx(save(model, tmp_path))
    assert net.input_name == "x" and len(net.compute_layers) == 3
    assert set(net.params) == {"w1", "b1", "w2", "w3", "b3"}


def test_weights_as_graph_inputs_without_values(tmp_path):
    """`torch.onnx.export(..., export_params=False)`: shapes known, values not."""
    model = tiny_cnn()
    for init in model.graph.initializer:
        model.graph.input.append(
            helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    del model.graph.initializer[:]
    net = fpdeep.load_onnx(save(model, tmp_path))
    assert net.input_name == "x"
    assert net.layers[0].weights[0].shape == (4, 3, 3, 3)
    assert dict(net.params) == {}


def test_external_data_beside_the_model(tmp_path):
    model = tiny_cnn()
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="m.weights", size_threshold=0)
    net = fpdeep.load_onnx(tmp_path / "m.onnx")
    expected = onnx.numpy_helper.to_array(tiny_cnn().graph.initializer[0])
    np.testing.assert_array_equal(net.params["w1"], expected)


def test_batchnorm_lrn_dropout_softmax_and_constant_scales(tmp_path):
    c = 4
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["bn"], epsilon=1e-3),
        helper.make_node("Mul", ["bn", "s"], ["sc"]),
        helper.make_node("Add", ["sc", "t"], ["bi"]),
        helper.make_node("LRN", ["bi"], ["l"], size=3),
        helper.make_node("Dropout", ["l", "ratio"], ["d"]),
        helper.make_node("GlobalAveragePool", ["d"], ["gap"]),
        helper.make_node("Squeeze", ["gap", "axes"], ["sq"]),
        helper.make_node("Softmax", ["sq"], ["y"]),
    ]
    inits = [tensor("w", rand(c, 3, 3, 3)), *(tensor(n, np.abs(rand(c)) + 0.5) for n in "gbmv"),
             tensor("s", rand(c, 1, 1)), tensor("t", rand(1, c, 1, 1)),
             tensor("ratio", np.array(0.25, dtype=np.float32)), tensor("axes", np.array([2, 3]))]
    net = check_against_reference(make_model(nodes, initializers=inits), tmp_path)
    ops = [layer.op for layer in net.layers]
    assert ops == [Op.CONV, Op.BATCHNORM, Op.SCALE, Op.BIAS, Op.LRN, Op.DROPOUT,
                   Op.GLOBAL_AVGPOOL, Op.FLATTEN, Op.SOFTMAX]
    assert net.layers[1].attrs.epsilon == pytest.approx(1e-3)
    assert net.layers[5].attrs.ratio == pytest.approx(0.25)
    # Trainable: conv weight, BN gamma and beta, the scale and the bias; not the running stats.
    assert fpdeep.analyze(net).params == c * 27 + 2 * c + c + c


def test_channel_shuffle_pattern(tmp_path):
    nodes = [
        helper.make_node("Reshape", ["x", "s1"], ["a"]),
        helper.make_node("Transpose", ["a"], ["b"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["b", "s2"], ["y"]),
    ]
    inits = [tensor("s1", np.array([1, 3, 2, 5, 5])), tensor("s2", np.array([1, -1, 5, 5]))]
    net = check_against_reference(
        make_model(nodes, input_shape=(1, 6, 5, 5), initializers=inits), tmp_path)
    assert [layer.op for layer in net.layers] == [Op.CHANNEL_SHUFFLE]
    assert net.layers[0].attrs == ShuffleAttrs(groups=3)


def test_noop_transpose_is_identity_and_sum_is_add(tmp_path):
    nodes = [
        helper.make_node("GlobalAveragePool", ["x"], ["g"]),
        helper.make_node("Transpose", ["g"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Sum", ["t", "t"], ["y"]),
    ]
    net = check_against_reference(make_model(nodes, input_shape=(1, 5, 4, 4)), tmp_path)
    assert [layer.op for layer in net.layers] == [Op.GLOBAL_AVGPOOL, Op.IDENTITY, Op.ADD]


def test_dynamic_batch_is_fine_and_input_shape_fills_dynamic_sizes(tmp_path):
    model = tiny_cnn()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    assert fpdeep.load_onnx(save(model, tmp_path)).input_shape == (3, 8, 8)
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "height"
    net = fpdeep.load_onnx(save(model, tmp_path), input_shape=(3, 8, 8))
    assert net.layers[0].out_shape == (4, 8, 8)


def test_unused_branches_are_dropped(tmp_path):
    nodes = [
        helper.make_node("Relu", ["x"], ["y"]),
        helper.make_node("MaxPool", ["x"], ["aux"], kernel_shape=[2, 2]),
    ]
    net = fpdeep.load_onnx(save(make_model(nodes), tmp_path))
    assert [layer.op for layer in net.layers] == [Op.RELU]


@pytest.mark.parametrize("opset", range(7, 22))
def test_every_supported_opset(tmp_path, opset):
    """The same small network written the way each opset spells its operators."""
    axes_as_input = opset >= 13
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("BatchNormalization", ["c", "g", "beta", "m", "v"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["gap"]),
        (helper.make_node("Squeeze", ["gap", "axes"], ["sq"]) if axes_as_input
         else helper.make_node("Squeeze", ["gap"], ["sq"], axes=[2, 3])),
        (helper.make_node("Dropout", ["sq", "ratio"], ["d"]) if opset >= 12
         else helper.make_node("Dropout", ["sq"], ["d"], ratio=0.3)),
        helper.make_node("Gemm", ["d", "fw", "fb"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ]
    inits = [tensor("w", rand(4, 3, 3, 3)), tensor("b", rand(4)),
             *(tensor(n, np.abs(rand(4, seed=i)) + 0.5) for i, n in enumerate(["g", "beta", "m",
                                                                               "v"])),
             tensor("fw", rand(5, 4)), tensor("fb", rand(5))]
    if axes_as_input:
        inits.append(tensor("axes", np.array([2, 3])))
    if opset >= 12:
        inits.append(tensor("ratio", np.array(0.3, dtype=np.float32)))
    model = make_model(nodes, initializers=inits, opset=opset, ir_version=3 if opset < 9 else 7)
    if opset < 9:  # IR 3 lists initializers among the graph inputs
        model.graph.input.extend(
            helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)) for i in inits)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5]))
    onnx.checker.check_model(model)
    if opset >= 9:
        net = check_against_reference(model, tmp_path)
    else:  # onnx's reference evaluator mishandles BatchNormalization-7; use shape inference
        net = fpdeep.load_onnx(save(model, tmp_path))
        reference = onnx_shapes(model)
        assert all(layer.out_shape == reference[layer.output] for layer in net.layers)
    assert [layer.op for layer in net.layers] == [
        Op.CONV, Op.BATCHNORM, Op.RELU, Op.MAXPOOL, Op.GLOBAL_AVGPOOL, Op.FLATTEN, Op.DROPOUT,
        Op.FC, Op.SOFTMAX]
    assert net.layers[6].attrs.ratio == pytest.approx(0.3)
