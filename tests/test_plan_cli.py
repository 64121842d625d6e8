from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from fpdeep.cli import main


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w0"),
        numpy_helper.from_array(rng.standard_normal((10, 8 * 8 * 8)).astype(np.float32), "w1"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w1"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits,
    )
    path = tmp_path_factory.mktemp("m") / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return str(path)


def test_plan_writes_text_json_and_html(model, tmp_path, capsys):
    out = tmp_path / "plan.json"
    page = tmp_path / "plan.html"
    code = main(["plan", model, "--board", "vcu118", "--boards", "2", "--partition", "optimal",
                 "--json", str(out), "--html", str(page), "--batch", "8"])
    assert code == 0
    assert "2 x vcu118" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["strategy"] == "optimal" and len(data["boards"]) == 2
    assert "<svg" in page.read_text()


def test_plan_sweep(model, tmp_path, capsys):
    out = tmp_path / "sweep.json"
    assert main(["plan", model, "--board", "u250", "--sweep", "1..3", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "vs linear" in text
    assert [row["boards"] for row in json.loads(out.read_text())["sweep"]] == [1, 2, 3]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--board", "nosuch", "--boards", "2"], "unknown board 'nosuch'; known boards: "),
        (["--board", "vcu118", "--boards", "0"], "boards must be a positive integer"),
        (["--board", "vcu118", "--boards", "-2"], "boards must be a positive integer"),
        (["--board", "vcu118", "--boards", "2", "--link-gbps", "0"],
         "link rate must be a positive number"),
        (["--board", "vcu118", "--boards", "2", "--precision", "4"], "precision must be one of"),
        (["--board", "vcu118"], "give --boards N"),
    ],
)
def test_bad_input_exits_2_with_a_message(model, capsys, args, message):
    assert main(["plan", model, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fpdeep: error: ") and message in err


def test_malformed_board_file_exits_2(model, tmp_path, capsys):
    path = tmp_path / "board.toml"
    path.write_text('name = "x"\n[device\n')
    assert main(["plan", model, "--board-file", str(path), "--boards", "1"]) == 2
    assert f"board file {path}, line 2: malformed TOML" in capsys.readouterr().err
