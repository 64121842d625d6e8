"""`fpdeep sim` inputs checked before any simulator runs: options, batches, build folders."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fpdeep
from fpdeep.cli import main
from fpdeep.cosim.run import initial_weights, load_build, make_batch
from fpdeep.errors import FpdeepError
from fpdeep.flow import RunConfig
from fpdeep.resources import PACKAGE_DIR

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("batch", 0, "--batch must be a positive integer"),
    ("steps", -1, "--steps must be a positive integer"),
    ("max_cycles", 0, "--max-cycles must be a positive integer"),
    ("lr", 0.0, "--lr must be a positive number"),
])
def test_options_are_validated(field, value, message):
    with pytest.raises(FpdeepError, match=message):
        RunConfig(**{field: value})


def test_link_fault_rates_at_their_limits_are_taken():
    config = RunConfig(link_ber=1e-3, link_drop=0.1)
    assert (config.link_ber, config.link_drop) == (1e-3, 0.1)


def test_batch_from_file_or_seed(tmp_path):
    network = fpdeep.load_onnx(DIGITS)
    x, y = make_batch(network, batch=3, seed=5, data=None)
    assert x.shape == (3, 1, 8, 8) and x.dtype == np.float32 and y.shape == (3,)
    x2, y2 = make_batch(network, batch=3, seed=5, data=None)
    assert np.array_equal(x, x2) and np.array_equal(y, y2)  # seeded
    np.savez(tmp_path / "ok.npz", x=x, y=y)
    xf, yf = make_batch(network, batch=99, seed=0, data=tmp_path / "ok.npz")
    assert np.array_equal(xf, x) and np.array_equal(yf, y)  # the file's batch wins
    np.savez(tmp_path / "bad.npz", x=np.zeros((2, 3, 8, 8)), y=np.zeros(2))
    with pytest.raises(FpdeepError, match=r"x must be \(B, 1, 8, 8\)"):
        make_batch(network, batch=2, seed=0, data=tmp_path / "bad.npz")
    np.savez(tmp_path / "nox.npz", y=y)
    with pytest.raises(FpdeepError, match="cannot read arrays x and y"):
        make_batch(network, batch=2, seed=0, data=tmp_path / "nox.npz")


def test_initial_weights_are_the_models_initializers():
    network = fpdeep.load_onnx(DIGITS)
    w = initial_weights(network, seed=0)
    assert w.keys() == network.params.keys()
    for name, value in network.params.items():
        assert np.array_equal(w[name], value)


def test_sim_and_report_refuse_a_folder_that_is_not_a_build(tmp_path, capsys):
    with pytest.raises(FpdeepError, match="not an fpdeep build folder"):
        load_build(tmp_path)
    assert main(["sim", str(tmp_path)]) == 2
    assert "not an fpdeep build folder" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 2


def test_report_before_and_after_a_simulation(tmp_path, capsys):
    import json

    out = tmp_path / "b"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "2", "--batch", "4",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert "not simulated yet" in capsys.readouterr().out
    result = {"match": False, "mismatches": ["step 1, layer fc, new_weight: 1 of 1280 values "
                                             "differ; first at index (0, 0): got 1, expected 2"],
              "steps": 1, "batch": 4, "cycles": [30000], "modelled_cycles": 29000,
              "cycle_error": 1000 / 29000, "images_per_s_at_clock": 4 * 250e6 / 30000,
              "loss": [2.3], "planner_ii_cycles": 907, "planner_bottleneck": "0:conv1_c0_4_fp",
              "resources": [{"board": 0, "resource": "conv1_c0_4_fp", "busy": 7500,
                             "stall": 100, "modelled": 7400, "busy_share": 0.25,
                             "window": 7651, "engine": True, "window_share": 0.9803},
                            {"board": 1, "resource": "west_rx", "busy": 22500, "stall": 0,
                             "modelled": None, "busy_share": 0.75,
                             "window": 22951, "engine": False,
                             "window_share": 0.9803}]}
    (out / "sim").mkdir(exist_ok=True)
    (out / "sim" / "result.json").write_text(json.dumps(result))
    assert main(["report", str(out), "--json", str(tmp_path / "r.json")]) == 0
    text = capsys.readouterr().out
    assert "30,000" in text and "29,000" in text and "+3.45%" in text
    assert "1 MISMATCHES" in text and "layer fc, new_weight" in text
    assert "conv1_c0_4_fp" in text and "7,500" in text and "7,400" in text
    # the busiest engine or unit: a link's receiving side is armed, not busy
    assert "busiest resource: board 0 conv1_c0_4_fp, running 25.0% of the step" in text
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["comparison"]["measured_cycles"] == [30000]
    plan = json.loads((out / "plan.json").read_text())
    t = plan["totals"]
    assert data["comparison"]["planner_batch_cycles"] == 29000
    assert data["comparison"]["ideal_pipeline_cycles"] == 3 * t["ii_cycles"] + t["latency_cycles"]
    g = plan["generated"]  # the planner's figures of the generated design, in the build
    assert g["batch_cycles"] == g["first_image_cycles"] + 3 * g["ii_cycles"]


def test_report_asks_for_a_new_simulation_of_an_old_result(tmp_path, capsys):
    import json

    out = tmp_path / "b"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 0
    (out / "sim").mkdir(exist_ok=True)
    old = {"match": True, "mismatches": [], "steps": 1, "batch": 4, "cycles": [30000],
           "modelled_cycles": 29000, "cycle_error": 0.03, "images_per_s_at_clock": 1.0,
           "loss": [2.3], "engine_phases": {"measured": 1, "modelled": 1}}
    (out / "sim" / "result.json").write_text(json.dumps(old))
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert "written by an older fpdeep" in err and "fpdeep sim" in err


@pytest.mark.parametrize(("x", "y", "message"), [
    (np.full((2, 1, 8, 8), np.nan), [1, 2], "x holds NaN or infinite values"),
    (np.full((2, 1, 8, 8), np.inf), [1, 2], "x holds NaN or infinite values"),
    (np.zeros((2, 1, 8, 8)), [1.0, 2.5], "y must hold integer class labels"),
    (np.zeros((2, 1, 8, 8)), [1, 10], r"label y\[1\] = 10 is not a class of the model; "
                                      r"labels must lie in 0..9"),
    (np.zeros((2, 1, 8, 8)), [-1, 0], r"label y\[0\] = -1"),
    (np.zeros((0, 1, 8, 8)), np.zeros(0, np.int64), "the batch is empty"),
])
def test_bad_batches_are_refused_before_any_rtl_is_built(tmp_path, x, y, message):
    network = fpdeep.load_onnx(DIGITS)
    np.savez(tmp_path / "b.npz", x=x, y=np.asarray(y))
    with pytest.raises(FpdeepError, match=message):
        make_batch(network, batch=2, seed=0, data=tmp_path / "b.npz")


@pytest.fixture
def built(tmp_path):
    out = tmp_path / "b"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 0
    return out


def _no_simulator(monkeypatch):
    """Any attempt to run the simulator fails the test: the input must be refused first."""
    import fpdeep.cosim.native
    import fpdeep.cosim.simulator

    def refuse(*_a, **_kw):
        raise AssertionError("the simulator ran")

    monkeypatch.setattr(fpdeep.cosim.simulator, "run_cocotb", refuse)
    monkeypatch.setattr(fpdeep.cosim.native, "build_native", refuse)


def test_batch_and_data_exclude_each_other(built, tmp_path, capsys, monkeypatch):
    _no_simulator(monkeypatch)
    np.savez(tmp_path / "d.npz", x=np.zeros((2, 1, 8, 8), np.float32), y=np.array([0, 1]))
    assert main(["sim", str(built), "--data", str(tmp_path / "d.npz"), "--batch", "4"]) == 2
    assert "--batch and --data exclude each other" in capsys.readouterr().err


def test_bad_labels_refused_before_the_simulator_runs(built, tmp_path, capsys, monkeypatch):
    _no_simulator(monkeypatch)
    np.savez(tmp_path / "d.npz", x=np.zeros((2, 1, 8, 8), np.float32), y=np.array([0, 12]))
    assert main(["sim", str(built), "--data", str(tmp_path / "d.npz")]) == 2
    assert "label y[1] = 12 is not a class" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--seed", "-1"], "--seed must be a non-negative integer, got -1"),
    (["--dump-weights", "no/such/folder/w.npz"], "--dump-weights 'no/such/folder/w.npz': "
                                                  "folder 'no/such/folder' does not exist"),
    (["--lr", "inf"], "--lr must be a positive number"),
    (["--link-ber", "2e-3"], "--link-ber must be a rate from 0 to 0.001, got 0.002"),
    (["--link-ber=-1e-6"], "--link-ber must be a rate from 0 to 0.001, got -1e-06"),
    (["--link-ber", "nan"], "--link-ber must be a rate from 0 to 0.001, got nan"),
    (["--link-drop", "0.2"], "--link-drop must be a rate from 0 to 0.1, got 0.2"),
    (["--link-drop=-0.01"], "--link-drop must be a rate from 0 to 0.1, got -0.01"),
])
def test_sim_options_checked_before_the_simulator_runs(built, capsys, monkeypatch, args,
                                                       message):
    _no_simulator(monkeypatch)
    monkeypatch.chdir(built.parent)
    assert main(["sim", str(built), *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("name", "content", "message"), [
    ("design.json", "{not json", "design.json' cannot be read (not valid JSON)"),
    ("design.json", "[]", "is not a version 3 fpdeep design"),
    ("design.json", '{"format": "fpdeep design", "version": 3, "boards": 3}', "is damaged"),
    ("plan.json", '{"model": 1}', "is not a plan fpdeep wrote"),
    ("sim/result.json", "\x00\x01", "result.json' cannot be read (not valid JSON)"),
])
def test_corrupt_build_files_are_named(built, capsys, monkeypatch, name, content, message):
    _no_simulator(monkeypatch)
    (built / "sim").mkdir(exist_ok=True)
    (built / name).write_text(content)
    command = "sim" if name == "design.json" else "report"
    assert main([command, str(built)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_failed_sim_leaves_no_stale_result(built, capsys, monkeypatch):
    import fpdeep.cosim.simulator

    def fail(**_kw):
        raise FpdeepError("the simulator crashed")

    monkeypatch.setattr(fpdeep.cosim.simulator, "run_cocotb", fail)
    (built / "sim" / "result.json").write_text('{"match": true}')  # from an earlier run
    assert main(["sim", str(built)]) == 2
    assert "the simulator crashed" in capsys.readouterr().err
    assert not (built / "sim" / "result.json").exists()
    assert main(["report", str(built)]) == 0
    assert "not simulated yet" in capsys.readouterr().out


# --- the host: native (compiled with the Verilated cluster) or cocotb

@pytest.mark.parametrize(("steps", "simulator", "host"), [
    (1, "verilator", "cocotb"), (2, "verilator", "native"), (5, "icarus", "cocotb")])
def test_default_host_is_native_for_several_steps_on_verilator(steps, simulator, host):
    assert RunConfig(steps=steps, simulator=simulator).host_name == host


@pytest.mark.parametrize(("fields", "message"), [
    ({"host": "native", "simulator": "icarus"},
     "--host native runs only on Verilator, not --simulator icarus; use --host cocotb"),
    ({"host": "python"}, "--host 'python' is not known; valid: native, cocotb"),
    ({"threads": 0}, "--threads must be a positive integer"),
    ({"threads": 2, "host": "cocotb"}, "--threads 2 applies to the native host only"),
])
def test_host_options_are_validated(fields, message):
    with pytest.raises(FpdeepError, match=message):
        RunConfig(**fields)


def test_native_on_icarus_is_refused_with_exit_2(built, capsys, monkeypatch):
    _no_simulator(monkeypatch)
    assert main(["sim", str(built), "--host", "native", "--simulator", "icarus"]) == 2
    assert "--host native runs only on Verilator" in capsys.readouterr().err


def test_a_missing_compiler_is_named_with_exit_2(built, capsys, monkeypatch):
    import fpdeep.cosim.simulator

    def refuse(*_a, **_kw):
        raise AssertionError("the simulator ran")

    monkeypatch.setattr(fpdeep.cosim.simulator, "run_cocotb", refuse)
    monkeypatch.setenv("CXX", "no-such-c++")
    assert main(["sim", str(built), "--host", "native"]) == 2
    err = capsys.readouterr().err
    assert "the native host needs a C++ compiler and 'no-such-c++' was not found" in err
    assert "--host cocotb" in err and "Traceback" not in err
    assert not (built / "sim" / "native").exists()


def test_native_port_bindings_name_the_cluster_tops_host_ports(tmp_path):
    import re

    from fpdeep.cosim.native import ports_header

    out = tmp_path / "b2"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "2", "-o",
                 str(out)]) == 0
    top = (out / "sim" / "cluster_top.sv").read_text()
    widths = {name: int(msb) + 1 if msb else 1 for msb, name in
              re.findall(r"^\s*(?:input|output)\s+(?:wire\s+)?logic\s*(?:\[(\d+):0\])?\s*"
                         r"(\w+),?$", top, re.M)}
    text = ports_header(load_build(out).design)
    fields = re.findall(r"^    (\w+)\* (\w+);$", text, re.M)
    bound = re.findall(r"boards.push_back\(BoardPorts\{(.*)\}\);", text)
    assert len(bound) == 2
    limits = {"CData": 8, "SData": 16, "IData": 32, "QData": 64}
    for board, line in enumerate(bound):
        names = re.findall(r"&t->(\w+)", line)
        # every host stream and CSR port of the board, and nothing of its links
        assert sorted(names) == sorted(n for n in widths if re.match(
            rf"b{board}_(s_axis_host|m_axis_host|s_axil)_", n))
        for (ctype, _), name in zip(fields, names, strict=True):
            assert limits[ctype] >= widths[name] > limits[ctype] // 2 or ctype == "CData"


# --- fpdeep infer: bad input refused before any simulator runs

@pytest.mark.parametrize(("args", "message"), [
    (["--data", "digitz"], "--data 'digitz' is neither a file nor a known data set; data "
                           "sets: digits"),
    (["--data", "digits", "--host", "native", "--simulator", "icarus"],
     "--host native runs only on Verilator"),
    (["--data", "digits", "--weights", "WEIGHTS"], "no array 'conv1.weight'; it must hold "
                                                   "every trainable parameter"),
    (["--data", "digits", "--weights", "SHAPE"], "conv1.weight is (2, 2), the model's is "
                                                 "(4, 1, 3, 3)"),
])
def test_infer_input_is_checked_before_the_simulator_runs(built, tmp_path, capsys,
                                                           monkeypatch, args, message):
    _no_simulator(monkeypatch)
    np.savez(tmp_path / "w.npz", other=np.zeros(3))
    network = fpdeep.load_onnx(DIGITS)
    np.savez(tmp_path / "s.npz", **{**network.params, "conv1.weight": np.zeros((2, 2))})
    args = [{"WEIGHTS": str(tmp_path / "w.npz"), "SHAPE": str(tmp_path / "s.npz")}.get(a, a)
            for a in args]
    assert main(["infer", str(built), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (built / "infer" / "result.json").exists()


def test_digits_test_split_is_fixed_and_fits_the_example():
    from fpdeep.datasets import DIGITS_TEST, load_dataset

    network = fpdeep.load_onnx(DIGITS)
    x, y = load_dataset("digits", network, part="test")
    train_x, train_y = load_dataset("digits", network, part="train")
    assert x.shape == (DIGITS_TEST, 1, 8, 8) and len(train_y) == 1797 - DIGITS_TEST
    assert x.dtype == np.float32 and x.min() >= 0.0 and x.max() <= 1.0
    assert set(np.unique(y)) == set(range(10))
    # the two parts are the whole set, each image in one of them
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    whole = sorted((r.tobytes(), int(c)) for r, c in zip(
        (images.reshape(-1, 1, 8, 8) / 16.0).astype(np.float32), labels, strict=True))
    parts = sorted((r.tobytes(), int(c)) for r, c in zip(
        np.concatenate([x, train_x]), np.concatenate([y, train_y]), strict=True))
    assert parts == whole
    assert np.array_equal(load_dataset("digits", network, part="test")[1], y)


def test_the_default_cycle_limit_is_four_modelled_steps_and_at_least_two_million(tmp_path):
    from types import SimpleNamespace

    from fpdeep.cosim.run import cycle_limit

    def build(planned: int, generated: int | None):
        if generated is not None:
            (tmp_path / "plan.json").write_text(json.dumps(
                {"generated": {"batch_cycles": generated}}))
        plan = SimpleNamespace(totals=SimpleNamespace(batch_cycles=planned))
        return SimpleNamespace(root=tmp_path, plan=plan)

    assert cycle_limit(build(9_000, None), None) == 2_000_000
    assert cycle_limit(build(9_000, 2_010_943), None) == 8_043_772  # the generated design's
    assert cycle_limit(build(3_000_000, 9_000), None) == 12_000_000  # the plan's, if longer
    assert cycle_limit(build(3_000_000, 9_000), 500) == 500  # --max-cycles as given
