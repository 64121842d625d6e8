from __future__ import annotations

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


def test_link_cycles_uses_payload_rate():
    # 66 Gb/s line rate carries 64 Gb/s payload: 8e9 bytes/s; 8000 bytes -> 1 us -> 200 cycles.
    assert perf.link_cycles(bytes_per_image=8000, gbps=66, clock_mhz=200) == 200
    assert perf.link_cycles(bytes_per_image=8001, gbps=66, clock_mhz=200) == 201
    assert perf.link_cycles(bytes_per_image=0, gbps=66, clock_mhz=200) == 0


def test_link_rate_zero_is_an_error():
    with pytest.raises(FpdeepError, match=r"link rate \(Gb/s\) must be a positive number, got 0"):
        perf.link_cycles(bytes_per_image=1, gbps=0, clock_mhz=200)


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
