"""`fpdeep resize`: a graph written for one input size, rewritten for another.

The reference is the same graph written by hand for the new size (``shuffle_net(h, w)``), run
by onnx's reference evaluator on the same input."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import LIGHT_MODELS, light_model
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from fpdeep.cli import main
from fpdeep.errors import ModelError
from fpdeep.frontend import load_onnx_model
from fpdeep.frontend.resize import resize_input


def _ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def shuffle_net(height: int, width: int, *, pool: str = "AveragePool",
                fc_weights: str = "ConstantOfShape", map_head: bool = True) -> onnx.ModelProto:
    """Conv, channel shuffle (reshape, transpose, reshape), a pool over the whole map, the
    flatten and a classifier, every size in it written for ``height`` x ``width``; with
    ``map_head`` a second branch that flattens the map itself into a classifier of its own
    width."""
    rng = np.random.default_rng(0)
    conv_w = numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "cw")
    nodes = [
        helper.make_node("Conv", ["x", "cw"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Reshape", ["c", "split"], ["s"], name="split"),
        helper.make_node("Transpose", ["s"], ["t"], perm=[0, 2, 1, 3, 4], name="swap"),
        helper.make_node("Reshape", ["t", "merge"], ["m"], name="merge"),
        (helper.make_node("AveragePool", ["m"], ["p"], kernel_shape=[height, width],
                          name="pool") if pool == "AveragePool" else
         helper.make_node("GlobalAveragePool", ["m"], ["p"], name="pool")),
        helper.make_node("Reshape", ["p", "flat"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w1"], ["y1"], transB=1, name="fc1"),
        helper.make_node("Reshape", ["m", "flat_map"], ["g"], name="flatten_map"),
        helper.make_node("Gemm", ["g", "w2"], ["y2"], transB=1, name="fc2"),
    ]
    initializers = [conv_w, _ints("split", [1, 2, 2, height, width]),
                    _ints("merge", [1, 4, height, width]), _ints("flat", [1, 4]),
                    _ints("flat_map", [1, 4 * height * width])]
    w2_shape = [5, 4 * height * width]
    if fc_weights == "ConstantOfShape":
        initializers += [_ints("w1_shape", [5, 4]), _ints("w2_shape", w2_shape)]
        value = numpy_helper.from_array(np.array([0.25], np.float32))
        nodes[:0] = [helper.make_node("ConstantOfShape", ["w1_shape"], ["w1"], value=value),
                     helper.make_node("ConstantOfShape", ["w2_shape"], ["w2"], value=value)]
    else:
        initializers += [numpy_helper.from_array(np.full((5, 4), 0.25, np.float32), "w1"),
                         numpy_helper.from_array(np.full(w2_shape, 0.25, np.float32), "w2")]
    heads = ["y1", "y2"]
    if not map_head:
        nodes = [n for n in nodes if n.name not in ("flatten_map", "fc2") and n.output != ["w2"]]
        initializers = [t for t in initializers if t.name not in ("flat_map", "w2_shape", "w2")]
        heads = ["y1"]
    graph = helper.make_graph(
        nodes, "shuffle_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, height, width])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 5]) for y in heads],
        initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def outputs(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    return ReferenceEvaluator(model).run(None, {"x": x})


@pytest.mark.parametrize("size", [(8, 8), (4, 6), (16, 12)])
def test_a_resized_graph_computes_what_the_graph_written_for_that_size_does(size):
    x = np.random.default_rng(1).normal(size=(1, 3, *size)).astype(np.float32)
    resized = resize_input(shuffle_net(8, 8), *size)
    expected = outputs(shuffle_net(*size), x)
    got = outputs(resized, x)
    assert [g.shape for g in got] == [(1, 5), (1, 5)]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_only_the_whole_map_pool_the_reshapes_and_the_changed_classifier_are_rewritten():
    original = shuffle_net(8, 8)
    resized = resize_input(original, 4, 4)
    ops = {n.name: n.op_type for n in resized.graph.node if n.name}
    assert ops["pool"] == "GlobalAveragePool"
    assert [n.op_type for n in resized.graph.node] == [
        "GlobalAveragePool" if n.name == "pool" else n.op_type for n in original.graph.node]
    conv = {t.name: t for t in resized.graph.initializer}["cw"]
    assert conv == {t.name: t for t in original.graph.initializer}["cw"]
    constants = {t.name: numpy_helper.to_array(t).tolist() for t in resized.graph.initializer}
    readers = {n.name: list(n.input) for n in resized.graph.node if n.name}
    assert constants[readers["split"][1]] == [1, 2, 2, 4, 4]
    assert constants[readers["merge"][1]] == [1, 4, 4, 4]
    assert constants[readers["flatten_map"][1]] == [1, 64]
    makers = {n.output[0]: n for n in resized.graph.node}
    assert constants[makers["w1"].input[0]] == [5, 4]  # fc1 reads the pooled 4: kept
    assert constants[makers["w2"].input[0]] == [5, 64]


def test_a_pool_that_does_not_cover_the_map_stays_and_may_leave_the_map_empty():
    with pytest.raises(ModelError, match=r"node 'pool' \(AveragePool\).*empty output"):
        resize_input(_with_pool_kernel(shuffle_net(8, 8), [3, 3]), 2, 2)


def _with_pool_kernel(model: onnx.ModelProto, kernel: list[int]) -> onnx.ModelProto:
    for node in model.graph.node:
        if node.name == "pool":
            del node.attribute[:]
            node.attribute.append(helper.make_attribute("kernel_shape", kernel))
    for tensor in model.graph.initializer:  # the 8 x 8 map pooled 3 x 3: 6 x 6
        if tensor.name == "flat":
            tensor.CopyFrom(_ints("flat", [1, 4 * 36]))
        if tensor.name == "w1_shape":
            tensor.CopyFrom(_ints("w1_shape", [5, 4 * 36]))
    return model


def test_weights_that_are_data_are_refused_naming_the_layer():
    with pytest.raises(ModelError, match=r"node 'fc2' \(Gemm\) reads 64 features.*'w2' hold 256"):
        resize_input(shuffle_net(8, 8, fc_weights="data"), 4, 4, name="net.onnx")
    resize_input(shuffle_net(8, 8, fc_weights="data"), 8, 8)  # the same size: nothing to resize


def test_a_reshape_it_does_not_know_is_refused_naming_the_node():
    model = shuffle_net(8, 8)
    for tensor in model.graph.initializer:
        if tensor.name == "merge":
            tensor.CopyFrom(_ints("merge", [1, 4, 64, 1]))
    with pytest.raises(ModelError, match=r"node 'merge' \(Reshape\) reshapes"):
        resize_input(model, 4, 4)


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_every_light_zoo_graph_resizes_to_a_size_fpdeep_takes(name):
    """The smallest of 32, 64, 96 each graph's pools leave non-empty: onnx's strict shape
    inference and fpdeep's own shapes agree on the classifier and the input."""
    model = onnx.load(str(light_model(name)))
    size = {"light_bvlc_alexnet": 96, "light_zfnet512": 64, "light_inception_v1": 64}.get(name, 32)
    resized = resize_input(model, size, size, name=name)
    network = load_onnx_model(resized, f"{name}.onnx")
    assert network.layers[0].in_shape == (3, size, size)
    assert np.prod(network.layers[-1].out_shape) == 1000


def test_cli_writes_the_resized_model_and_never_clobbers(tmp_path, capsys):
    source = tmp_path / "net.onnx"
    onnx.save(shuffle_net(8, 8, map_head=False), str(source))
    target = tmp_path / "small.onnx"
    assert main(["resize", str(source), "4", "-o", str(target)]) == 0
    assert "3x4x4" in capsys.readouterr().out
    assert onnx.load(str(target)).graph.input[0].type.tensor_type.shape.dim[2].dim_value == 4
    before = target.read_bytes()
    assert main(["resize", str(source), "6,4", "-o", str(target)]) == 2
    assert "exists" in capsys.readouterr().err
    assert target.read_bytes() == before
    assert main(["resize", str(source), "6,4", "-o", str(target), "--force"]) == 0
    onnx.save(shuffle_net(8, 8, fc_weights="data"), str(source))
    assert main(["resize", str(source), "4", "-o", str(tmp_path / "none.onnx")]) == 2
    assert "node 'fc2' (Gemm)" in capsys.readouterr().err
    assert not (tmp_path / "none.onnx").exists()
