from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_nets import chain

from fpdeep.errors import FpdeepError
from fpdeep.planning.boards import parse_board
from fpdeep.planning.cluster import make_cluster
from fpdeep.planning.partition import chain_model, partition_fpdeep
from fpdeep.planning.planner import DoesNotFit, evaluate, plan


def small_board(*, dsp: int = 64, bram: int = 8, gbytes: float = 1.0, gbps: float = 4.0,
                name: str = "tiny") -> str:
    return f"""
name = "{name}"
title = "test board"
vendor = "test"
part = "none"
[device]
dsp = {dsp}
bram_blocks = {bram}
bram_block_bits = 36864
uram_blocks = 0
uram_block_bits = 0
lut = 1000
ff = 2000
source = "test"
[dsp_per_mac]
8 = 0.5
16 = 1
32 = 4
source = "test"
[links]
cages = "none"
lanes = 2
lanes_per_neighbour = 1
lane_gbps = {gbps}
source = "test"
[memory]
kind = "DDR4"
gbytes = {gbytes}
gbytes_per_s = {0 if gbytes == 0 else 1.0}
source = "test"
[clock]
default_mhz = 100
source = "test"
[power]
watts = 10
estimate = true
source = "test"
"""


def test_cut_traffic_counts_skip_connections_and_split_layers():
    # conv0 -> conv2 -> conv4 -> Add(conv4, conv0) -> conv7 -> flatten -> fc10; 4 channels of
    # 8x8 each (256 elements per tensor), input 3x8x8 = 192 elements. Worked out by hand:
    net = chain([4, 4, 4, 4], residual=True, fc=[10])
    model = chain_model(net, precision=16, pipelining="image")
    fwd = [int(v) // 2 for v in model.forward_bytes]
    bwd = [int(v) // 2 for v in model.backward_bytes]
    assert fwd[1] == 192 + 64  # conv0 split after 1 channel: its input, 1/4 of its output
    assert bwd[1] == 64  # no error flows back into the image
    assert fwd[4] == 256  # after conv0: its output (also the skip)
    assert fwd[8] == 256 + 256  # after conv2: the skip still travels to the Add, and conv2's out
    assert fwd[9] == 256 + 256 + 64  # inside conv4: + a quarter of the Add's output
    assert fwd[12] == 256  # after the Add's layer: only its output
    assert fwd[17] == 256  # inside fc10: the flattened input goes to both halves
    assert fwd[-1] == 0
    # after conv0, where its output is held: the contributions of conv2 and of the Add come
    # back one by one, to be added there
    assert bwd[4] == 256 + 256
    # inside conv2: those two, the error of conv2's channel made left, and conv2's raw partial
    # input errors, 48 bits (3 words) an element, where the contribution counted 1
    assert bwd[5] == 256 + 256 + 64 + 2 * 256


def covered(plan_or_cuts, model):
    """(layer, channel) pairs each board holds, as a flat list."""
    cells = []
    for b in range(len(plan_or_cuts) - 1):
        for s in model.slices(plan_or_cuts[b], plan_or_cuts[b + 1]):
            cells += [(s.layer, c) for c in range(s.lo, s.hi)]
    return cells


networks = st.builds(
    chain,
    st.lists(st.integers(1, 12), min_size=1, max_size=5),
    size=st.sampled_from([4, 6, 8]),
    fc=st.lists(st.integers(1, 16), max_size=2),
    residual=st.booleans(),
    k=st.sampled_from([1, 3]),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=networks, boards=st.integers(1, 9), strategy=st.sampled_from(["fpdeep", "optimal"]),
       gbps=st.sampled_from([None, 0.05, 1.0]))
def test_every_channel_is_assigned_exactly_once(net, boards, strategy, gbps):
    model = chain_model(net, precision=16, pipelining="image")
    board = parse_board(small_board(dsp=96, bram=64), "tiny.toml")
    cluster = make_cluster(board=board, boards=min(boards, model.total), link_gbps=gbps)
    result = plan(net, cluster, strategy=strategy)
    cells = [(sp.slice.layer, c) for bp in result.boards for sp in bp.slices
             for c in range(sp.slice.lo, sp.slice.hi)]
    expected = [(layer.name, c) for layer in net.compute_layers
                for c in range(layer.out_shape[0])]
    assert sorted(cells) == sorted(expected)
    assert len(cells) == len(set(cells))
    assert all(bp.slices for bp in result.boards)  # every board has work
    for bp in result.boards:  # slices are consecutive along the chain
        assert bp.dsp_used <= cluster.dsp_budget(bp.index)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=networks, kinds=st.lists(st.sampled_from([0, 1]), min_size=1, max_size=6),
       strategy=st.sampled_from(["fpdeep", "optimal"]))
def test_mixed_chains_assign_every_channel_once(net, kinds, strategy):
    types = [parse_board(small_board(dsp=96, bram=64, name="big"), "big.toml"),
             parse_board(small_board(dsp=40, bram=8, gbps=1.0, name="small"), "small.toml")]
    model = chain_model(net, precision=16, pipelining="image")
    cluster = make_cluster(board=[types[k] for k in kinds[: model.total]])
    result = plan(net, cluster, strategy=strategy)
    cells = sorted((sp.slice.layer, c) for bp in result.boards for sp in bp.slices
                   for c in range(sp.slice.lo, sp.slice.hi))
    assert cells == sorted((layer.name, c) for layer in net.compute_layers
                           for c in range(layer.out_shape[0]))
    for bp in result.boards:
        assert bp.dsp_used <= cluster.dsp_budget(bp.index)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=st.builds(chain, st.lists(st.integers(1, 5), min_size=2, max_size=3),
                     size=st.sampled_from([4, 6]), fc=st.lists(st.integers(1, 4), max_size=1),
                     residual=st.booleans()),
       boards=st.integers(2, 3), gbps=st.sampled_from([0.02, 0.2, 5.0]),
       bram=st.sampled_from([1, 4, 64]))
def test_brute_force_never_beats_optimal(net, boards, gbps, bram):
    """In the search's own link model: one raw partial error a cut inside a layer (the plan
    counts every slice's, `split_partial_bytes`, which the greedy search cannot; off here)."""
    board = parse_board(small_board(dsp=24, bram=bram, gbps=gbps), "tiny.toml")
    cluster = make_cluster(board=board, boards=boards)
    model = chain_model(net, precision=16, pipelining="image")
    best = None
    with mock.patch("fpdeep.planning.planner.split_partial_bytes",
                    lambda chain, cuts: np.zeros(len(cuts) - 2, dtype=np.int64)):
        for inner in itertools.combinations(range(1, model.total), boards - 1):
            try:
                ii = evaluate(model, cluster, (0, *inner, model.total), strategy="x",
                              batch=4).totals.ii_cycles
            except DoesNotFit:
                continue
            best = ii if best is None else min(best, ii)
        if best is None:
            with pytest.raises(FpdeepError):
                plan(net, cluster, strategy="optimal")
            return
        optimal = plan(net, cluster, strategy="optimal", chain=model).totals.ii_cycles
        fpdeep = plan(net, cluster, strategy="fpdeep", chain=model).totals.ii_cycles
    assert optimal == best  # brute force never beats it, and it is a real partition
    assert optimal <= fpdeep


def test_fpdeep_split_is_proportional_to_lanes():
    # Four equal 3x3 conv layers of 8 channels: the work per channel is the same everywhere
    # except the first layer (no BP), so 2 boards split at the work midpoint.
    net = chain([8, 8, 8, 8], size=4, in_channels=8)
    model = chain_model(net, precision=16, pipelining="image")
    cluster = make_cluster(board="vcu118", boards=2)
    # work per channel: first layer 2 units (FP+WG), others 3 (FP+BP+WG): total 8*2 + 24*3 = 88;
    # half is 44 = 16 (layer 0) + 28 -> 9.33 channels of layer 1 -> cut at 8 + 9 = 17.
    assert partition_fpdeep(model, cluster) == (0, 17, 32)


def test_too_many_boards_is_an_error():
    net = chain([2, 3])
    with pytest.raises(FpdeepError, match="only 5 output channels/neurons in all.*at most 5"):
        plan(net, make_cluster(board="vcu118", boards=6))


def test_a_slice_of_a_grouped_conv_is_costed_as_its_groups():
    from fpdeep.planning.partition import slice_groups

    assert slice_groups(6, 2) == (6, 3)  # whole groups
    assert slice_groups(1, 4) == (1, 1)  # inside one group: an ungrouped conv of its inputs
    assert slice_groups(5, 2) == (6, 3)  # parts of groups at its ends: the groups it touches


def test_bank_bits_count_the_bits_of_the_banks_each_engine_fills():
    """The search's count of a slice's engine banks is what the three engines it lowers to
    hold in the banks their modes fill (`engine_banks`), where every depth is a power of two
    already: 1x1 convs of 4 -> 8 -> 8 channels on 8 x 8, 4 x 4 lanes, the second layer split
    in halves."""
    from fpdeep.design.engine import _MODE_BANKS, LoopShape, engine_params
    from fpdeep.planning.resources import ENGINE_URAM_BANKS, engine_banks

    net = chain([8, 8], size=8, in_channels=4, k=1)
    model = chain_model(net, precision=16, pipelining="image")
    bank_of = dict(zip(("x", "w", "dy", "result"), ENGINE_URAM_BANKS, strict=True))
    for layer, n in ((model.layers[0], 8), (model.layers[1], 4)):
        shape = LoopShape(co=n, ci=layer.in_channels, h=8, w=8, ho=8, wo=8)
        modes = ("fp", "bp", "wg") if layer.has_bp else ("fp", "wg")
        held = 0
        for mode in modes:
            params = engine_params([shape], tm=4, tn=4, mode=mode, halves=1 if mode == "wg" else 2)
            banks = dict(zip(ENGINE_URAM_BANKS, engine_banks(
                {"TM": 4, "TN": 4, "XD": params.x_depth, "WD": params.w_depth,
                 "YD": params.dy_depth, "RD": params.res_depth, "MODE": params.mode,
                 "HALVES": params.halves}), strict=True))
            filled = {bank_of[b] for b in _MODE_BANKS[mode][0] if b != "bias"} | {"result"}
            held += sum(m.depth * m.width for b in filled for m in banks[b])
        assert layer.bank_bits(n, bits=16, acc_bits=48) == held


def test_the_search_keeps_each_board_engine_banks_within_the_share():
    """With `bank_share`, the optimal cuts give no board engine banks above that share of its
    RAM, where the cuts of least II do: a 64-channel layer, then three of 4 channels on the
    same 16 x 16 plane, whose engines each hold their whole input plane."""
    from dataclasses import replace

    from fpdeep.planning.partition import partition_optimal
    from fpdeep.planning.planner import bank_bits

    net = chain([64, 4, 4, 4], size=16, in_channels=64)
    board = parse_board(small_board(dsp=64, bram=400), "tiny.toml")
    cluster = make_cluster(board=board, boards=2)
    model = chain_model(net, precision=16, pipelining="image")
    room = board.bram_bits * cluster.util_cap

    def banks(planned) -> list[float]:
        return [bank_bits(model, cluster, bp) / room for bp in planned.boards]

    fastest = plan(net, cluster, strategy="optimal", chain=model)
    share = max(banks(fastest)) * 0.8
    spread_cluster = replace(cluster, bank_share=share)
    cuts = partition_optimal(model, spread_cluster, upper_ii=2**60)
    spread = evaluate(model, spread_cluster, cuts, strategy="optimal", batch=32)
    assert max(banks(spread)) <= share
    assert spread.totals.ii_cycles >= fastest.totals.ii_cycles


def test_lanes_for_a_slower_ii_take_fewer_dsps_and_still_keep_it():
    """`_lanes_for`: each board's DSPs for its slices to run in a given number of cycles (four
    times the least II here); evaluated with those caps, every board keeps within them."""
    from fpdeep.planning.planner import _lanes_for

    net = chain([16, 16, 16, 16], size=16, in_channels=8)
    cluster = make_cluster(board="vcu118", boards=2)
    model = chain_model(net, precision=16, pipelining="image")
    fastest = plan(net, cluster, strategy="optimal", chain=model)
    cycles = fastest.totals.ii_cycles * 4
    caps = _lanes_for(model, cluster, fastest, cycles)
    assert set(caps) == {0, 1}
    assert all(caps[bp.index] < bp.dsp_used for bp in fastest.boards)
    capped = evaluate(model, cluster.with_dsp_caps(caps), fastest.cuts, strategy="optimal",
                      batch=32)
    assert all(bp.dsp_used <= caps[bp.index] and bp.compute_cycles <= cycles
               for bp in capped.boards)


def test_lanes_for_fewer_cycles_than_a_slice_can_run_in_cap_nothing():
    """Where no number of lanes runs a board's slices in the cycles asked for (fewer than an
    engine's pipeline takes), its lanes are left as they are."""
    from fpdeep.planning.planner import _lanes_for

    net = chain([16, 16], size=16, in_channels=8)
    cluster = make_cluster(board="vcu118", boards=2)
    model = chain_model(net, precision=16, pipelining="image")
    assert _lanes_for(model, cluster, plan(net, cluster, strategy="optimal", chain=model), 1) == {}
