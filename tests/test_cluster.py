from __future__ import annotations

import pytest

from fpdeep.errors import FpdeepError
from fpdeep.planning.cluster import make_cluster


def test_defaults_come_from_the_board():
    cluster = make_cluster(board="vcu118", boards=3)
    assert cluster.size == 3
    # the board files' lane rates are dyadic (25.78125 = 825/32, 10.3125 = 165/16), so lanes x
    # rate is exact in binary; the cap is the default copied, not computed
    assert cluster.link_gbps == (103.125, 103.125)
    assert cluster.clock_mhz == 250
    assert cluster.precision == 16 and cluster.util_cap == 0.85
    assert cluster.dsp_budget(0) == 5814


def test_mixed_cluster_uses_the_slower_side_of_each_link_and_the_slowest_clock():
    cluster = make_cluster(board=["vc709", "vcu118", "u250"])
    assert cluster.link_gbps == (20.625, 103.125)  # exact, as above
    assert cluster.clock_mhz == 200


@pytest.mark.parametrize("count", [0, -3])
def test_board_count_must_be_positive(count):
    with pytest.raises(FpdeepError, match=rf"boards must be a positive integer, got {count}"):
        make_cluster(board="vcu118", boards=count)


@pytest.mark.parametrize("rate", [0, -1.0, float("inf")])
def test_link_rate_must_be_positive(rate):
    with pytest.raises(FpdeepError, match="link rate must be a positive number of Gb/s"):
        make_cluster(board="vcu118", boards=2, link_gbps=rate)


def test_other_options_are_validated():
    with pytest.raises(FpdeepError, match="precision must be one of 8, 16, 32 bits, got 12"):
        make_cluster(board="vcu118", boards=2, precision=12)
    cap = "utilisation cap must be a number above 0 and at most 1, got 0"
    with pytest.raises(FpdeepError, match=cap):
        make_cluster(board="vcu118", boards=2, util_cap=0)
    for clock in (0, -5.0, float("nan"), float("inf"), 1e9):
        with pytest.raises(FpdeepError, match="clock must be a number above 0 and at most 1000"):
            make_cluster(board="vcu118", boards=2, clock_mhz=clock)
    with pytest.raises(FpdeepError, match="more than the 1024 boards"):
        make_cluster(board="vcu118", boards=1025)
    with pytest.raises(FpdeepError, match="topology 'ring' is not supported"):
        make_cluster(board="vcu118", boards=2, topology="ring")
    with pytest.raises(FpdeepError, match=r"boards \(3\) does not match the 2 boards listed"):
        make_cluster(board=["vcu118", "u250"], boards=3)


def test_pixel_lanes_what_if_must_be_positive():
    assert make_cluster(board="vcu118", boards=1).pixel_lanes == 1  # as generated
    with pytest.raises(FpdeepError, match="pixel_lanes must be a positive integer, got 0"):
        make_cluster(board="vcu118", boards=1, pixel_lanes=0)
