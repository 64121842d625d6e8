from __future__ import annotations

import re

import pytest
from conftest import F64_REL
from plan_nets import NetBuilder, chain
from test_partition import small_board

from fpdeep.errors import FpdeepError
from fpdeep.planning import perf
from fpdeep.planning.boards import parse_board
from fpdeep.planning.cluster import make_cluster
from fpdeep.planning.planner import plan


def test_single_layer_on_one_board_by_hand():
    # One 3x3 conv, 3 -> 8 channels on 6x6: no BP, so FP and WG engines share 24 DSPs.
    b = NetBuilder((3, 6, 6))
    net = b.build(b.conv("input", 8))
    board = parse_board(small_board(dsp=24, bram=64), "tiny.toml")
    cluster = make_cluster(board=board, boards=1, util_cap=1.0)
    result = plan(net, cluster)
    (bp,) = result.boards
    (sp,) = bp.slices
    assert sp.engines["bp"] is None
    fp, wg = sp.engines["fp"], sp.engines["wg"]
    # 12 lanes each is the best split: tm=4, tn=3 gives ceil(8/4) * ceil(3/3) = 2 tiles of
    # 9 * 36 = 324 cycles (8 x 1 lanes would take 3 tiles; one tile needs 24 lanes per engine).
    assert (fp.tm, fp.tn) == (4, 3) and fp.dsp == 12
    assert fp.cycles == 2 * 9 * 36 + perf.ENGINE_LATENCY
    assert wg.cycles == fp.cycles
    t = result.totals
    assert t.ii_cycles == fp.cycles
    assert t.images_per_s == pytest.approx(100e6 / fp.cycles)  # the board file's 100 MHz
    macs = 8 * 3 * 9 * 36 * 2  # FP + WG
    assert t.macs_per_image == macs
    assert t.dsp_efficiency == pytest.approx(macs / (24 * fp.cycles))
    assert t.gops == pytest.approx(2 * macs * t.images_per_s / 1e9)
    assert t.load_imbalance == pytest.approx(1.0, rel=F64_REL)  # max / mean, computed
    assert t.bottleneck == "compute on board 0"
    # image pipelining: one FP stage (load the 3x6x6 input, run, drain the 8x6x6 output),
    # one WG stage (load both at once, run); batch = (B-1) II + latency + update.
    x, y = 3 * 6 * 6, 8 * 6 * 6
    assert t.latency_cycles == (fp.cycles + x + y) + (wg.cycles + max(x, y))
    weights = 8 * 3 * 9
    assert t.update_cycles == -(-weights // 12)
    assert t.batch_cycles == 31 * t.ii_cycles + t.latency_cycles + t.update_cycles


def test_optimal_never_worse_than_fpdeep_on_a_vgg_like_net():
    net = chain([16, 16, 32, 32, 64, 64], size=16, fc=[256, 10])
    for n in (1, 2, 3, 5, 8):
        cluster = make_cluster(board="zcu102", boards=n)
        a = plan(net, cluster, strategy="fpdeep").totals.ii_cycles
        b = plan(net, cluster, strategy="optimal").totals.ii_cycles
        assert b <= a


def test_model_that_does_not_fit_says_the_smallest_chain():
    net = chain([4], size=4, fc=[256, 512])  # ~133k FC weights: 8.5 Mbit with accumulators
    board = parse_board(small_board(dsp=64, bram=1, gbytes=0.0001), "tiny.toml")
    with pytest.raises(FpdeepError) as info:
        plan(net, make_cluster(board=board, boards=2))
    match = re.search(r"smallest chain that fits has (\d+) boards", str(info.value))
    assert match, str(info.value)
    assert "does not fit on 2 x tiny" in str(info.value)
    k = int(match.group(1))
    plan(net, make_cluster(board=board, boards=k))  # fits
    with pytest.raises(FpdeepError):
        plan(net, make_cluster(board=board, boards=k - 1))


def test_model_that_fits_on_no_chain_says_why():
    b = NetBuilder((3, 64, 64))
    net = b.build(b.conv("input", 4))  # line buffers of a 64-wide 3x3 window exceed 31 kbit
    board = parse_board(small_board(dsp=64, bram=1), "tiny.toml")
    with pytest.raises(FpdeepError, match=r"line buffers on chip.*No number of boards fits"):
        plan(net, make_cluster(board=board, boards=1))


def test_bad_strategy_and_batch():
    net = chain([2])
    cluster = make_cluster(board="vcu118", boards=1)
    with pytest.raises(FpdeepError, match="unknown partition strategy 'best'; known: fpdeep, "
                                          "optimal"):
        plan(net, cluster, strategy="best")
    with pytest.raises(FpdeepError, match="batch must be a positive integer"):
        plan(net, cluster, batch=0)


def test_split_layer_traffic_reaches_the_links():
    net = chain([8, 8], size=4)
    result = plan(net, make_cluster(board="vcu118", boards=4, link_gbps=10))
    for link in result.links:
        assert link.bytes_forward > 0
        # 10 Gb/s at 250 MHz: 38.8 payload bits a cycle, 64-bit ports of 3 words: 1.82 words
        # a cycle on the line, so the one-word-a-cycle source bounds the hop
        assert link.rate.port_bits == 64 and link.rate.bound == "source"
        words = -(-max(link.bytes_forward, link.bytes_backward) // 2)
        assert link.cycles == words


@pytest.mark.parametrize("strategy", ["fpdeep", "optimal"])
def test_link_bytes_are_what_the_generated_links_carry_where_a_layer_spans_three_boards(
        tmp_path, strategy):
    """The reference is the generated design's task graph: every link task's bytes, per hop
    and direction. A layer split over three boards sends each slice's raw partial input
    errors to the board its input is held on, where they are added: the link next to it
    carries two of them (the chain model alone counts one a cut: 5,888 bytes, not 8,960)."""
    from dataclasses import replace

    from golden_nets import OnnxNet

    from fpdeep.design.lower import lower
    from fpdeep.planning.boards import get_board
    from fpdeep.schedule.tasks import link_hops, schedule

    net = OnnxNet((4, 8, 8), seed=5)
    for channels in (8, 48, 8):
        net.conv(channels, 3, pads=(1, 1, 1, 1))
        net.relu()
    net.flatten()
    net.fc(10)
    network = net.load(tmp_path / "net.onnx")[0]
    board = replace(get_board("zcu102"), dsp=64)
    result = plan(network, make_cluster(board=board, boards=4), batch=2, strategy=strategy)
    boards_of_conv5 = [b.index for b in result.boards for s in b.slices
                       if s.slice.layer == "conv5"]
    if strategy == "fpdeep":
        assert boards_of_conv5 == [0, 1, 2]
    carried = {(a, a + s): 0 for a in range(4) for s in (-1, 1)}
    for task in schedule(lower(network, result), network, batch=1).tasks:
        if task.kind == "link":
            for hop in link_hops(task):
                carried[hop] += task.bytes
    assert [link.bytes_forward for link in result.links] == [carried[b, b + 1] for b in range(3)]
    assert [link.bytes_backward for link in result.links] == [carried[b + 1, b] for b in range(3)]
    if strategy == "fpdeep":
        assert result.links[0].bytes_backward == 8_960


def test_pixel_lanes_what_if_lowers_the_spatial_floor():
    # One 3x3 conv on 16x16: with channel lanes only, an image takes at least 9 * 16 * 16 cycles.
    b = NetBuilder((4, 16, 16))
    net = b.build(b.conv("input", 4))
    base = plan(net, make_cluster(board="vcu118", boards=1))
    assert base.totals.ii_cycles == 9 * 16 * 16 + perf.ENGINE_LATENCY
    wide = plan(net, make_cluster(board="vcu118", boards=1, pixel_lanes=16))
    assert wide.totals.ii_cycles == 9 * 16 + perf.ENGINE_LATENCY
    fp = wide.boards[0].slices[0].engines["fp"]
    assert (fp.tm, fp.tn, fp.tp) == (4, 4, 16)


def test_too_big_for_fpdeep_points_to_optimal_when_it_needs_fewer_boards():
    # A light conv then two FC layers: the equal-work split puts nearly all FC weights on the last
    # board, while optimal spreads them by storage.
    net = chain([16, 16], size=8, fc=[512, 512])
    board = parse_board(small_board(dsp=64, bram=16, gbytes=0.0002), "tiny.toml")
    with pytest.raises(FpdeepError) as info:
        plan(net, make_cluster(board=board, boards=2), strategy="fpdeep")
    message = str(info.value)
    found = re.search(r"has (\d+) boards \((\d+) with --partition optimal", message)
    assert found, message
    k_fpdeep, k_opt = int(found.group(1)), int(found.group(2))
    assert k_opt < k_fpdeep
    plan(net, make_cluster(board=board, boards=k_opt), strategy="optimal")
    with pytest.raises(FpdeepError, match=rf"smallest chain that fits has {k_opt} boards\."):
        plan(net, make_cluster(board=board, boards=k_opt - 1), strategy="optimal")
