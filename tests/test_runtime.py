"""The host runtime for real boards (`fpdeep run`): its script executor over a transport, the
XDMA device files, the refusals, and the whole runtime driving the simulated cluster through
the native host's --serve mode, where it must read back exactly what the native host reads."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

import fpdeep
from fpdeep.cli import main
from fpdeep.cosim.script import POLL_OUTCOMES, Op, Script
from fpdeep.cosim.simulator import simulator_available
from fpdeep.errors import FpdeepError
from fpdeep.flow import write_build
from fpdeep.hwlib.protocol import header
from fpdeep.resources import PACKAGE_DIR
from fpdeep.runtime import Transport, XdmaBoard, execute, open_chain
from fpdeep.runtime.execute import answer_limit

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
needs_verilator = pytest.mark.skipif(not simulator_available("verilator"),
                                     reason="Verilator not found")


class FakeChain(Transport):
    """One board that answers every packet with a status beat (READ: and `length` words),
    keeps its CSRs in a dict, and whose STATUS (0x10) reads 1 after ``ready_at`` cycles."""

    def __init__(self, ready_at: int = 100) -> None:
        self.boards = 1
        self.now = 0
        self.ready_at = ready_at
        self.csr: dict[int, int] = {}
        self.sent: list[list[int]] = []
        self.resets: list[int] = []

    def reset(self, cycles: int) -> None:
        self.resets.append(cycles)
        self.now += cycles

    def write_stream(self, board: int, words) -> None:
        self.sent.append(list(words))
        self.now += len(words)

    def read_stream(self, board: int, limit: int) -> list[int]:
        head = self.sent[-1][0]
        return [1 << 63 | head >> 56 << 56, *range(limit - 1)]

    def csr_read(self, board: int, address: int) -> int:
        self.now += 4
        if address == 0x10:
            return int(self.now >= self.ready_at)
        return self.csr.get(address, 0)

    def csr_write(self, board: int, address: int, value: int) -> None:
        self.csr[address] = value

    def idle(self, cycles: int) -> None:
        self.now += cycles

    def cycle(self) -> int:
        return self.now


def _poll(timeout: int) -> Op:
    return Op.poll(0, 0x10, mask=1, want=1, bad=(), timeout=timeout, interval=8)


def test_executor_records_what_the_boards_answer():
    ops = (Op("EXCHANGE", 0, (header("READ", 2, 0, 3),)), Op("CSR_WRITE", 0, (8, 5)),
           Op("CSR_READ", 0, (8,)), Op("MARK", 0), _poll(1000), Op("IDLE", 0, (7,)),
           Op("PROGRESS", 0, (0, 1, 1)), Op("FAIL", 0), Op("CSR_READ", 0, (4,)))
    chain, seen = FakeChain(), []
    out = execute(Script(1, 6, ops), chain, progress=lambda *a: seen.append(a))
    assert chain.resets == [6] and seen == [(0, 1, 1)]
    assert out.failed is None
    assert out.answers[0] == (0x82 << 56, 0, 1, 2)  # a READ's status beat and its 3 words
    assert out.answers[2] == (5,)
    value, outcome, _ = out.answers[4]
    assert value == 1 and POLL_OUTCOMES[outcome] == "wanted"
    assert 8 not in out.answers  # the failure section runs only after a failed POLL


def test_a_poll_out_of_time_skips_to_the_failure_section():
    ops = (Op("MARK", 0), _poll(50), Op("CSR_READ", 0, (8,)), Op("FAIL", 0),
           Op("CSR_READ", 0, (4,)))
    out = execute(Script(1, 0, ops), FakeChain(ready_at=10_000))
    assert out.failed == 1 and POLL_OUTCOMES[out.answers[1][1]] == "timeout"
    assert 2 not in out.answers and out.answers[4] == (0,)


def test_answer_limits_follow_the_packet_header():
    assert answer_limit((header("READ", 1, 0, 17),)) == 18
    assert answer_limit((header("WRITE", 1, 0, 2), 5, 6)) == 1
    assert answer_limit((0x7F << 56 | 1, 0)) == 1  # an unknown opcode: a status beat


def test_a_script_for_another_chain_is_refused():
    with pytest.raises(FpdeepError, match="script is for 2 board"):
        execute(Script(2, 0, ()), FakeChain())


def test_xdma_board_writes_beats_and_registers_as_the_driver_expects(tmp_path):
    prefix = str(tmp_path / "xdma0")
    answer = struct.pack("<3Q", 0x81 << 56, 7, (1 << 64) - 2)
    for suffix, data in (("_h2c_0", b""), ("_c2h_0", answer), ("_user", bytes(4096))):
        with open(prefix + suffix, "wb") as f:
            f.write(data)
    board = XdmaBoard(prefix)
    try:
        board.write_stream([header("WRITE", 3, 16, 1), 0x1234])
        assert board.read_stream(3) == [0x81 << 56, 7, (1 << 64) - 2]
        board.csr_write(0x8, 0xCAFE)
        assert board.csr_read(0x8) == 0xCAFE
        with pytest.raises(FpdeepError, match="not a register"):
            board.csr_read(0x1002)
    finally:
        board.close()
    sent = (tmp_path / "xdma0_h2c_0").read_bytes()
    assert struct.unpack("<2Q", sent) == (header("WRITE", 3, 16, 1), 0x1234)
    assert (tmp_path / "xdma0_user").read_bytes()[8:12] == struct.pack("<I", 0xCAFE)


def test_devices_that_do_not_fit_the_chain_are_refused(tmp_path):
    with pytest.raises(FpdeepError, match=r"names 2 device\(s\); the build has 1 board"):
        open_chain(["/dev/xdma0", "/dev/xdma1"], ["xdma"], clock_mhz=250)
    with pytest.raises(FpdeepError, match="board 0 has no host bridge"):
        open_chain(["/dev/xdma0"], [None], clock_mhz=250)
    with pytest.raises(FpdeepError, match=r"xdma9_h2c_0.*do\(es\) not exist.*/dev/xdma0"):
        open_chain([str(tmp_path / "xdma9")], ["xdma"], clock_mhz=250)
    with pytest.raises(FpdeepError, match="not a u-dma-buf buffer"):
        open_chain([str(tmp_path / "udmabuf0")], ["zynq_ps"], clock_mhz=250)


@pytest.fixture(scope="module")
def vcu118(tmp_path_factory):
    network = fpdeep.load_onnx(DIGITS)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="vcu118", boards=1), batch=4)
    out = tmp_path_factory.mktemp("run") / "vcu118"
    write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()})
    return out


@pytest.mark.parametrize(("args", "message"), [
    (["--device", "a,b"], r"--device names 2 device\(s\); the build has 1 board"),
    (["--device", "/nonexistent/xdma0"], r"/nonexistent/xdma0_h2c_0.*do\(es\) not exist"),
    (["--device", "sim,x"], "--device sim stands for the whole simulated chain"),
    (["--device", "/dev/xdma0", "--weights", "w.npz"], "--weights applies only with --infer"),
    (["--device", "/dev/xdma0", "--infer", "--data", "digits", "--steps", "2", "--lr", "1"],
     "--steps, --lr apply only without --infer"),
    (["--device", "/dev/xdma0", "--infer"], "--infer needs --data"),
    (["--device", "/dev/xdma0", "--steps", "0"], "--steps"),
])
def test_bad_run_options_exit_2_naming_them(vcu118, capsys, args, message):
    assert main(["run", str(vcu118), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fpdeep: error:") and "Traceback" not in err
    assert __import__("re").search(message, err), err
    assert not (vcu118 / "run" / "result.json").exists()


def test_a_folder_that_is_no_build_is_refused(tmp_path, capsys):
    assert main(["run", str(tmp_path), "--device", "/dev/xdma0"]) == 2
    assert "is not an fpdeep build folder" in capsys.readouterr().err


# ---- the runtime on the simulated cluster --------------------------------------------------
@pytest.mark.sim
@pytest.mark.slow
@needs_verilator
@pytest.mark.xdist_group("digits1")
def test_run_on_the_simulated_chain_reads_back_what_the_native_host_reads(digits_one_board):
    """The same session through the runtime (SimulatedChain over a pipe) and through the
    native host's own script loop: every packet's answer and register read identical, and the
    run bit-exact with the golden model."""
    from fpdeep.cosim.hosts import run_session
    from fpdeep.cosim.run import initial_weights, load_build, make_batch
    from fpdeep.cosim.script import read_outputs, read_script
    from fpdeep.cosim.session import build_session
    from fpdeep.progress import Progress
    from fpdeep.runtime.run import open_devices

    root = digits_one_board
    build = load_build(root)
    x, y = make_batch(build.network, batch=2, seed=3, data=None)
    session = build_session(build, x=x, y=y, weights=initial_weights(build.network, seed=3),
                            steps=1, lr=0.05, max_cycles=200_000)
    run_session(build, session, root / "sim" / "run", host="native", simulator="verilator",
                threads=1, max_cycles=200_000, progress=Progress.quiet(), bar=("sim", 1))
    native = read_outputs(root / "sim" / "run" / "outputs.bin")
    ops = read_script(root / "sim" / "run" / "script.bin").ops
    with open_devices(build, ["sim"]) as chain:
        runtime = execute(session.script(), chain)
    assert runtime.failed is native.failed is None
    compared = 0
    end = next(k for k, op in enumerate(ops) if op.name == "FAIL")  # runs only on failure
    for k, op in enumerate(ops[:end]):
        if op.name in ("EXCHANGE", "CSR_READ", "POLL"):  # a POLL: value, outcome, cycle
            assert runtime.answers[k] == native.answers[k], f"operation {k} ({op.name})"
            compared += 1
    assert compared > 100 and runtime.cycles == native.cycles

    assert main(["run", str(root), "--device", "sim", "--batch", "2", "--steps", "2"]) == 0
    result = json.loads((root / "run" / "result.json").read_text())
    assert result["match"] is True and result["mode"] == "train" and result["steps"] == 2
    assert result["devices"] == ["sim"] and len(result["cycles"]) == 2


@pytest.mark.sim
@pytest.mark.slow
@needs_verilator
@pytest.mark.xdist_group("digits1")
def test_run_infers_and_checks_the_boards_design_id(digits_one_board, tmp_path, monkeypatch,
                                                    capsys):
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    x = (images.reshape(-1, 1, 8, 8) / 16.0).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x[:6], y=labels[:6])
    assert main(["run", str(digits_one_board), "--device", "sim", "--infer", "--data",
                 str(tmp_path / "d.npz")]) == 0
    result = json.loads((digits_one_board / "run" / "result.json").read_text())
    assert result["match"] and result["images"] == 6 and result["passes"] == 2
    assert os.path.isfile(result["predictions"])

    # a board whose ID register is not this build's hash: refused before anything is loaded
    from fpdeep.cosim import session

    monkeypatch.setattr(session, "design_hash", lambda design: 0x1234ABCD)
    assert main(["run", str(digits_one_board), "--device", "sim", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "this build is 0x1234abcd: the bitstream is not this build's" in err, err
    assert not (digits_one_board / "run" / "result.json").exists()
