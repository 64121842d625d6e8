"""BatchNormalization in the planner: its element-wise cost, and the batch barrier it puts into
image pipelining (docs/planner.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from golden_nets import OnnxNet

import fpdeep
from fpdeep.cli import main
from fpdeep.errors import FpdeepError
from fpdeep.flow import BuildConfig
from fpdeep.ir import Op
from fpdeep.ops.batchnorm import pass_ops, with_batchnorm
from fpdeep.planning.partition import chain_model


def _bn(net: OnnxNet, name: str) -> None:
    c = net.shape[net.last][0]
    for role, value in (("s", 1.0), ("o", 0.0), ("m", 0.0), ("v", 1.0)):
        net.inits[f"{name}_{role}"] = np.full(c, value)
    net.node("BatchNormalization", [net.last, *(f"{name}_{r}" for r in "somv")],
             net.shape[net.last])


@pytest.fixture
def model(tmp_path):
    """conv-BN-relu-conv-BN-relu-flatten-fc: two barriers, after conv 0 and conv 1."""
    net = OnnxNet((3, 16, 16))
    net.conv(16, 3, pads=(1, 1, 1, 1))
    _bn(net, "bn1")
    net.relu()
    net.conv(16, 3, pads=(1, 1, 1, 1))
    _bn(net, "bn2")
    net.relu()
    net.flatten()
    net.fc(10)
    path = tmp_path / "bn.onnx"
    net.load(path)
    return path


def test_batchnorm_cost_per_pass(model):
    net = fpdeep.load_onnx(model)
    layer = next(layer for layer in net.layers if layer.op is Op.BATCHNORM)
    n = math.prod(layer.out_shape)
    assert pass_ops(layer) == {"fp": 4 * n, "bp": 3 * n, "wg": 2 * n}
    frozen = next(x for x in with_batchnorm(net, "frozen").layers if x.op is Op.BATCHNORM)
    assert pass_ops(frozen) == {"fp": n, "bp": n, "wg": 0}
    work = fpdeep.analyze(net).layers[layer.name]
    assert work.element_ops == 9 * n and work.params == 2 * layer.out_shape[0]
    assert fpdeep.analyze(with_batchnorm(net, "frozen")).layers[layer.name].params == 0


def test_training_batchnorm_makes_the_batch_cross_each_barrier_as_a_whole(model):
    net = fpdeep.load_onnx(model)
    cluster = fpdeep.make_cluster(board="zcu102", boards=1)
    trained = fpdeep.plan(net, cluster, batch=8)
    frozen = fpdeep.plan(with_batchnorm(net, "frozen"), cluster, batch=8)
    engines = {sp.slice.layer: sp.engines for sp in trained.boards[0].slices}
    fp = {name: e["fp"].cycles for name, e in engines.items()}
    back = {name: max(x.cycles for x in (e["bp"], e["wg"]) if x) for name, e in engines.items()}
    conv1, conv2, fc = (layer.name for layer in net.compute_layers)
    # segments conv1 | conv2 | fc: FP and BP of the first two in turn, each as slow as its
    # engines or its BN unit (an element a cycle: mean, variance and normalise forward, the
    # gamma/beta sums and the error back), the tail overlapped
    n = 16 * 16 * 16
    expected = (max(fp[conv1], 3 * n) + max(back[conv1], 2 * n) + max(fp[conv2], 3 * n)
                + max(back[conv2], 2 * n) + max(fp[fc], back[fc]))
    assert trained.totals.barriers == 2 and trained.totals.ii_cycles == expected
    assert "2 batch-norm barriers" in trained.totals.bottleneck
    assert frozen.totals.barriers == 0
    # frozen, the pipeline's II: its busiest engine, or its busiest unit, which streams an
    # element a cycle forward and back (each BN and ReLU here: 16 x 16 x 16 elements)
    units = 2 * 16 * 16 * 16
    assert frozen.totals.ii_cycles == max(max(fp.values()), max(back.values()), units)
    assert frozen.totals.ii_cycles == units
    first_bn = next(layer.name for layer in net.layers if layer.op is Op.BATCHNORM)
    assert frozen.totals.bottleneck == f"the unit of layer {first_bn!r}"
    assert trained.totals.images_per_s < frozen.totals.images_per_s


def test_layers_before_the_last_barrier_stash_the_whole_batch(model):
    net = fpdeep.load_onnx(model)
    chain = chain_model(net, precision=16, pipelining="image", batch=32)
    assert chain.barriers == (0, 1)
    assert [layer.stash_images for layer in chain.layers] == [32, 32, 2]
    free = chain_model(with_batchnorm(net, "frozen"), precision=16, pipelining="image", batch=32)
    assert free.barriers == () and [layer.stash_images for layer in free.layers] == [6, 4, 2]


def test_bn_option_of_plan_and_the_flow(model, capsys):
    assert main(["plan", str(model), "--board", "zcu102", "--boards", "1"]) == 0
    assert "2 batch-norm barriers" in capsys.readouterr().out
    assert main(["plan", str(model), "--board", "zcu102", "--boards", "1", "--bn", "frozen"]) == 0
    assert "batch-norm barriers" not in capsys.readouterr().out
    with pytest.raises(FpdeepError, match="--bn 'eval' is not known; valid: train, frozen"):
        BuildConfig(model=model, board="zcu102", bn="eval")


def test_build_runs_batchnorm_on_batch_statistics_or_frozen(tmp_path):
    """--bn train (the default) puts the batch-statistics unit on the board, --bn frozen the
    per-channel affine of the running statistics."""
    net = OnnxNet((2, 6, 6))
    net.conv(4, 3, pads=(1, 1, 1, 1))
    _bn(net, "bn1")
    net.relu()
    net.flatten()
    net.fc(5)
    model = tmp_path / "small_bn.onnx"
    net.load(model)
    for mode, module in (("train", "fpdeep_bn_train"), ("frozen", "fpdeep_bn_frozen")):
        out = tmp_path / mode
        assert main(["build", str(model), "--board", "zcu102", "--boards", "1", "--bn", mode,
                     "--batch", "2", "-o", str(out)]) == 0
        top = (out / "rtl" / "board_0" / "fpdeep_board_0.sv").read_text()
        other = "fpdeep_bn_frozen" if mode == "train" else "fpdeep_bn_train"
        assert f"{module} #(" in top and f"{other} #(" not in top
