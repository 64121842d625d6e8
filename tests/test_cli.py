"""The `fpdeep` command as a user types it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import light_model, save, tiny_cnn

from fpdeep.cli import COMMANDS, main


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("fpdeep ")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help(capsys, command):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: fpdeep {command}" in out and len(out.splitlines()) > 5


def test_inspect_table(tmp_path, capsys):
    assert main(["inspect", str(save(tiny_cnn(), tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "model.onnx: input 3×8×8, 7 layers (3 compute)" in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("layer"))
    for column in ("op", "in", "out", "FP MACs", "BP MACs", "WG MACs", "params", "acts"):
        assert column in header
    total = lines[-1].split()
    # conv1 4*8*8*27 + conv2 6*2*2*36 + fc 24*4 MACs.
    assert total[:3] == ["total", "7", "layers"] and total[3] == "7.87k"


def test_inspect_json_schema(tmp_path, capsys):
    out_file = tmp_path / "w.json"
    assert main(["inspect", str(light_model("light_resnet50")), "--json", str(out_file)]) == 0
    data = json.loads(out_file.read_text())
    assert set(data) == {"model", "input", "layers", "totals"}
    assert data["model"] == "light_resnet50.onnx" and data["input"] == [3, 224, 224]
    assert set(data["layers"][0]) == {"name", "op", "inputs", "in_shape", "out_shape", "fp_macs",
                                      "bp_macs", "wg_macs", "params", "activations",
                                      "element_ops"}
    assert set(data["totals"]) == {"fp_macs", "bp_macs", "wg_macs", "params", "activations"}
    assert data["totals"]["fp_macs"] == sum(layer["fp_macs"] for layer in data["layers"])
    assert data["totals"]["params"] == 25_557_032


def test_inspect_json_to_stdout_is_pure_json(tmp_path, capsys):
    assert main(["inspect", str(save(tiny_cnn(), tmp_path)), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["layers"][0]["op"] == "Conv"


def test_bad_model_exit_status_2_and_one_message(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "missing.onnx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fpdeep: error: ") and "missing.onnx" in err
    assert "Traceback" not in err


def test_bad_input_shape_option(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["inspect", str(save(tiny_cnn(), tmp_path)), "--input-shape", "3,abc"])
    assert info.value.code == 2
    assert "--input-shape" in capsys.readouterr().err


def test_json_into_missing_folder(tmp_path, capsys):
    path = str(save(tiny_cnn(), tmp_path))
    assert main(["inspect", path, "--json", str(tmp_path / "no" / "w.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_console_script_runs_without_traceback(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\x01garbage")
    result = subprocess.run(
        [sys.executable, "-m", "fpdeep.cli", "inspect", str(bad)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "bad.onnx" in result.stderr


def hostile_names_model(tmp_path):
    """tiny_cnn with a graph name and a layer name carrying terminal escapes and markup."""
    model = tiny_cnn()
    model.graph.name = "evil\x1b[2J<b>*net*</b>"
    model.graph.node[0].name = "conv\x1b]0;owned\x07|x|"
    return save(model, tmp_path)


def test_names_from_the_model_never_reach_output_raw(tmp_path, capsys):
    path = str(hostile_names_model(tmp_path))
    out = tmp_path / "b"
    assert main(["inspect", path]) == 0
    assert main(["plan", path, "--board", "zcu102", "--boards", "2"]) == 0
    assert main(["build", path, "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 0
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr()
    for text in (printed.out, printed.err):
        assert "\x1b" not in text and "\x07" not in text
    assert "evil\\x1b[2J<b>*net*</b>" in printed.out  # shown, escaped, not interpreted
    readme = (out / "README.md").read_text()
    assert "\x1b" not in readme and "<b>" not in readme
    assert r"evil\\x1b\[2J\<b\>\*net\*\</b\>" in readme
    assert r"\|x\|" in readme  # a | would split the Markdown table's row


def test_errors_naming_a_hostile_node_are_escaped(tmp_path, capsys):
    model = tiny_cnn()
    model.graph.node[1].op_type = "Evil\x1b[2J"
    assert main(["inspect", str(save(model, tmp_path))]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "Evil" in err


def test_fpdeep_warnings_print_as_one_line(capsys):
    import warnings

    from fpdeep.cli import _warning_printer
    from fpdeep.errors import FpdeepWarning

    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _warning_printer(lambda *a, **k: seen.append(a[0]))
        warnings.warn("verilator 5.006 is outside the range\x1b[2J", FpdeepWarning, stacklevel=1)
        warnings.warn("someone else's", DeprecationWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err == "fpdeep: warning: verilator 5.006 is outside the range\\x1b[2J\n"
    assert [str(m) for m in seen] == ["someone else's"]  # other warnings print as Python does
