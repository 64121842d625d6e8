from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fpdeep.planning import perf
from fpdeep.planning.allocate import EngineShape, Storage, allocate_board, cheapest, plan_memory

shapes = st.builds(EngineShape, st.integers(1, 20), st.integers(1, 20), st.sampled_from([1, 3]),
                   st.sampled_from([1, 3]), st.integers(1, 4), st.integers(1, 4))


def brute_cycles(shape: EngineShape, tm: int, tn: int) -> int:
    # Independent of perf.engine_cycles: walk the tiles of the loop nest.
    tiles = len(range(0, shape.co, tm)) * len(range(0, shape.ci, tn))
    return tiles * shape.kh * shape.kw * shape.ho * shape.wo + perf.ENGINE_LATENCY


@settings(max_examples=60, deadline=None)
@given(shape=shapes, slack=st.integers(0, 2000), per_mac=st.sampled_from([0.5, 1.0, 4.0]))
def test_cheapest_matches_exhaustive_search(shape, slack, per_mac):
    limit = shape.inner + perf.ENGINE_LATENCY + slack
    options = [
        (math.ceil(tm * tn * per_mac), tm, tn)
        for tm, tn in itertools.product(range(1, shape.co + 1), range(1, shape.ci + 1))
        if brute_cycles(shape, tm, tn) <= limit
    ]
    got = cheapest(shape, limit, per_mac)
    assert got is not None and options
    assert got.dsp == min(o[0] for o in options)
    assert got.cycles == brute_cycles(shape, got.tm, got.tn) <= limit


def test_cheapest_is_none_below_the_fully_parallel_time():
    shape = EngineShape(4, 4, 3, 3, 2, 2)
    assert cheapest(shape, shape.inner + perf.ENGINE_LATENCY - 1, 1.0) is None


@settings(max_examples=30, deadline=None)
@given(a=shapes, b=shapes, budget=st.integers(2, 30))
def test_allocation_minimises_the_slowest_engine(a, b, budget):
    best = None
    for ta in itertools.product(range(1, a.co + 1), range(1, a.ci + 1)):
        for tb in itertools.product(range(1, b.co + 1), range(1, b.ci + 1)):
            if ta[0] * ta[1] + tb[0] * tb[1] <= budget:
                worst = max(brute_cycles(a, *ta), brute_cycles(b, *tb))
                best = worst if best is None else min(best, worst)
    got = allocate_board([a, b], dsp_budget=budget, dsp_per_mac=1.0)
    assert got is not None
    assert sum(e.dsp for e in got) <= budget
    assert max(e.cycles for e in got) == best


def test_allocation_fails_when_one_lane_each_does_not_fit():
    shape = EngineShape(2, 2, 1, 1, 1, 1)
    assert allocate_board([shape] * 3, dsp_budget=2, dsp_per_mac=1.0) is None


def test_memory_spills_stash_first_then_streams_grads_weights():
    storage = Storage(buffers=100, streams=40, weights=300, grads=900, stash=400,
                      stash_per_image=100)
    mem = plan_memory(storage, bram_bits=600, uram_bits=600)  # 1740 bits wanted, 1200 held
    assert mem.spilled_bits == 540
    assert mem.buffers_fit
    # 400 stash bits out (write + read of one image's 100 of them: 200 bits), 40 streams bits
    # (write + read of one of the two ping-pong halves: 40 bits), 100 grads bits (read-modify-
    # write: 200 bits) -> 440 bits = 55 bytes per image.
    assert mem.traffic_bytes_per_image == pytest.approx(55.0)
    assert mem.bram_bits + mem.uram_bits == 1200


def test_buffers_must_fit_on_chip():
    mem = plan_memory(Storage(buffers=2000), bram_bits=600, uram_bits=600)
    assert not mem.buffers_fit


@settings(max_examples=30, deadline=None)
@given(shape=shapes, slack=st.integers(0, 400), max_tp=st.integers(1, 4))
def test_pixel_parallel_what_if_matches_exhaustive_search(shape, slack, max_tp):
    limit = shape.kh * shape.kw * shape.wo + perf.ENGINE_LATENCY + slack

    def cycles(tm, tn, tp):
        rows = len(range(0, shape.ho, tp))
        tiles = len(range(0, shape.co, tm)) * len(range(0, shape.ci, tn))
        return tiles * shape.kh * shape.kw * rows * shape.wo + perf.ENGINE_LATENCY

    options = [
        tm * tn * tp
        for tm, tn, tp in itertools.product(range(1, shape.co + 1), range(1, shape.ci + 1),
                                            range(1, max_tp + 1))
        if cycles(tm, tn, tp) <= limit
    ]
    got = cheapest(shape, limit, 1.0, max_tp)
    if not options:
        assert got is None
        return
    assert got is not None and got.dsp == min(options) and got.tp <= max_tp
    assert got.cycles == cycles(got.tm, got.tn, got.tp) <= limit


grouped = st.builds(lambda g, cog, ci, k, ho: EngineShape(g * cog, ci, k, k, ho, ho, groups=g),
                    st.integers(2, 6), st.integers(1, 6), st.integers(1, 6),
                    st.sampled_from([1, 3]), st.integers(1, 4))


@settings(max_examples=60, deadline=None)
@given(shape=grouped, slack=st.integers(0, 2000), per_mac=st.sampled_from([0.5, 1.0]))
def test_cheapest_grouped_takes_lanes_dividing_the_groups(shape, slack, per_mac):
    """A grouped conv runs its groups in turn, on lanes that divide the group sizes (the
    engine keeps a block of lanes inside one group)."""
    per = shape.co // shape.groups
    limit = shape.groups * shape.inner + perf.ENGINE_LATENCY + slack
    options = [
        (math.ceil(tm * tn * per_mac), tm, tn)
        for tm, tn in itertools.product(range(1, per + 1), range(1, shape.ci + 1))
        if per % tm == 0 and shape.ci % tn == 0
        and shape.groups * (per // tm) * (shape.ci // tn) * shape.inner
        + perf.ENGINE_LATENCY <= limit
    ]
    got = cheapest(shape, limit, per_mac)
    assert got is not None and options
    assert per % got.tm == 0 and shape.ci % got.tn == 0
    assert got.dsp == min(o[0] for o in options)
    assert got.cycles == shape.groups * (per // got.tm) * (shape.ci // got.tn) * shape.inner \
        + perf.ENGINE_LATENCY <= limit
