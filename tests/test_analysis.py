"""Workload totals against an independent count: ONNX shape inference and textbook formulas."""

from __future__ import annotations

import math

import onnx
import pytest
from conftest import light_model, make_model, save
from onnx import TensorProto, helper

import fpdeep
from fpdeep.analysis import layer_macs
from fpdeep.errors import FpdeepError
from fpdeep.examples import build_vgg16
from fpdeep.ir import Op


def independent_count(model: onnx.ModelProto) -> dict[str, int]:
    """MACs and trainable parameters from ONNX shape inference and the textbook formulas.

    Conv: Co*Ho*Wo*(Ci/g)*Kh*Kw MACs, with (Co, Ci/g, Kh, Kw) the weight's inferred shape and
    Ho, Wo the output's. Gemm: the weight's element count. BP of the layer reading the image is 0.
    """
    inferred = onnx.shape_inference.infer_shapes(model)
    dims = {}
    for value in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]:
        dims[value.name] = [d.dim_value for d in value.type.tensor_type.shape.dim]
    for init in inferred.graph.initializer:
        dims[init.name] = list(init.dims)
    image = model.graph.input[0].name  # every model here lists its image input first
    counts = dict(fp=0, bp=0, params=0)
    for node in inferred.graph.node:
        if node.op_type == "Conv":
            out, w = dims[node.output[0]], dims[node.input[1]]
            macs = math.prod(out[1:]) * math.prod(w[1:])
        elif node.op_type == "Gemm":
            macs = math.prod(dims[node.input[1]])
        elif node.op_type == "BatchNormalization":
            counts["params"] += sum(math.prod(dims[n]) for n in node.input[1:3])
            continue
        else:
            continue
        counts["fp"] += macs
        counts["bp"] += 0 if node.input[0] == image else macs
        counts["params"] += sum(math.prod(dims[n]) for n in node.input[1:3] if n)
    return counts


def check_totals(net: fpdeep.ir.Network, model: onnx.ModelProto) -> fpdeep.NetworkWorkload:
    work = fpdeep.analyze(net)
    expected = independent_count(model)
    assert work.fp_macs == expected["fp"]
    assert work.wg_macs == expected["fp"]
    assert work.bp_macs == expected["bp"]
    assert work.params == expected["params"]
    return work


def test_vgg16_totals(tmp_path):
    model = build_vgg16()
    work = check_totals(fpdeep.load_onnx(save(model, tmp_path)), model)
    # Simonyan & Zisserman's VGG-16 (D): 138,357,544 parameters, 15.47 G multiply-accumulates.
    assert work.params == 138_357_544
    assert work.fp_macs == 15_470_264_320


def test_resnet50_totals():
    path = light_model("light_resnet50")
    work = check_totals(fpdeep.load_onnx(path), onnx.load(str(path)))
    # He et al.'s ResNet-50: 25.56 M parameters (torchvision's count: 25,557,032), ~4.1 G MACs.
    assert work.params == 25_557_032
    assert 4.0e9 < work.fp_macs < 4.2e9


def test_grouped_alexnet_totals():
    path = light_model("light_bvlc_alexnet")
    net = fpdeep.load_onnx(path)
    assert [layer.attrs.groups for layer in net.layers if layer.op == Op.CONV] == [1, 2, 1, 2, 2]
    work = check_totals(net, onnx.load(str(path)))
    # BVLC (CaffeNet-style) AlexNet with two groups: 60,965,224 parameters.
    assert work.params == 60_965_224


def test_bp_is_zero_only_for_the_first_compute_layer(tmp_path):
    model = build_vgg16()
    net = fpdeep.load_onnx(save(model, tmp_path))
    work = fpdeep.analyze(net)
    first, *rest = net.compute_layers
    assert work.layers[first.name].bp_macs == 0
    assert all(work.layers[layer.name].bp_macs == layer_macs(layer) for layer in rest)


def test_element_ops_and_activations_of_a_small_net(tmp_path):
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    weights = [helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 3, 3, 3]),
               helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])]
    net = fpdeep.load_onnx(save(make_model(nodes, extra_inputs=weights), tmp_path))
    work = fpdeep.analyze(net)
    conv, relu, pool = (work.layers[layer.name] for layer in net.layers)
    assert (conv.fp_macs, conv.bp_macs, conv.params) == (2 * 6 * 6 * 27, 0, 2 * 27 + 2)
    assert conv.element_ops == 2 * 6 * 6  # the bias adds
    assert (relu.activations, relu.element_ops) == (72, 72)
    assert (pool.activations, pool.element_ops) == (18, 18 * 4)


def test_non_compute_layer_has_no_macs():
    with pytest.raises(FpdeepError, match="not a compute layer"):
        layer_macs(fpdeep.load_onnx(light_model("light_squeezenet")).layers[1])
