"""Shared test helpers: the onnx package's model-zoo graphs and tiny hand-built models, and
running a hardware block's cocotb testbench from beside its runner (tests/hw/)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from fpdeep.cosim.simulator import (
    DEFAULT_SIMULATOR,
    MODEL_CACHE_ENV,
    SimResult,
    default_build_root,
    hw_sources,
    run_cocotb,
)

# Relative tolerance for a float64 result checked against another correct evaluation of it
# (another formula, order of summation or memory layout): each operation rounds by at most
# 2**-53 ~ 1.1e-16, so a few operations, or sums of up to some thousand terms, stay below
# 1e-13; 1e-12 passes any rounding difference and fails any wrong formula.
F64_REL = 1e-12

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_MODELS = sorted(p.stem for p in LIGHT_DIR.glob("light_*.onnx"))


def light_model(name: str) -> Path:
    path = LIGHT_DIR / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} is not shipped by this onnx version")
    return path


def tensor(name: str, array: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def make_model(
    nodes: Sequence[onnx.NodeProto],
    *,
    input_shape: Sequence[int | str] = (1, 3, 8, 8),
    output: str = "y",
    initializers: Sequence[TensorProto] = (),
    extra_inputs: Sequence[onnx.ValueInfoProto] = (),
    opset: int = 13,
    ir_version: int = 8,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_shape)),
         *extra_inputs],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
        initializer=list(initializers),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def save(model: onnx.ModelProto, folder: Path, name: str = "model.onnx") -> Path:
    path = folder / name
    onnx.save(model, str(path))
    return path


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def tiny_cnn(classes: int = 4) -> onnx.ModelProto:
    """conv-relu-maxpool-conv-relu-flatten-fc on a 3x8x8 input."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Flatten", ["r2"], ["f"]),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1),
    ]
    inits = [
        tensor("w1", rand(4, 3, 3, 3)), tensor("b1", rand(4)),
        tensor("w2", rand(6, 4, 3, 3, seed=1)),
        tensor("w3", rand(classes, 6 * 2 * 2, seed=2)), tensor("b3", rand(classes, seed=3)),
    ]
    return make_model(nodes, initializers=inits)


def pytest_collection_modifyitems(config, items):
    """Slow tests first, then the other simulations, then the rest (each in collection order):
    pytest-xdist's workers take tests in this order, so that no long test starts last while
    the other worker has nothing left to do."""
    def rank(item):
        return 0 if item.get_closest_marker("slow") else 1 if item.get_closest_marker("sim") else 2

    items.sort(key=rank)


@pytest.fixture(autouse=True)
def signal_handlers_stay():
    """A test leaves the process's SIGINT and SIGTERM handlers, and whether the main thread
    blocks them, as it found them: the Ctrl-C tests of `train` (and any user of fpdeep's API)
    rely on them."""
    import signal

    def state():
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        return {s: (signal.getsignal(s), s in blocked) for s in (signal.SIGINT, signal.SIGTERM)}

    before = state()
    yield
    after = state()
    for s, (handler, blocked) in before.items():
        signal.signal(s, handler)
        signal.pthread_sigmask(signal.SIG_BLOCK if blocked else signal.SIG_UNBLOCK, [s])
    assert after == before, f"the test changed the signal handlers: {before} -> {after}"


@pytest.fixture(scope="session", autouse=True)
def shared_models(tmp_path_factory):
    """Tests that simulate the same design, in any worker, share its compiled cluster model
    (fpdeep's content-keyed model cache, in this session's temporary folder, which pytest-xdist's
    workers share), unless $FPDEEP_SIM_CACHE names one already."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    os.environ.setdefault(MODEL_CACHE_ENV, str(shared / "models"))


#: The block tests; their testbenches import its stream models (tests/hw/stream_models.py).
HW_TESTS = Path(__file__).resolve().parent / "hw"


@pytest.fixture
def run_testbench(request, tmp_path):
    """``run(toplevel=..., test_module=...)`` builds ``toplevel`` from its hw/ module (or the
    files ``sources``) and runs the cocotb ``test_module`` found beside the calling test. The
    testbench gets ``tb_args`` and, as ``tb_args["parameters"]``, the HDL ``parameters``, so it
    works out the declared widths of the build it drives."""
    folder = Path(request.path).resolve().parent

    def run(*, toplevel: str, test_module: str, parameters: Mapping[str, object] | None = None,
            tb_args: Mapping[str, object] | None = None, sources: Sequence[Path] | None = None,
            simulator: str = DEFAULT_SIMULATOR) -> SimResult:
        params = dict(parameters or {})
        return run_cocotb(
            simulator=simulator,
            toplevel=toplevel,
            sources=hw_sources(toplevel) if sources is None else sources,
            parameters=params,
            test_module=test_module,
            build_root=default_build_root(),
            test_dir=tmp_path,
            tb_args={**(tb_args or {}), "parameters": params},
            test_paths=[folder, HW_TESTS],
        )

    return run


@pytest.fixture(scope="session")
def digits_one_board(tmp_path_factory):
    """A build folder of the bundled digits CNN on one ZCU102 (batch 4), shared by the tests of
    xdist group "digits1" so that its simulators (the native host's above all) are built once."""
    import fpdeep
    from fpdeep.flow import write_build
    from fpdeep.resources import PACKAGE_DIR

    digits = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
    network = fpdeep.load_onnx(digits)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=4)
    out = tmp_path_factory.mktemp("sim") / "digits1"
    write_build(network, plan, out, model_files={"model.onnx": digits.read_bytes()})
    return out
