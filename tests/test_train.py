"""`fpdeep train`: bad input refused, exit 2, before any simulator runs and with nothing
written; the data it trains on. (Training on the simulated boards: tests/test_cosim.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import fpdeep
from fpdeep.cli import main
from fpdeep.cosim.train import DataOrder, TrainState, save_checkpoint, training_data
from fpdeep.errors import FpdeepError
from fpdeep.flow import TrainConfig
from fpdeep.resources import PACKAGE_DIR

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The digits CNN on one board, planned for batches of 8."""
    out = tmp_path_factory.mktemp("train") / "b"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "1", "--batch", "8",
                 "-o", str(out)]) == 0
    return out


def _no_simulator(monkeypatch):
    """Any attempt to build or run a simulation fails the test: the input must be refused
    first."""
    import fpdeep.cosim.hosts

    def refuse(*_a, **_kw):
        raise AssertionError("the simulator ran")

    monkeypatch.setattr(fpdeep.cosim.hosts, "run_session", refuse)
    monkeypatch.setattr(fpdeep.cosim.train, "run_session", refuse)


def _data(tmp_path, name="d.npz", **arrays):
    rng = np.random.default_rng(0)
    base = {"x": rng.uniform(0, 1, (20, 1, 8, 8)).astype(np.float32),
            "y": rng.integers(0, 10, 20)}
    np.savez(tmp_path / name, **{**base, **arrays})
    return str(tmp_path / name)


def _checkpoint(tmp_path, design: str, step: int = 3, **options):
    """A checkpoint as an interrupted run saves it after ``step`` steps, of ``design`` and
    ``options``."""
    network = fpdeep.load_onnx(DIGITS)
    weights = {k: np.asarray(v, np.float64) for k, v in network.params.items()}
    identity = {"design": design, "data": "digits", "batch": 8, "lr": 0.1, "seed": 0,
                **options}
    path = tmp_path / "ck.npz"
    save_checkpoint(path, TrainState(step, weights, weights, losses=[2.3] * step), identity,
                    per_epoch=179)
    return str(path)


def _design_of(build) -> str:
    from fpdeep.codegen.board import design_hash
    from fpdeep.cosim.run import load_build

    return f"{design_hash(load_build(build).design):#010x}"


@pytest.mark.parametrize(("args", "message"), [
    (["--data", "X3"], "x must be (B, 1, 8, 8) and y (B,); got x (20, 3, 8, 8)"),
    (["--data", "LABELS"], "label y[4] = 10 is not a class of the model; labels must lie in "
                           "0..9"),
    (["--data", "TEST"], "(x_test, y_test): x must be (B, 1, 8, 8)"),
    (["--data", "ALONE"], "holds x_test without its partner; give both x_test and y_test"),
    (["--data", "digitz"], "--data 'digitz' is neither a file nor a known data set"),
    (["--data", "digits", "--batch", "9"], "--batch 9 is above the planned batch of 8 (the "
                                           "boards' stores hold 8 images); give --batch 1 to 8"),
    (["--data", "FEW"], "has 5 training image(s), fewer than one batch of 8; give --batch 5 "
                        "or less"),
    (["--data", "digits", "--epochs", "0"], "--epochs must be a positive integer"),
    (["--data", "digits", "--host", "native", "--simulator", "icarus"],
     "--host native runs only on Verilator"),
    (["--data", "digits", "--export-onnx", "MISSING/t.onnx"], "--export-onnx"),
    (["--data", "digits", "--resume"], "--resume: there is no checkpoint"),
    (["--data", "digits", "--resume", "--checkpoint", "OTHER"],
     "was saved by another design (0x12345678; this build is"),
    (["--data", "digits", "--resume", "--checkpoint", "OPTIONS"],
     "was trained with --batch 4 --lr 0.5, this run gives --batch 8 --lr 0.1; give the "
     "checkpoint's options"),
    (["--data", "digits", "--resume", "--epochs", "1", "--checkpoint", "DONE"],
     "has trained 179 steps (1 epoch(s)); --epochs 1 is 179 steps in all: give --epochs "
     "above 1 to train on"),
    (["--data", "digits", "--resume", "--checkpoint", "JUNK"], "is not an fpdeep training "
                                                               "checkpoint"),
])
def test_bad_input_is_refused_before_the_simulator_runs(built, tmp_path, capsys, monkeypatch,
                                                        args, message):
    _no_simulator(monkeypatch)
    design = _design_of(built)
    labels = np.arange(20) % 10
    labels[4] = 10
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    files = {
        "X3": lambda: _data(tmp_path, x=np.zeros((20, 3, 8, 8), np.float32)),
        "LABELS": lambda: _data(tmp_path, y=labels),
        "TEST": lambda: _data(tmp_path, x_test=np.zeros((4, 8, 8)), y_test=np.zeros(4, int)),
        "ALONE": lambda: _data(tmp_path, x_test=np.zeros((4, 1, 8, 8), np.float32)),
        "FEW": lambda: _data(tmp_path, x=np.zeros((5, 1, 8, 8), np.float32),
                             y=np.zeros(5, int), x_test=np.zeros((4, 1, 8, 8), np.float32),
                             y_test=np.zeros(4, int)),
        "MISSING/t.onnx": lambda: str(tmp_path / "missing" / "t.onnx"),
        "OTHER": lambda: _checkpoint(tmp_path, "0x12345678"),
        "OPTIONS": lambda: _checkpoint(tmp_path, design, batch=4, lr=0.5),
        "DONE": lambda: _checkpoint(tmp_path, design, step=179),
        "JUNK": lambda: str(tmp_path / "junk.npz"),
    }
    args = [files[a]() if a in files else a for a in args]
    assert main(["train", str(built), "--epochs", "1", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1  # one line
    assert not (built / "train").exists()  # nothing written


def test_a_missing_cpp_compiler_is_named_before_the_simulator_runs(built, capsys,
                                                                   monkeypatch):
    _no_simulator(monkeypatch)
    monkeypatch.setenv("CXX", "no-such-compiler")
    assert main(["train", str(built), "--data", "digits", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert "the native host needs a C++ compiler and 'no-such-compiler' was not found" in err
    assert not (built / "train").exists()


def test_the_data_a_file_brings_and_the_order_of_each_epoch(tmp_path):
    network = fpdeep.load_onnx(DIGITS)
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0, 1, (20, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 20)
    np.savez(tmp_path / "a.npz", x=x, y=y, x_test=x[:3], y_test=y[:3])
    got = training_data(tmp_path / "a.npz", network)
    assert np.array_equal(got.x, x) and np.array_equal(got.test_y, y[:3])
    # without a test part a fifth is held out, the same fifth on every run, none trained on
    np.savez(tmp_path / "b.npz", x=x, y=y)
    one, two = (training_data(tmp_path / "b.npz", network) for _ in range(2))
    assert len(one.test_y) == 4 and len(one.y) == 16 and np.array_equal(one.x, two.x)
    rows = {r.tobytes() for r in one.x}
    assert rows.isdisjoint(r.tobytes() for r in one.test_x)
    assert rows | {r.tobytes() for r in one.test_x} == {r.tobytes() for r in x}
    # each epoch visits every image once, in an order of its own; what does not fill a
    # batch waits
    order = DataOrder(10, 3, seed=5)
    assert order.per_epoch == 3
    for epoch in range(2):
        seen = np.concatenate([order.pick(epoch * 3 + k) for k in range(3)])
        assert len(set(seen.tolist())) == 9 and set(seen.tolist()) <= set(range(10))
        assert np.array_equal(seen, np.random.default_rng([5, epoch]).permutation(10)[:9])


def test_options_are_validated():
    with pytest.raises(FpdeepError, match="--lr must be a positive number"):
        TrainConfig(data="digits", lr=-1.0)
    with pytest.raises(FpdeepError, match="--batch must be a positive integer"):
        TrainConfig(data="digits", batch=0)
