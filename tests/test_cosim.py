"""Training steps on simulated generated clusters, bit for bit against the golden model.

Each case builds its own cluster top once (Verilator is the slow part) and runs 2 steps of
batch 4; the golden model runs the same steps independently in `fpdeep.cosim.run.compare`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import fpdeep
from fpdeep.codegen.program import instruction_cycles
from fpdeep.cosim.run import load_build, simulate
from fpdeep.cosim.simulator import simulator_available
from fpdeep.errors import FpdeepError
from fpdeep.flow import RunConfig, write_build
from fpdeep.planning.partition import chain_model
from fpdeep.planning.planner import evaluate
from fpdeep.resources import PACKAGE_DIR
from fpdeep.schedule.tasks import durations, replay, schedule

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
pytestmark = [
    pytest.mark.sim,
    pytest.mark.slow,
    pytest.mark.skipif(not simulator_available("verilator"), reason="Verilator not found"),
]
FIELDS = {"match", "mismatches", "steps", "batch", "cycles", "modelled_cycles", "cycle_error",
          "images_per_s_at_clock", "loss"}


def _digits_plan(boards: int, cuts: tuple[int, ...] | None = None, batch: int = 4):
    network = fpdeep.load_onnx(DIGITS)
    cluster = fpdeep.make_cluster(board="zcu102", boards=boards)
    if cuts is None:
        return network, fpdeep.plan(network, cluster, batch=batch)
    chain = chain_model(network, precision=16, pipelining="image")
    return network, evaluate(chain, cluster, cuts, strategy="fpdeep", batch=batch)


def _slices(plan) -> list[list[tuple[str, int, int]]]:
    return [[(s.slice.layer, s.slice.lo, s.slice.hi) for s in b.slices] for b in plan.boards]


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt during the test, as in a terminal: a shell without job
    control starts background commands (`make test &`) with SIGINT ignored, which Python then
    keeps; the fixture puts Python's own handler back for the test, and restores what was."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="module")
def one_board(digits_one_board):
    return digits_one_board  # tests/test_runtime.py runs the runtime on the same build


def _check(result: dict, out: Path) -> None:
    assert result.keys() >= FIELDS
    assert result["mismatches"] == [] and result["match"] is True
    assert abs(result["cycle_error"]) < 0.01, result
    assert json.loads((out / "sim" / "result.json").read_text())["match"] is True


@pytest.mark.xdist_group("digits1")
def test_one_board_two_steps_bit_exact(one_board, tmp_path):
    dump = tmp_path / "w.npz"
    result = simulate(one_board, RunConfig(batch=4, steps=2, dump_weights=dump))
    _check(result, one_board)
    assert result["steps"] == 2 and result["batch"] == 4 and len(result["loss"]) == 2
    # the dumped weights are the golden model's after two steps
    network = fpdeep.load_onnx(DIGITS)
    from fpdeep.cosim.run import initial_weights, make_batch

    x, y = make_batch(network, batch=4, seed=0, data=None)
    w = initial_weights(network, seed=0)
    for _ in range(2):
        w = fpdeep.golden.train_step(network, w, x, y, lr=0.05).weights
    with np.load(dump) as got:
        assert sorted(got.files) == sorted(network.params)
        for name in got.files:
            assert np.array_equal(got[name].astype(np.float64), w[name]), name


@pytest.mark.xdist_group("digits1")
def test_native_and_cocotb_hosts_read_back_the_same_words(one_board):
    """The same session on both hosts (bad packets first, then two steps): bit-exact with the
    golden model, and every packet's answer and register read identical, the boards' cycle
    counters and the error codes the CSR shows after each bad packet included."""
    from fpdeep.cosim.script import read_outputs, read_script

    run = one_board / "sim" / "run"
    seen = {}
    for host in ("cocotb", "native"):
        result = simulate(one_board, RunConfig(batch=2, steps=2, host=host),
                          host_checks={"faults": True})
        _check(result, one_board)
        assert result["host"] == host and result["cycles_per_s"] > 0
        assert [(c["status"], c["csr"]) for c in result["host_checks"]] == [
            (None, 4), (1, 1), (2, 2), (3, 3)]  # not loaded; opcode, length, target
        ops = read_script(run / "script.bin").ops
        outputs = read_outputs(run / "outputs.bin")
        assert outputs.failed is None
        answers = outputs.answers
        # up to the failure section, which runs only after a failed step; of a POLL its last
        # value and outcome (when it ended is the host's own timing)
        end = next(k for k, op in enumerate(ops) if op.name == "FAIL")
        # the progress file: the last step, and the cycle the host had reached then
        final = json.loads((run / "progress.json").read_text())
        last_poll = max(answers[k][2] for k, op in enumerate(ops[:end]) if op.name == "POLL")
        assert final.pop("cycle") >= last_poll
        assert final == {"step": 1, "steps": 2, "task": 1, "tasks": 1}
        seen[host] = (result["cycles"], [
            (op.name, answers[k][:2] if op.name == "POLL" else answers[k])
            for k, op in enumerate(ops[:end]) if op.name in ("EXCHANGE", "CSR_READ", "POLL")])
    assert seen["native"][0] == seen["cocotb"][0]
    assert len(seen["native"][1]) == len(seen["cocotb"][1]) > 100
    for k, (native, cocotb) in enumerate(zip(seen["native"][1], seen["cocotb"][1], strict=True)):
        assert native == cocotb, f"operation {k}: {native} != {cocotb}"
    # the native model is built once per content: a second run starts from the cache
    builds = list((one_board / "sim" / "native").iterdir())
    simulate(one_board, RunConfig(batch=2, steps=2, host="native"))
    assert list((one_board / "sim" / "native").iterdir()) == builds


@pytest.mark.xdist_group("digits1")
def test_infer_predicts_as_the_golden_forward_pass_with_trained_weights(one_board, tmp_path):
    from sklearn.datasets import load_digits

    from fpdeep.cli import main

    images, labels = load_digits(return_X_y=True)
    x = (images.reshape(-1, 1, 8, 8) / 16.0).astype(np.float32)
    network = fpdeep.load_onnx(DIGITS)
    weights = {k: np.asarray(v, np.float64) for k, v in network.params.items()}
    for k in range(60):  # float training from the model's initializers: well above chance
        idx = np.arange(k * 24, k * 24 + 24) % 1500
        weights = fpdeep.golden.train_step(network, weights, x[idx], labels[idx], lr=0.1,
                                           numerics="float").weights
    weights = {k: v.astype(np.float32) for k, v in weights.items()}
    np.savez(tmp_path / "w.npz", **weights)
    # 10 held-out images: 3 passes of the planned batch of 4, the last filled up
    np.savez(tmp_path / "d.npz", x=x[1500:1510], y=labels[1500:1510])
    out = tmp_path / "pred.npz"
    assert main(["infer", str(one_board), "--data", str(tmp_path / "d.npz"), "--weights",
                 str(tmp_path / "w.npz"), "--predictions", str(out)]) == 0
    result = json.loads((one_board / "infer" / "result.json").read_text())
    assert result["match"] is True and result["mismatches"] == []
    assert result["passes"] == 3 and result["images"] == 10 and result["host"] == "native"
    want = fpdeep.golden.infer(network, {k: v.astype(np.float64) for k, v in weights.items()},
                               x[1500:1510])
    with np.load(out) as got:
        assert np.array_equal(got["pred"], want.argmax(axis=1))
        assert np.array_equal(got["logits"], want.astype(np.float32))
    assert result["accuracy"] == np.mean(want.argmax(axis=1) == labels[1500:1510]) >= 0.7


def _golden_training(network, x, y, *, steps: int, per_epoch: int, batch: int, lr: float,
                     seed: int = 0) -> tuple[dict, dict]:
    """The golden model's and float training's weights after ``steps`` steps from the
    model's initializers, on the order docs/train.md gives: epoch e visits the images in
    numpy's permutation seeded with (seed, e), ``batch`` at a time."""
    fixed = floated = {k: np.asarray(v, np.float64) for k, v in network.params.items()}
    for step in range(steps):
        epoch, k = divmod(step, per_epoch)
        pick = np.random.default_rng([seed, epoch]).permutation(len(y))[k * batch:][:batch]
        fixed = fpdeep.golden.train_step(network, fixed, x[pick], y[pick], lr=lr,
                                         step=step).weights
        floated = fpdeep.golden.train_step(network, floated, x[pick], y[pick], lr=lr,
                                           numerics="float").weights
    return fixed, floated


def _accuracy(network, weights, x, y, **numerics) -> float:
    return float(np.mean(fpdeep.golden.infer(network, weights, x, **numerics).argmax(1) == y))


@pytest.mark.xdist_group("digits1")
def test_training_is_checked_every_step_and_resumes_after_ctrl_c(one_board, tmp_path,
                                                                   monkeypatch, ctrl_c_raises):
    """3 epochs of 3 steps of 4 images, Ctrl-C after the second step, then --resume: the
    weights trained are the golden model's after the same 9 steps, the test accuracy on the
    boards the golden model's, float training's that of numpy float64 training."""
    import os
    import signal

    import onnx
    from onnx import numpy_helper
    from sklearn.datasets import load_digits

    from fpdeep.cli import main
    from fpdeep.cosim import train

    images, labels = load_digits(return_X_y=True)
    x = (images.reshape(-1, 1, 8, 8) / 16.0).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x[:12], y=labels[:12], x_test=x[1500:1520],
             y_test=labels[1500:1520])
    args = ["train", str(one_board), "--data", str(tmp_path / "d.npz"), "--epochs", "3",
            "--lr", "0.2"]
    check = train._Follower._check

    def interrupted(follower, k):  # Ctrl-C once the boards' second step is checked
        check(follower, k)
        if follower.state.step == 2:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(train._Follower, "_check", interrupted)
    # host sessions of three steps: the Ctrl-C lands before the host can have run all nine
    monkeypatch.setattr(train, "session_steps", lambda network, batch: 3)
    assert main(args) == 130
    work = one_board / "train"
    assert (work / "checkpoint.npz").is_file() and not (work / "result.json").exists()
    monkeypatch.undo()
    onnx_file = tmp_path / "trained.onnx"
    assert main([*args, "--resume", "--export-onnx", str(onnx_file)]) == 0
    result = json.loads((work / "result.json").read_text())
    assert result["match"] is True and result["mismatches"] == []
    assert result["steps"] == 9 and 2 <= result["resumed_from_step"] < 9
    assert result["steps_this_run"] == 9 - result["resumed_from_step"]
    assert result["cycles_per_s"] > 0 and result["host"] == "native"
    network = fpdeep.load_onnx(DIGITS)
    fixed, floated = _golden_training(network, x[:12], labels[:12], steps=9, per_epoch=3,
                                      batch=4, lr=0.2)
    with np.load(work / "weights.npz") as got:
        assert sorted(got.files) == sorted(network.params)
        for name in got.files:
            assert np.array_equal(got[name].astype(np.float64), fixed[name]), name
    exported = {t.name: numpy_helper.to_array(t) for t in onnx.load(onnx_file).graph.initializer}
    for name, value in fixed.items():
        assert np.array_equal(exported[name].astype(np.float64), value), name
    tx, ty = x[1500:1520], labels[1500:1520]
    assert result["hw_accuracy"] == result["golden_accuracy"] == _accuracy(network, fixed,
                                                                           tx, ty)
    assert result["float_accuracy"] == _accuracy(network, floated, tx, ty, numerics="float")
    assert result["test_images"] == 20 and len(result["epoch_loss"]) == 3


def test_momentum_training_resumes_with_the_velocities_on_the_boards(tmp_path, monkeypatch,
                                                                     ctrl_c_raises):
    """`train` on a build with momentum and weight decay: Ctrl-C after the first step, then
    --resume, whose new host session loads the checkpoint's velocities into the boards' stores
    (not zeros); the weights after 4 steps are the golden model's, chained step by step with
    its momentum buffers."""
    import os
    import signal

    from sklearn.datasets import load_digits

    from fpdeep.cli import main
    from fpdeep.cosim import train

    out = tmp_path / "momentum"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "1", "--batch", "4",
                 "--momentum", "0.9", "--weight-decay", "0.001", "-o", str(out)]) == 0
    images, labels = load_digits(return_X_y=True)
    x = (images.reshape(-1, 1, 8, 8) / 16.0).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x[:8], y=labels[:8], x_test=x[1500:1504],
             y_test=labels[1500:1504])
    args = ["train", str(out), "--data", str(tmp_path / "d.npz"), "--epochs", "2", "--lr",
            "0.1"]
    check = train._Follower._check

    def interrupted(follower, k):
        check(follower, k)
        if follower.state.step == 1:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(train._Follower, "_check", interrupted)
    # host sessions of two steps: the Ctrl-C lands before the host can have run all four (a
    # host that answers its steps faster than they are checked would otherwise finish first)
    monkeypatch.setattr(train, "session_steps", lambda network, batch: 2)
    assert main(args) == 130
    monkeypatch.undo()
    assert main([*args, "--resume"]) == 0
    result = json.loads((out / "train" / "result.json").read_text())
    assert result["match"] is True and result["steps"] == 4
    assert 1 <= result["resumed_from_step"] < 4
    network = fpdeep.load_onnx(DIGITS)
    weights = {k: np.asarray(v, np.float64) for k, v in network.params.items()}
    state: dict = {}
    for step in range(4):
        epoch, k = divmod(step, 2)
        pick = np.random.default_rng([0, epoch]).permutation(8)[k * 4:][:4]
        res = fpdeep.golden.train_step(network, weights, x[:8][pick], labels[:8][pick], lr=0.1,
                                       momentum=0.9, weight_decay=0.001, state=state,
                                       step=step)
        weights, state = res.weights, res.state
    with np.load(out / "train" / "weights.npz") as got:
        for name in network.params:
            assert np.array_equal(got[name].astype(np.float64), weights[name]), name


@pytest.mark.full
def test_the_demo_network_trains_on_two_boards_as_well_as_float(tmp_path):
    """The demo network on 2 boards, 3 epochs of the digits (132 steps of 32): every step
    bit-exact, the weights the golden model's, test accuracy on the boards within 2 points
    of float training's."""
    from sklearn.datasets import load_digits

    from fpdeep.cli import main

    out = tmp_path / "demo"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "2", "-o",
                 str(out)]) == 0
    assert main(["train", str(out), "--data", "digits", "--epochs", "3"]) == 0
    result = json.loads((out / "train" / "result.json").read_text())
    assert result["match"] is True and result["steps"] == 3 * 44 and result["batch"] == 32
    images, labels = load_digits(return_X_y=True)
    x = (images.reshape(-1, 1, 8, 8) / 16.0).astype(np.float32)
    order = np.random.default_rng(0).permutation(len(x))  # the digits split: 360 for testing
    test, train = order[:360], order[360:]
    network = fpdeep.load_onnx(DIGITS)
    fixed, floated = _golden_training(network, x[train], labels[train], steps=132,
                                      per_epoch=44, batch=32, lr=0.1)
    with np.load(out / "train" / "weights.npz") as got:
        for name in network.params:
            assert np.array_equal(got[name].astype(np.float64), fixed[name]), name
    hw = result["hw_accuracy"]
    assert hw == result["golden_accuracy"] == _accuracy(network, fixed, x[test], labels[test])
    assert result["float_accuracy"] == _accuracy(network, floated, x[test], labels[test],
                                                 numerics="float")
    assert abs(hw - result["float_accuracy"]) <= 0.02 and hw > 0.8
    print(f"demo training: {result}")


@pytest.mark.parametrize("case", ["fpdeep-2", "cuts-3"])
def test_digits_on_several_boards_bit_exact(case, tmp_path):
    # the 2-board case trains with MSE (the loss unit's other mode), the others with softmax CE
    loss = "mse" if case == "fpdeep-2" else "softmax_ce"
    if case == "fpdeep-2":
        network, plan = _digits_plan(2)
        assert _slices(plan)[0][-1][0] == _slices(plan)[1][0][0] == "conv2"  # cut inside conv2
    else:
        # conv1 | conv2[0:4] | conv2[4:8] fc: a cut between layers and one inside a layer
        network, plan = _digits_plan(3, cuts=(0, 4, 8, 22))
        assert _slices(plan) == [[("conv1", 0, 4)], [("conv2", 0, 4)],
                                 [("conv2", 4, 8), ("fc", 0, 10)]]
    out = tmp_path / case
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()}, loss=loss)
    x = np.random.default_rng(7).uniform(0, 1, (4, 1, 8, 8)).astype(np.float32)
    np.savez(tmp_path / "batch.npz", x=x, y=np.array([3, 1, 4, 1], dtype=np.int64))
    result = simulate(out, RunConfig(steps=2, lr=0.1, data=tmp_path / "batch.npz"))
    _check(result, out)


@pytest.mark.parametrize(("ber", "steps", "frame"), [(1e-4, 1, 12), (1e-3, 2, 3)])
def test_three_boards_stay_bit_exact_over_links_with_bit_errors(tmp_path, ber, steps, frame):
    """Bit errors on every link (issue 14): the links replay the spoilt frames, the CSR
    counters say so, and the step is still bit-exact, only longer. The host shortens the
    128-bit links' data frames (CSR LINK_FRAME) to the length that carries the most payload
    at that rate: at 1e-3 a 64-beat frame would almost never arrive whole. One step on the
    cocotb host, two on the native one."""
    network, plan = _digits_plan(3)
    out = tmp_path / "faulty"
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()})
    result = simulate(out, RunConfig(batch=4, steps=steps, link_ber=ber))
    assert result["link_frame_beats"] == frame
    assert result["mismatches"] == [] and result["match"] is True
    assert sorted(result["links"]) == ["0>1", "1>0", "1>2", "2>1"]
    assert result["link_replays"] == sum(v["tx_replays"] for v in result["links"].values()) > 0
    assert result["link_crc_errors"] == sum(v["rx_crc_errors"]
                                            for v in result["links"].values()) > 0
    # every data frame arrived once in the end, however often it was sent
    for counts in result["links"].values():
        assert counts["tx_frames"] == counts["rx_frames"] + counts["tx_replays"]
    assert result["cycle_error"] > 0  # the replays cost time the model does not plan for
    saved = json.loads((out / "sim" / "result.json").read_text())
    assert (saved["link_replays"], saved["link_ber"]) == (result["link_replays"], ber)


def test_residual_skip_across_boards_bit_exact(tmp_path):
    from golden_nets import residual_cnn

    network, _ = residual_cnn(tmp_path / "res.onnx")
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=3), batch=2)
    slices = _slices(plan)
    first_conv = network.compute_layers[0].name
    add = next(layer for layer in network.layers if layer.op is fpdeep.ir.Op.ADD)
    last_conv = network.producer_of(add.inputs[0]).name
    # the skip starts on board 0 and the Add's other input is finished on a later board
    assert any(s[0] == first_conv for s in slices[0])
    assert not any(s[0] == last_conv for s in slices[0])
    out = tmp_path / "res"
    files = {"model.onnx": (tmp_path / "res.onnx").read_bytes()}
    write_build(network, plan, out, model_files=files)
    _check(simulate(out, RunConfig(batch=2, steps=2)), out)


def test_a_link_that_loses_every_frame_is_reported_stuck_by_name(tmp_path, monkeypatch):
    """A link channel that drops (almost) every frame, beyond what `--link-drop` lets a user
    ask for: the sending link end replays until it has made no progress for its stuck
    time, the board stops the step with the link error, and `sim` names the link instead of
    hanging until the cycle limit."""
    from fpdeep import flow

    network, plan = _digits_plan(2)
    out = tmp_path / "stuck"
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()})
    monkeypatch.setattr(flow, "MAX_LINK_DROP", 1.0)
    with pytest.raises(FpdeepError, match=r"board 0: .*the link to the east \(board 0 -> "
                                          r"board 1\) is stuck"):
        simulate(out, RunConfig(batch=4, steps=1, link_drop=0.999999))


def _train_two_steps(net, path: Path, *, boards: int = 1, board="zcu102",
                     infer: bool = True, steps: int = 2, bn: str = "train",
                     **sgd: float) -> dict:
    """The ONNX net ``net`` (tests/golden_nets.OnnxNet) planned on ``boards`` boards at batch 2,
    built in ``path`` (``bn`` as --bn; ``sgd``: momentum, weight_decay) and trained ``steps``
    steps (then a forward-only pass), checked."""
    from fpdeep.ops.batchnorm import with_batchnorm

    onnx_file = path.with_suffix(".onnx")
    network = with_batchnorm(net.load(onnx_file)[0], bn)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board=board, boards=boards), batch=2)
    write_build(network, plan, path, model_files={"model.onnx": onnx_file.read_bytes()}, **sgd)
    result = simulate(path, RunConfig(batch=2, steps=steps), host_checks={"infer": infer})
    _check(result, path)
    return result


def test_momentum_and_weight_decay_train_bit_exact_across_boards(tmp_path):
    """SGD with momentum 0.9 and weight decay 0.01 on two boards: each board's SGD unit keeps
    a velocity per weight in its store; three steps, so that the second and third start from
    the velocities the boards kept. The velocities read back are checked too."""
    from golden_nets import OnnxNet

    net = OnnxNet((1, 6, 6), seed=9)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.conv(6, 3)
    net.relu()
    net.flatten()
    net.fc(5)
    path = tmp_path / "momentum"
    _train_two_steps(net, path, boards=2, steps=3, momentum=0.9, weight_decay=0.01)
    design = json.loads((path / "design.json").read_text())
    assert (design["momentum"], design["weight_decay"]) == (0.9, 0.01)
    assert "fpdeep_sgd_momentum" in (path / "rtl" / "board_1" / "fpdeep_board_1.sv").read_text()


def test_weights_gradients_and_stash_off_chip_train_bit_exact(tmp_path):
    """Issue 14's off-chip memory: every board keeps its weights, gradient sums, SGD
    velocities and stash in DRAM (`--off-chip weights,grads,stash`), moved over its AXI4
    master in bursts by the memory readers and writers, the host's loads and read-backs
    too; the simulated memory has the ZCU102 board file's latency and bandwidth. Three steps
    on the native host and one on the cocotb host are bit-exact, the cycle model within 2 %."""
    from fpdeep.cli import main

    out = tmp_path / "offchip"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "2", "--batch", "4",
                 "--off-chip", "weights,grads,stash", "--momentum", "0.9", "--weight-decay",
                 "0.01", "-o", str(out)]) == 0
    design = json.loads((out / "design.json").read_text())
    for b in design["boards"]:
        assert b["off_chip"] == ["weights", "grads", "stash"] and b["dram_bits"] == 256
        top = (out / "rtl" / f"board_{b['index']}" / f"fpdeep_board_{b['index']}.sv").read_text()
        assert "fpdeep_dram_port" in top and "w:" not in re.sub(r"//.*", "", top)
    results = [simulate(out, RunConfig(steps=3, lr=0.1, host="native")),
               simulate(out, RunConfig(steps=1, lr=0.1, host="cocotb"))]
    for result in results:
        assert result["match"] is True and result["mismatches"] == []
        assert abs(result["cycle_error"]) < 0.02, result



def test_a_board_with_everything_off_chip_keeps_one_store_bank(tmp_path):
    """A board whose every item is off chip (here the first, a conv and its ReLU) still has a
    tensor store of one bank, the zero word: a store of none was a zero-width parameter that
    no tool elaborates. Two steps on the native host are bit-exact."""
    from golden_nets import OnnxNet

    from fpdeep.cli import main

    net = OnnxNet((3, 8, 8), seed=5)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.flatten()
    net.fc(10)
    onnx_file = tmp_path / "net.onnx"
    net.load(onnx_file)
    out = tmp_path / "offchip"
    assert main(["build", str(onnx_file), "--board", "zcu102", "--boards", "2", "--batch", "2",
                 "--off-chip", "weights,grads,stash", "-o", str(out)]) == 0
    top = (out / "rtl" / "board_0" / "fpdeep_board_0.sv").read_text()
    assert re.findall(r"\.NB\((\d+)\)", top) == ["1"] * 3  # host, store, controller
    assert not re.search(r"\b0'h", top)  # no zero-width literal
    result = simulate(out, RunConfig(batch=2, steps=2, lr=0.1, host="native"))
    assert result["match"] is True and result["mismatches"] == []
    assert abs(result["cycle_error"]) < 0.02, result

def _conv_bn_net():
    from golden_nets import OnnxNet

    net = OnnxNet((2, 6, 6), seed=11)
    net.conv(4, 3, pads=(1, 1, 1, 1), bias=False)
    net.batchnorm()
    net.relu()
    net.conv(6, 3)
    net.batchnorm()
    net.relu()
    net.flatten()
    net.fc(5)
    return net


def test_frozen_batchnorm_trains_bit_exact(tmp_path):
    """conv-BN-ReLU twice with --bn frozen: each BatchNormalization is the per-channel affine
    of its running statistics on the boards' fpdeep_bn_frozen, whose constants the host
    computes from the model's statistics and loads; the convolutions train around them."""
    path = tmp_path / "bn"
    _train_two_steps(_conv_bn_net(), path, bn="frozen")
    info = json.loads((path / "design.json").read_text())["build"]
    assert info["bn"] == "frozen"


@pytest.mark.parametrize(("boards", "sgd"), [(1, {}), (2, {"momentum": 0.9,
                                                          "weight_decay": 0.01})])
def test_batchnorm_on_batch_statistics_trains_bit_exact(tmp_path, boards, sgd):
    """conv-BN-ReLU twice, each BatchNormalization trained on the batch's statistics by
    fpdeep_bn_train: the batch's mean and variance (its rsqrt and the running statistics'
    update) before any image is normalised, the batch's gradient sums before any input
    error; gamma and beta updated by the SGD unit (with momentum and weight decay on two
    boards). Outputs, input errors, gradient sums, new gamma, beta, velocities and running
    statistics are bit-exact over two steps, then the forward-only pass."""
    path = tmp_path / f"bnt{boards}"
    _train_two_steps(_conv_bn_net(), path, boards=boards, **sgd)
    tops = "".join(p.read_text() for p in (path / "rtl").glob("board_*/fpdeep_board_*.sv"))
    assert tops.count("fpdeep_bn_train #(") == 2 and "fpdeep_bn_frozen #(" not in tops


@pytest.mark.full
def test_a_small_cifar_resnet_trains_bit_exact_on_two_boards(tmp_path):
    """Issue 18's ResNet case: a CIFAR-style ResNet at reduced size (16x16x3, a stage each of
    8, 16 and 32 channels, projection shortcuts) with every BatchNormalization trained on
    batch statistics, over two boards with momentum 0.9 and weight decay: two steps and the
    forward-only pass bit-exact, the cycle model within 1 %."""
    from golden_nets import small_cifar_resnet

    _train_two_steps(small_cifar_resnet(), tmp_path / "resnet", boards=2, momentum=0.9,
                     weight_decay=0.01)


@pytest.mark.parametrize("boards", [1, 2])
def test_an_lrn_layer_trains_bit_exact(tmp_path, boards):
    """conv-ReLU-LRN-pool-FC: the LRN layer on the boards' fpdeep_lrn, forward and (from
    the stashed input and the output's error) backward; AlexNet's constants but a bias of 2."""
    from golden_nets import OnnxNet

    net = OnnxNet((2, 6, 6), seed=5)
    net.conv(6, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.lrn(5, alpha=1e-4, beta=0.75, bias=2.0)
    net.maxpool(2, 2)
    net.flatten()
    net.fc(5)
    path = tmp_path / f"lrn{boards}"
    _train_two_steps(net, path, boards=boards)
    assert "fpdeep_lrn #(" in (path / "rtl" / "board_0" / "fpdeep_board_0.sv").read_text() \
        or "fpdeep_lrn #(" in (path / "rtl" / "board_1" / "fpdeep_board_1.sv").read_text()


@pytest.mark.parametrize(("boards", "sgd"), [(1, {}), (2, {"momentum": 0.9,
                                                          "weight_decay": 0.01})])
def test_per_channel_scale_and_bias_train_bit_exact(tmp_path, boards, sgd):
    """A per-channel Scale of the image (no input error, only its gradient), conv, a
    per-channel Scale (Mul by a (C, 1, 1) initializer), a per-channel Bias, ReLU, a pooling, a
    single-value Scale and FC: fpdeep_affine runs each Scale and Bias and sums their gradients
    into the store image by image; the board's SGD unit updates them with the weights (with
    momentum and weight decay on two boards, velocities kept and read back); the new values,
    sums and velocities are checked."""
    from golden_nets import OnnxNet

    net = OnnxNet((2, 6, 6), seed=13)
    net.channel_constant("Mul")
    net.conv(4, 3, pads=(1, 1, 1, 1), bias=False)
    net.channel_constant("Mul")
    net.channel_constant("Add")
    net.relu()
    net.maxpool(2, 2)
    net.channel_constant("Mul", per_channel=False)
    net.flatten()
    net.fc(5)
    path = tmp_path / f"affine{boards}"
    _train_two_steps(net, path, boards=boards, **sgd)
    assert "fpdeep_affine" in (path / "rtl" / f"board_{boards - 1}" /
                               f"fpdeep_board_{boards - 1}.sv").read_text()
    if boards == 1:
        _train_keeps_every_parameter(path, classes=5)


def _train_keeps_every_parameter(path: Path, *, classes: int) -> None:
    """`fpdeep train` (cocotb host: the model just built) for one epoch of two steps on the
    build in ``path``: the weights it saves are the golden model's after the same steps, every
    trained parameter (Scale and Bias too), not only the Conv/FC weights."""
    from fpdeep.cli import main

    network = fpdeep.load_onnx(path.with_suffix(".onnx"))
    rng = np.random.default_rng(3)
    shape = tuple(network.input_shape)
    x = rng.uniform(0, 1, (6, *shape)).astype(np.float32)
    y = rng.integers(0, classes, 6)
    np.savez(path.parent / "d.npz", x=x[:4], y=y[:4], x_test=x[4:], y_test=y[4:])
    assert main(["train", str(path), "--data", str(path.parent / "d.npz"), "--epochs", "1",
                 "--lr", "0.1", "--host", "cocotb"]) == 0
    result = json.loads((path / "train" / "result.json").read_text())
    assert result["match"] is True and result["steps"] == 2
    weights = {k: np.asarray(v, np.float64) for k, v in network.params.items()}
    for k in range(2):
        pick = np.random.default_rng([0, 0]).permutation(4)[k * 2:][:2]
        weights = fpdeep.golden.train_step(network, weights, x[:4][pick], y[:4][pick],
                                           lr=0.1).weights
    with np.load(path / "train" / "weights.npz") as got:
        assert set(got.files) == set(network.params)
        for name in network.params:
            assert np.array_equal(got[name].astype(np.float64), weights[name]), name


def test_a_dropout_layer_trains_bit_exact_and_is_off_in_the_forward_only_pass(tmp_path):
    """The Dropout unit draws the golden model's masks: per image (the controller's seed term)
    and per step (the host's DRAW_STEP register), so two steps on the same batch drop
    different elements; the forward-only pass passes everything through."""
    from golden_nets import OnnxNet

    net = OnnxNet((1, 6, 6), seed=4)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.inits["ratio"] = np.array(0.3)
    net.node("Dropout", [net.last, "ratio"], net.shape[net.last])
    net.flatten()
    net.fc(5)
    assert _train_two_steps(net, tmp_path / "drop")["inference_cycles"] > 0


def test_a_squeezenet_fire_module_trains_bit_exact_on_two_boards(tmp_path):
    """Concat: squeeze 1x1, expand 1x1 and 3x3 side by side, concatenated along channels."""
    from golden_nets import OnnxNet

    net = OnnxNet((2, 6, 6), seed=6)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.conv(2, 1)
    squeeze = net.relu()
    net.conv(3, 1, src=squeeze)
    a = net.relu()
    net.conv(3, 3, pads=(1, 1, 1, 1), src=squeeze)
    b = net.relu()
    net.node("Concat", [a, b], (6, 6, 6), axis=1)
    net.flatten()
    net.fc(5)
    _train_two_steps(net, tmp_path / "fire", boards=2)


def test_an_inception_block_whose_input_has_four_readers_trains_bit_exact(tmp_path):
    """A tensor read by four layers (Inception's 1x1, 3x3, 5x5 and max-pooled branches): its error
    is the exact sum of four contributions, saturated once, by three passes of a partial-sum
    unit; on two boards, so some contributions arrive over the link."""
    from golden_nets import OnnxNet

    net = OnnxNet((2, 6, 6), seed=8)
    net.conv(3, 3, pads=(1, 1, 1, 1))
    fork = net.relu()
    branches = [net.relu(net.conv(2, 1, src=fork)),
                net.relu(net.conv(2, 3, pads=(1, 1, 1, 1), src=fork)),
                net.relu(net.conv(2, 5, pads=(2, 2, 2, 2), src=fork)),
                net.relu(net.conv(2, 1, src=net.maxpool(3, 1, pads=(1, 1, 1, 1), src=fork)))]
    net.node("Concat", branches, (8, 6, 6), axis=1)
    net.flatten()
    net.fc(5)
    network, _ = net.load(tmp_path / "inception.onnx")
    assert len(network.tensors[fork].consumers) == 4
    result = _train_two_steps(net, tmp_path / "inception", boards=2)
    assert abs(result["cycle_error"]) < 0.01


@pytest.mark.parametrize("off_chip", ["", "stash"])
def test_pooling_layers_run_in_bands_of_channels_train_bit_exact(tmp_path, monkeypatch,
                                                                 off_chip):
    """A pooling engine takes a layer larger than `BAND_WORDS` a band of whole channels per
    run (here the limit is lowered to 20 words): an overlapping max-pool in six bands of one
    channel, whose backward pass sums errors, and an average pool in two bands of two; the
    stash on chip, and off chip, where each band's words are a burst of their own. Two steps
    and a forward-only pass bit-exact; the cycle model within 1 % on chip. Off chip it is
    within 4 %: it gives each pooling pass with off-chip operands some 15 cycles more than
    the simulation takes (one run a layer: 1 %), and bands multiply the passes."""
    from golden_nets import OnnxNet

    from fpdeep.cli import main
    from fpdeep.design import pool

    monkeypatch.setattr(pool, "BAND_WORDS", 20)
    net = OnnxNet((2, 6, 6), seed=11)
    net.conv(6, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.maxpool(3, 2, pads=(1, 1, 1, 1))
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.avgpool(2, 1)
    net.flatten()
    net.fc(5)
    onnx_file = tmp_path / "net.onnx"
    net.load(onnx_file)
    out = tmp_path / "bands"
    assert main(["build", str(onnx_file), "--board", "zcu102", "--boards", "1", "--batch", "2",
                 *(["--off-chip", off_chip] if off_chip else []), "-o", str(out)]) == 0
    design = json.loads((out / "design.json").read_text())
    bands = sorted(u["info"]["bands"] for b in design["boards"] for u in b["units"]
                   if u["kind"] == "pool")
    assert bands == [2, 6]
    result = simulate(out, RunConfig(batch=2, steps=2, lr=0.1, host="native"),
                      host_checks={"infer": True})
    assert result["match"] is True and result["mismatches"] == []
    assert result["inference_cycles"] > 0  # the forward-only pass ran, and matched
    assert abs(result["cycle_error"]) < (0.04 if off_chip else 0.01), result


def test_a_channel_shuffle_trains_bit_exact(tmp_path):
    """ShuffleNet's Reshape-Transpose-Reshape: a converter pass per channel plane."""
    from golden_nets import OnnxNet
    from test_mapping import _channel_shuffle

    net = OnnxNet((2, 5, 5), seed=7)
    net.conv(6, 3, pads=(1, 1, 1, 1))
    net.relu()
    _channel_shuffle(net)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.flatten()
    net.fc(5)
    _train_two_steps(net, tmp_path / "shuffle")


@pytest.mark.parametrize("boards", [1, 2])
def test_a_depthwise_separable_block_trains_bit_exact(tmp_path, boards):
    """conv 3x3, a depthwise 3x3 (groups = C) and a pointwise 1x1: the engine runs the
    depthwise layer group by group. On two boards the planner splits the depthwise layer
    into slices of whole groups: each reads its groups' input channels and their input
    errors are summed where the layer's input is."""
    from golden_nets import OnnxNet

    net = OnnxNet((2, 6, 6), seed=5)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.conv(4, 3, pads=(1, 1, 1, 1), groups=4)
    net.conv(6, 1)
    net.relu()
    net.maxpool(2, 2)
    net.flatten()
    net.fc(5)
    path = tmp_path / f"dw{boards}"
    result = _train_two_steps(net, path, boards=boards)
    design = json.loads((path / "design.json").read_text())
    depthwise = [s for b in design["boards"] for s in b["slices"] if s["layer"] == "conv5"]
    assert len(depthwise) == boards  # on two boards the depthwise layer is split
    assert result["match"]


def test_a_thousand_class_head_trains_bit_exact(tmp_path):
    """An ImageNet-sized classifier head: the loss unit over 1000 classes (its label sideband
    and class count widen with them). A board of 64 DSPs keeps the FC engine small, so that
    the Verilator model stays quick; the loss unit's 52 cycles a class set the step. A VCU118
    cut down to 64 DSPs, not a ZCU102: the weight-gradient engine's result banks (1000 x 64
    gradients over 17 lanes, double) take more block RAM than a ZCU102's 912."""
    from dataclasses import replace

    from golden_nets import OnnxNet

    from fpdeep.planning.boards import get_board

    net = OnnxNet((1, 4, 4), seed=5)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.flatten()
    net.fc(1000)
    result = _train_two_steps(net, tmp_path / "head", board=replace(get_board("vcu118"), dsp=64),
                              infer=False)
    assert result["cycles"][0] > 2 * 1000 * 52  # the loss unit ran over every class


def test_a_board_idle_longer_than_the_least_watchdog_limit_while_the_next_works_is_no_deadlock(
        tmp_path):
    """The thousand-class head on two boards: board 0 idles while board 1 runs the loss unit
    over 1000 classes (52 cycles a class an image, two images), more than 65,536 cycles. With
    the watchdog at its least limit board 0 stopped the step as a deadlock; the build sets the
    limit from the modelled step."""
    from dataclasses import replace

    from golden_nets import OnnxNet

    from fpdeep.codegen.board import WATCHDOG_MIN
    from fpdeep.planning.boards import get_board

    net = OnnxNet((1, 4, 4), seed=5)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.flatten()
    net.fc(1000)
    path = tmp_path / "head2"
    result = _train_two_steps(net, path, boards=2, board=replace(get_board("vcu118"), dsp=64),
                              infer=False, steps=1)
    quiet = [r["stall"] for r in result["resources"] if r["board"] == 0 and r["engine"]]
    assert max(quiet) > WATCHDOG_MIN  # board 0 waited longer than the least limit
    top = (path / "rtl" / "board_0" / "fpdeep_board_0.sv").read_text()
    limit = int(re.search(r"\.WATCHDOG\((\d+)\)", top)[1])
    assert limit >= 2 * result["cycles"][0] and limit & (limit - 1) == 0


# Icarus runs the generated boards at about 10 cycles/s (the store's arbiters are loops over
# every client, evaluated event by event): a step of two boards takes hours, so full only.
@pytest.mark.full
@pytest.mark.skipif(not simulator_available("icarus"), reason="Icarus Verilog not found")
def test_two_boards_on_icarus(tmp_path):
    network, plan = _digits_plan(2)
    out = tmp_path / "icarus"
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()})
    result = simulate(out, RunConfig(batch=4, steps=1, simulator="icarus"))
    _check(result, out)
    assert result["simulator"] == "icarus"


@pytest.mark.xdist_group("digits1")
def test_cycle_limit_names_what_still_runs(one_board):
    # the step's timeline on this board says what works around cycle 300: an engine's loop
    # nest (its CSR name), its output sequencer (name_out), a unit
    build = load_build(one_board)
    tasks = schedule(build.design, build.network, batch=1).tasks
    setup = instruction_cycles(build.design, build.network)
    spans = replay(tasks, links=build.design.links, setup=setup)
    cycles = durations(tasks, links=build.design.links, setup=setup)

    def name(task):
        return task.resource.split(":", 1)[1].removesuffix(":run").replace(":out", "_out")

    # (work starts once the task's 'after' tasks end: its span ends `cycles` after that)
    working = [(name(t), end - c, end) for t, (_, end), c in zip(tasks, spans, cycles,
                                                                 strict=True)]
    runs = {n for t, (n, lo, hi) in zip(tasks, working, strict=True)
            if t.kind == "run" and lo < 280 and hi > 320}
    assert runs, "the model has an engine running through cycles 280-320"
    with pytest.raises(FpdeepError) as info:
        simulate(one_board, RunConfig(batch=1, steps=1, max_cycles=300))
    message = str(info.value)
    assert "cycle limit of 300 cycles per step exceeded on board 0" in message, message
    running = set(re.search(r"running: ([\w, ]*);", message).group(1).split(", "))
    # every engine the model runs through those cycles is named, and nothing idle there
    assert runs <= running, message
    assert running <= {n for n, lo, hi in working if lo < 340 and hi > 260}, message


@pytest.mark.xdist_group("digits1")
def test_a_forward_only_pass_gives_the_golden_logits(one_board):
    # after a training step, the boards run their inference programs (CSR mode 1) on the
    # images in the store; the logits read back equal fpdeep.golden.infer with the weights
    # the golden step trained
    result = simulate(one_board, RunConfig(batch=3, steps=1), host_checks={"infer": True})
    assert result["match"] is True and result["mismatches"] == []
    assert result["inference_cycles"] < result["cycles"][0]


@pytest.mark.xdist_group("digits1")
def test_bad_host_input_is_answered_and_the_next_step_is_bit_exact(one_board):
    from fpdeep.hwlib.protocol import ERROR_CODES

    # the host's streams pause at times meanwhile (cocotb host)
    result = simulate(one_board, RunConfig(batch=2, steps=1, host="cocotb"),
                      host_checks={"faults": True}, host_pause=True)
    seen = {c["case"]: c for c in result["host_checks"]}
    assert seen["step before loading"]["csr"] == ERROR_CODES["not_loaded"]
    for case, code in (("unknown opcode", "opcode"), ("short payload", "length"),
                       ("unknown bank", "target")):
        # a status beat alone, with the code, and the same code in the CSR
        assert seen[case]["status"] == seen[case]["csr"] == ERROR_CODES[code], seen[case]
        assert seen[case]["beats"] == 1
    assert result["match"] is True and result["mismatches"] == []


@pytest.mark.xdist_group("digits1")
def test_a_deadlock_is_reported_by_the_stalled_resource(one_board):
    with pytest.raises(FpdeepError, match=r"board 0: deadlock: no progress within the "
                                          r"watchdog limit; stalled: conv1_c0_4_fp"):
        simulate(one_board, RunConfig(batch=1, steps=1), host_checks={"deadlock": True})


@pytest.mark.full
def test_twelve_steps_on_three_boards_bit_exact(tmp_path):
    """Many steps: weights carried from step to step on the boards stay bit-exact."""
    network, plan = _digits_plan(3, batch=8)
    out = tmp_path / "long"
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()})
    result = simulate(out, RunConfig(batch=8, steps=12, lr=0.1))
    _check(result, out)
    assert result["steps"] == 12 and len(result["loss"]) == 12
