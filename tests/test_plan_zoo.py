"""`fpdeep plan` on every light model-zoo graph shipped with onnx at full size and on the CIFAR
ResNet-20 and VGG-16 of the FPGA-training papers; every op is costed; `build` still refuses
what has no RTL, naming the node and the op."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import LIGHT_MODELS, light_model

import fpdeep
from fpdeep import ops
from fpdeep.design.lower import check_buildable
from fpdeep.errors import FpdeepError
from fpdeep.ir import Op
from fpdeep.planning.cluster import make_cluster
from fpdeep.planning.planner import plan

pytestmark = pytest.mark.slow

# ops the generated RTL does not run yet
NO_RTL: set[Op] = set()


def check_plan(network, board: str, boards: int):
    result = plan(network, make_cluster(board=board, boards=boards))
    t = result.totals
    assert t.ii_cycles > 0 and math.isfinite(t.images_per_s) and t.images_per_s > 0
    assert 0 < t.dsp_efficiency <= 1 and t.gops > 0
    # planner cost: every layer is counted, element ops of the non-MAC layers included
    work = fpdeep.analyze(network)
    for layer in network.layers:
        assert work.layers[layer.name].element_ops == ops.element_ops(layer)
    return result


def check_refused(network, result):
    kinds = {layer.op for layer in network.layers} & NO_RTL
    if not kinds:
        return
    with pytest.raises(FpdeepError) as info:
        check_buildable(network, result)
    message = str(info.value)
    for layer in network.layers:
        if layer.op in kinds:  # each is named with its op and why
            assert f"{layer.name!r} ({layer.op}): no RTL unit for this op yet" in message


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_every_light_zoo_graph_plans_at_full_size(name):
    """Every full-size graph's 8-VCU118 plan passes build's checks (what the plan spills to
    DRAM stays off chip), Inception's tensors with four readers included; the 1000-class
    heads are no reason to refuse: the loss unit's labels widen with the classes."""
    network = fpdeep.load_onnx(light_model(name))
    result = check_plan(network, "vcu118", 8)
    check_refused(network, result)
    check_buildable(network, result)
    assert any(bp.spill_to == "dram" for bp in result.boards)


@pytest.mark.torch
@pytest.mark.parametrize("name,board,boards", [("resnet20", "vc709", 1),
                                               ("vgg16_cifar", "vcu118", 16)])
def test_cifar_networks_of_the_fpga_training_papers_plan(tmp_path, name, board, boards):
    pytest.importorskip("torch", reason="the CIFAR builders are PyTorch modules")
    from cifar_models import export_cifar

    network = fpdeep.load_onnx(export_cifar(name, tmp_path / f"{name}.onnx"))
    assert network.input_shape == (3, 32, 32) and network.layers[-1].out_shape == (10,)
    convs = [layer for layer in network.layers if layer.op is Op.CONV]
    assert len(convs) == (21 if name == "resnet20" else 13)  # 19 + 2 projections; VGG's 13
    result = check_plan(network, board, boards)
    check_refused(network, result)
    t = result.totals
    print(f"{name} on {boards} x {board}: {t.images_per_s:,.0f} images/s, {t.gops:,.1f} GOPS, "
          f"DSP efficiency {t.dsp_efficiency:.1%}")


@pytest.mark.parametrize("classes", [1000, 4096])
def test_wide_classifiers_plan_and_build(tmp_path, classes):
    from golden_nets import OnnxNet

    net = OnnxNet((8, 6, 6), seed=1)
    net.conv(16, 3)
    net.relu()
    net.flatten()
    net.fc(classes)
    net.softmax()
    network, weights = net.load(tmp_path / "m.onnx")
    result = check_plan(network, "vcu118", 2)
    fc = network.compute_layers[-1]
    assert fpdeep.analyze(network).layers[fc.name].fp_macs == 16 * 4 * 4 * classes
    check_buildable(network, result)
    # the golden step trains it: the fixed-point softmax error follows the float one
    x = np.random.default_rng(0).normal(size=(2, 8, 6, 6))
    y = np.array([0, classes - 1])
    ref = fpdeep.golden.train_step(network, weights, x, y, lr=0.1, numerics="float")
    fixed = fpdeep.golden.train_step(network, weights, x, y, lr=0.1)
    err_fmt = fpdeep.golden.Numerics().fmt("err", fc.name)
    error = fpdeep.golden.dequantise(fixed.trace.loss_error, err_fmt)
    assert error.shape == ref.trace.loss_error.shape == (2, classes)
    assert np.abs(error - ref.trace.loss_error).max() < 2e-3
    assert fixed.loss == pytest.approx(ref.loss, abs=0.02)


def test_more_classes_than_the_loss_unit_takes_are_refused(tmp_path):
    from golden_nets import OnnxNet

    from fpdeep.design.units import LOSS_CLASS_LIMIT

    net = OnnxNet((1, 2, 2), seed=1)
    net.flatten()
    net.fc(LOSS_CLASS_LIMIT)
    network, _ = net.load(tmp_path / "m.onnx")
    result = plan(network, make_cluster(board="vcu118", boards=1))
    with pytest.raises(FpdeepError, match=f"fewer than {LOSS_CLASS_LIMIT} classes, the "
                                          f"network has {LOSS_CLASS_LIMIT}"):
        check_buildable(network, result)


def test_squeezenet_at_32x32_builds_on_8_vcu118_with_fewer_lanes_where_block_ram_is_short():
    """SqueezeNet at 3x32x32 on 8 VCU118, everything off chip: the plan fills some boards'
    DSPs with lanes whose shallow banks need more block RAM than the board has; build cuts
    those boards' lanes until every board's units fit within the cap."""
    from fpdeep.flow import BuildConfig, FlowState, load, lower
    from fpdeep.flow import plan as plan_step

    config = BuildConfig(model=light_model("light_squeezenet"), board="vcu118", boards=8,
                         partition="optimal", input_shape=(3, 32, 32), batch=4,
                         off_chip=("weights", "grads", "stash"))
    state = lower(plan_step(load(FlowState(), config), config), config)
    caps = state.plan.cluster.dsp_caps
    assert any(caps)
    cap = math.floor(make_cluster(board="vcu118", boards=1).boards[0].bram_blocks * 0.85)
    for bp in state.plan.boards:
        assert bp.resources.bram36 <= cap
        if caps[bp.index]:
            assert bp.dsp_used <= caps[bp.index]


def test_squeezenet_at_full_size_builds_on_24_vcu118_with_engine_banks_in_ultraram():
    """SqueezeNet at 3x224x224 on 24 VCU118, everything off chip: conv1's engines keep the
    224 x 224 input and its 64 output planes, more block RAM than a board has; build moves
    their deepest banks (and other boards') to UltraRAM, and every board fits both caps."""
    from fpdeep.flow import BuildConfig, FlowState, load, lower
    from fpdeep.flow import plan as plan_step

    config = BuildConfig(model=light_model("light_squeezenet"), board="vcu118", boards=24,
                         partition="optimal", off_chip=("weights", "grads", "stash"))
    state = lower(plan_step(load(FlowState(), config), config), config)
    board = make_cluster(board="vcu118", boards=1).boards[0]
    bram, uram = math.floor(board.bram_blocks * 0.85), math.floor(board.uram_blocks * 0.85)
    engines = {bp.index: [e for s in bp.slices for e in s.engines.values()]
               for bp in state.design.boards}
    for bp in state.plan.boards:
        assert bp.resources.bram36 <= bram and bp.resources.uram <= uram
    assert any(e.params.uram for e in engines[0])  # conv1's board needs UltraRAM


def test_shufflenet_at_full_size_builds_on_32_vcu118_with_banks_deeper_than_the_counters():
    """ShuffleNet at 3x224x224 on 32 VCU118, everything off chip: every board fits both caps,
    and its first boards' engines keep planes over few lanes, banks deeper than 2^16 words a
    lane, which the engines' loaders and drain address in AW bits (Verilator flagged the CW-bit
    addresses they had: SELRANGE)."""
    from fpdeep.flow import BuildConfig, FlowState, load, lower
    from fpdeep.flow import plan as plan_step

    config = BuildConfig(model=light_model("light_shufflenet"), board="vcu118", boards=32,
                         partition="optimal", off_chip=("weights", "grads", "stash"))
    state = lower(plan_step(load(FlowState(), config), config), config)
    board = make_cluster(board="vcu118", boards=1).boards[0]
    bram, uram = math.floor(board.bram_blocks * 0.85), math.floor(board.uram_blocks * 0.85)
    for bp in state.plan.boards:
        assert bp.resources.bram36 <= bram and bp.resources.uram <= uram
    depths = [max(e.params.x_depth, e.params.w_depth, e.params.dy_depth, e.params.res_depth)
              for bp in state.design.boards for s in bp.slices for e in s.engines.values()]
    assert max(depths) > 1 << 16


@pytest.mark.full
def test_inception_v1_at_full_size_builds_on_48_vcu118_once_its_engine_banks_spread():
    """Inception v1 at 3x224x224 on 48 VCU118, everything off chip: the cuts of least II give
    its last boards the 7 x 7 layers' weights three times over (FP, BP, and WG's 48-bit
    sums), more RAM than they have even with fewer lanes; build cuts the boards again where
    each one's engine banks take at most 80 % of its RAM, with lanes enough for the II, and
    every board fits both caps (about 5 minutes)."""
    from fpdeep.flow import BuildConfig, FlowState, load, lower
    from fpdeep.flow import plan as plan_step

    config = BuildConfig(model=light_model("light_inception_v1"), board="vcu118", boards=48,
                         partition="optimal", off_chip=("weights", "grads", "stash"))
    state = plan_step(load(FlowState(), config), config)
    lowered = lower(state, config).plan
    assert lowered.cluster.bank_share == 0.8 and lowered.cuts != state.plan.cuts
    board = make_cluster(board="vcu118", boards=1).boards[0]
    bram, uram = math.floor(board.bram_blocks * 0.85), math.floor(board.uram_blocks * 0.85)
    for bp in lowered.boards:
        assert bp.resources.bram36 <= bram and bp.resources.uram <= uram
