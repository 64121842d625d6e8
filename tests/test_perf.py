from __future__ import annotations

import math

import pytest
from conftest import F64_REL

from fpdeep.errors import FpdeepError
from fpdeep.planning import perf


def test_engine_cycles_counts_ceil_waste_and_latency():
    # 64 output channels on 10 lanes: 7 tiles (the last 4/10 full); 3 inputs on 2 lanes: 2 tiles.
    cycles = perf.engine_cycles(co=64, ci=3, kh=3, kw=3, ho=224, wo=224, tm=10, tn=2, latency=5)
    assert cycles == 7 * 2 * 9 * 224 * 224 + 5


def test_engine_cycles_default_latency_is_the_module_constant():
    got = perf.engine_cycles(co=4, ci=4, kh=1, kw=1, ho=1, wo=1, tm=4, tn=4)
    assert got == 1 + perf.ENGINE_LATENCY


def test_engine_cycles_one_lane_is_the_mac_count():
    macs = 5 * 7 * 3 * 3 * 6 * 6
    got = perf.engine_cycles(co=5, ci=7, kh=3, kw=3, ho=6, wo=6, tm=1, tn=1, latency=0)
    assert got == macs


@pytest.mark.parametrize("field", ["co", "ci", "kh", "kw", "ho", "wo", "tm", "tn"])
def test_engine_cycles_rejects_non_positive(field):
    args = dict(co=2, ci=2, kh=1, kw=1, ho=1, wo=1, tm=1, tn=1)
    args[field] = 0
    with pytest.raises(FpdeepError, match=f"{field} must be a positive integer, got 0"):
        perf.engine_cycles(**args)


def test_link_port_width_covers_the_payload_rate_in_whole_64_bit_words():
    # 4 x 25.78125 Gb/s = 103.125 Gb/s line, 100 Gb/s payload: 400 bits a cycle at 250 MHz
    assert perf.link_port_bits(gbps=4 * 25.78125, clock_mhz=250) == 448
    # 2 x 10.3125 Gb/s: 20 Gb/s payload, 80 bits a cycle at 250 MHz
    assert perf.link_port_bits(gbps=2 * 10.3125, clock_mhz=250) == 128
    # a slow link still gets the narrowest port; an exact multiple is not rounded up
    assert perf.link_port_bits(gbps=0.5, clock_mhz=250) == 64
    assert perf.link_port_bits(gbps=66 * 2, clock_mhz=250) == 512


def test_a_hop_moves_the_least_of_port_source_and_line_rate():
    # 128-bit ports hold 7 words of 18 bits; the source supplies one a cycle
    fast = perf.link_rate(gbps=20.625, clock_mhz=250, data_bits=16, port_bits=128)
    assert (fast.words_per_beat, fast.words_per_cycle, fast.bound) == (7, 1, "source")
    # 80 payload bits a cycle over 128-bit beats: 0.625 beats, 4.375 words a cycle
    assert fast.line_words_per_cycle == pytest.approx(0.625 * 7, rel=F64_REL)
    # 1.1 Gb/s: 4.267 payload bits a cycle, 1/30 of a 128-bit beat: 7/30 words a cycle
    slow = perf.link_rate(gbps=1.1, clock_mhz=250, data_bits=16, port_bits=128)
    assert slow.bound == "line rate"
    assert slow.words_per_cycle == pytest.approx(1.1e9 * 64 / 66 / 250e6 / 128 * 7, rel=F64_REL)
    # 8-bit data: 10-bit words, 6 in a 64-bit beat
    assert perf.link_rate(gbps=1, clock_mhz=250, data_bits=8, port_bits=64).words_per_beat == 6


def test_link_cycles_count_words_at_the_hop_rate():
    rate = perf.link_rate(gbps=20.625, clock_mhz=250, data_bits=16, port_bits=128)
    assert perf.link_cycles(bytes_per_image=8000, rate=rate) == 4000  # 4000 words, 1 a cycle
    assert perf.link_cycles(bytes_per_image=8001, rate=rate) == 4001
    assert perf.link_cycles(bytes_per_image=0, rate=rate) == 0
    slow = perf.link_rate(gbps=1.1, clock_mhz=250, data_bits=16, port_bits=128)
    # the slow line carries beats: 572 beats of 7 words, 9 frames of at most 64, each with a
    # header and a CRC trailer
    beats_per_cycle = 1.1e9 * 64 / 66 / 250e6 / 128
    assert perf.framed_beats(572) == 572 + 2 * 9
    assert perf.link_cycles(bytes_per_image=8000, rate=slow) == math.ceil(590 / beats_per_cycle)


def test_link_rate_zero_is_an_error():
    with pytest.raises(FpdeepError, match=r"link rate \(Gb/s\) must be a positive number, got 0"):
        perf.link_rate(gbps=0, clock_mhz=200, data_bits=16, port_bits=64)
    with pytest.raises(FpdeepError, match="link ports of 8 bits cannot hold a link word of 18"):
        perf.link_rate(gbps=1, clock_mhz=200, data_bits=16, port_bits=8)


def test_memory_port_is_a_power_of_two_axi_width():
    # 21.3 GB/s at 250 MHz: 681.6 bits a cycle -> 1024; 2 GB/s at 250 MHz: 64 bits
    assert perf.memory_port_bits(gbytes_per_s=21.3, clock_mhz=250) == 1024
    assert perf.memory_port_bits(gbytes_per_s=2, clock_mhz=250) == 64
    assert perf.memory_port_bits(gbytes_per_s=5, clock_mhz=250) == 256


def test_memory_cycles():
    # 10 GB/s, 1e6 bytes -> 100 us -> 25_000 cycles at 250 MHz.
    assert perf.memory_cycles(bytes_per_image=1e6, gbytes_per_s=10, clock_mhz=250) == 25_000


def test_ii_throughput_batch():
    ii = perf.initiation_interval(engine_cycles=[100, 250], link_cycles=[300], memory_cycles=[7])
    assert ii == 300
    assert perf.images_per_second(ii_cycles=ii, clock_mhz=300) == pytest.approx(1e6)
    t = perf.batch_cycles(batch=4, ii_cycles=ii, latency_cycles=1000, update_cycles=50)
    assert t == 3 * 300 + 1000 + 50
    assert perf.images_per_second_batch(batch=4, batch_cycles=t, clock_mhz=300) == pytest.approx(
        4 * 300e6 / 1950
    )


def test_gops_efficiency_energy():
    assert perf.gops(macs_per_image=10**9, images_per_s=3.0) == pytest.approx(6.0)
    # ratios of floats: the formula is the contract, not one rounding of it
    assert perf.dsp_efficiency(macs_per_image=500, mac_lanes=10, ii_cycles=100) == pytest.approx(
        0.5, rel=F64_REL)
    assert perf.images_per_joule(images_per_s=50.0, watts=25.0) == pytest.approx(2.0, rel=F64_REL)
    assert perf.engine_dsp(tm=3, tn=3, dsp_per_mac=0.5) == 5
    assert perf.engine_dsp(tm=4, tn=2, dsp_per_mac=4) == 32


def test_empty_pipeline_is_an_error():
    with pytest.raises(FpdeepError, match="no work"):
        perf.initiation_interval(engine_cycles=[])


def test_engine_cycles_of_a_grouped_conv_run_the_groups_in_turn():
    # 8 output channels in 4 groups of 2, 3 input channels per group, on 2 x 2 lanes
    assert perf.engine_cycles(co=8, ci=3, kh=3, kw=3, ho=2, wo=2, tm=2, tn=2, latency=0,
                              groups=4) == 4 * 1 * 2 * 9 * 4
    with pytest.raises(FpdeepError, match="groups=3 does not divide co=8"):
        perf.engine_cycles(co=8, ci=3, kh=1, kw=1, ho=1, wo=1, tm=1, tn=1, groups=3)
