"""Bad models give one clear FpdeepError naming the file, node or option — never a traceback."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import make_model, rand, save, tensor, tiny_cnn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper

import fpdeep
from fpdeep.errors import ModelError


def load_error(path, **kwargs) -> str:
    with pytest.raises(ModelError) as info:
        fpdeep.load_onnx(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message.strip()
    return message


def test_missing_file(tmp_path):
    message = load_error(tmp_path / "nope.onnx")
    assert "nope.onnx" in message and "does not exist" in message


def test_not_an_onnx_file(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("this is a text file, not a protobuf\n" * 10)
    assert "not a readable ONNX model" in load_error(path)


def test_truncated_file(tmp_path):
    data = tiny_cnn().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    message = load_error(path)
    assert "cut.onnx" in message


def test_unsupported_op_names_op_node_and_supported_list(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Elu", ["r"], ["y"], name="act7")]
    message = load_error(save(make_model(nodes), tmp_path))
    assert "'Elu'" in message and "act7" in message
    assert "Conv" in message and "MaxPool" in message and "Gemm" in message


def test_dynamic_spatial_dimension_is_named(tmp_path):
    model = tiny_cnn()
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_param = "width"
    message = load_error(save(model, tmp_path))
    assert "'width'" in message and "--input-shape" in message and "'x'" in message


def test_input_shape_of_the_wrong_rank(tmp_path):
    message = load_error(save(tiny_cnn(), tmp_path), input_shape=(3, 8))
    assert "--input-shape 3,8" in message and "C,H,W" in message


def test_external_data_outside_the_model_folder_is_refused(tmp_path):
    inner = tmp_path / "models"
    inner.mkdir()
    model = tiny_cnn()
    onnx.save(model, str(tmp_path / "secret.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    # Point the model at a file one folder up, the way a hostile model would.
    hostile = onnx.load(str(tmp_path / "secret.onnx"), load_external_data=False)
    for init in hostile.graph.initializer:
        for entry in init.external_data:
            if entry.key == "location":
                entry.value = "../weights.bin"
    onnx.save(hostile, str(inner / "hostile.onnx"))
    message = load_error(inner / "hostile.onnx")
    assert "../weights.bin" in message and "outside the model's folder" in message


def test_missing_external_data_file(tmp_path):
    onnx.save(tiny_cnn(), str(tmp_path / "m.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="w.bin", size_threshold=0)
    (tmp_path / "w.bin").unlink()
    assert "'w.bin'" in load_error(tmp_path / "m.onnx")


def test_initializer_of_the_wrong_shape(tmp_path):
    model = tiny_cnn()
    model.graph.initializer[2].CopyFrom(tensor("w2", rand(6, 5, 3, 3)))  # needs (6, 4, 3, 3)
    message = load_error(save(model, tmp_path))
    assert "'w2'" in message and "(6, 5, 3, 3)" in message and "(6, 4, 3, 3)" in message


def test_wrong_fc_weight(tmp_path):
    model = tiny_cnn()
    model.graph.initializer[3].CopyFrom(tensor("w3", rand(4, 23)))
    assert "'w3'" in load_error(save(model, tmp_path))


def test_reordering_transpose_is_refused(tmp_path):
    nodes = [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])]
    message = load_error(save(make_model(nodes), tmp_path))
    assert "Transpose" in message and "[0, 2, 3, 1]" in message


def test_opset_out_of_range(tmp_path):
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], opset=6)
    assert "opset 6" in load_error(save(model, tmp_path))


def test_dilated_conv(tmp_path):
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], dilations=[2, 2])
    model = make_model([node], initializers=[tensor("w", rand(2, 3, 3, 3))])
    assert "dilation" in load_error(save(model, tmp_path))


def test_two_image_inputs(tmp_path):
    nodes = [helper.make_node("Add", ["x", "z"], ["y"])]
    extra = [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [1, 3, 8, 8])]
    assert "exactly one image input" in load_error(save(make_model(nodes, extra_inputs=extra),
                                                        tmp_path))


SEED_MODEL = tiny_cnn().SerializeToString()


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cuts=st.lists(st.tuples(st.integers(0, len(SEED_MODEL) - 1), st.integers(0, 255)),
                  min_size=1, max_size=8),
    truncate=st.one_of(st.none(), st.integers(0, len(SEED_MODEL))),
)
def test_mutated_model_bytes_load_or_fail_cleanly(tmp_path, cuts, truncate):
    data = bytearray(SEED_MODEL)
    for position, value in cuts:
        data[position] = value
    if truncate is not None:
        data = data[:truncate]
    path = tmp_path / "mutant.onnx"
    path.write_bytes(bytes(data))
    try:
        net = fpdeep.load_onnx(path)
    except fpdeep.FpdeepError as exc:
        assert str(exc)
        return
    assert net.layers and fpdeep.analyze(net).fp_macs >= 0
    assert np.all([d > 0 for layer in net.layers for d in layer.out_shape])


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_refused_at_load(tmp_path, value):
    model = tiny_cnn()
    w2 = rand(6, 4, 3, 3)
    w2[1, 2, 0, 1] = value
    model.graph.initializer[2].CopyFrom(tensor("w2", w2))
    message = load_error(save(model, tmp_path))
    assert "weight 'w2' holds NaN or infinite values (first at index (1, 2, 0, 1))" in message
