"""The pooling engine: configuration checks and RTL against fpdeep.golden.pool."""

from __future__ import annotations

import json

import pytest

from fpdeep.cosim.simulator import simulator_available
from fpdeep.design.pool import BAND_WORDS, PoolShape, band_channels, pool_config
from fpdeep.errors import FpdeepError
from fpdeep.ir import PoolAttrs
from fpdeep.planning.perf import POOL_LATENCY

CASES = [
    ("max2x2s2", {"kind": "max", "c": 3, "h": 6, "w": 6, "k": [2, 2], "stride": [2, 2],
                  "pads": [0, 0, 0, 0]}),
    ("max3x3s2p1", {"kind": "max", "c": 2, "h": 7, "w": 7, "k": [3, 3], "stride": [2, 2],
                    "pads": [1, 1, 1, 1]}),
    ("max3x3s2ceil", {"kind": "max", "c": 2, "h": 6, "w": 6, "k": [3, 3], "stride": [2, 2],
                      "pads": [0, 0, 0, 0], "ceil": True}),
    ("avg3x3s1p1", {"kind": "avg", "c": 2, "h": 5, "w": 5, "k": [3, 3], "stride": [1, 1],
                    "pads": [1, 1, 1, 1]}),
    ("avg2x2s2p1incl", {"kind": "avg", "c": 2, "h": 5, "w": 5, "k": [2, 2], "stride": [2, 2],
                        "pads": [1, 1, 1, 1], "include_pad": True}),
    ("avg3x3s2ceil", {"kind": "avg", "c": 1, "h": 6, "w": 6, "k": [3, 3], "stride": [2, 2],
                      "pads": [0, 0, 0, 0], "ceil": True}),
    # a window's last tap is the next window's first: back-to-back accumulation of one word
    ("avg1x3s2", {"kind": "avg", "c": 2, "h": 4, "w": 7, "k": [1, 3], "stride": [1, 2],
                  "pads": [0, 0, 0, 0]}),
    ("gap5x5", {"kind": "avg", "c": 3, "h": 5, "w": 5, "k": [5, 5], "stride": [1, 1],
                "pads": [0, 0, 0, 0]}),
]
# one build covers every case: buffers sized for the largest (C*H*W = 75, C*Ho*Wo = 50)
PARAMS = {"XD": 128, "YD": 64}


def test_pool_config_validates():
    shape = PoolShape.of(PoolAttrs(kernel=(2, 2), stride=(2, 2)), c=1, in_hw=(4, 4))
    with pytest.raises(FpdeepError, match="valid modes are max_fwd, max_bwd, avg_fwd, avg_bwd"):
        pool_config(shape, mode="min_fwd", in_frac=8, out_frac=8)
    with pytest.raises(FpdeepError, match="has 256 taps"):
        PoolShape.of(PoolAttrs(kernel=(16, 16)), c=1, in_hw=(16, 16))
    cfg = pool_config(shape, mode="avg_fwd", in_frac=10, out_frac=10)
    # four elements per window: r = 15 + 2, M_4 = 2**17 / 4 (docs/numerics.md §3.5)
    assert cfg.table[4] == 1 << 15 and cfg.ports["cfg_shift"] == 17
    assert shape.iterations() == 1 * 2 * 2 * 2 * 2


@pytest.mark.parametrize(("c", "in_hw", "out_hw", "limit", "band"), [
    (96, (55, 55), (27, 27), BAND_WORDS, 4),  # AlexNet's first max-pool: 4 x 3,025 words a run
    (6, (6, 6), (3, 3), 20, 1),  # a channel alone is larger than the limit: one at a time
    (4, (3, 3), (2, 2), 20, 2),  # two channels of 9 words fit 20, four do not
    (7, (2, 2), (1, 1), 20, 1),  # 7 is prime: only 1 or all 7, and 28 words are too many
    (8, (2, 2), (1, 1), 64, 8),  # the whole layer fits: one run
])
def test_a_band_is_the_most_channels_dividing_the_layer_that_fit(c, in_hw, out_hw, limit,
                                                                  band):
    assert band_channels(c, in_hw, out_hw, limit) == band


def test_alexnets_first_max_pool_takes_a_few_block_rams(tmp_path):
    """96 x 55 x 55 in: as one run its buffers took 1,056 BRAM36; in bands of 4 channels
    (12,100 words in, 2,916 out) they take 34."""
    import math

    from golden_nets import OnnxNet

    from fpdeep.design.mapping import RTL_MAPPING
    from fpdeep.design.units import _pool_unit
    from fpdeep.ir import Op
    from fpdeep.numerics import Numerics
    from fpdeep.planning.resources import unit_resources

    net = OnnxNet((96, 55, 55), seed=1)
    net.maxpool(3, 2)
    net.flatten()
    net.fc(2)
    network, _ = net.load(tmp_path / "pool.onnx")
    layer = next(la for la in network.layers if la.op is Op.MAXPOOL)
    unit = _pool_unit(network, layer, RTL_MAPPING[Op.MAXPOOL], ident="u", board=0,
                      numerics=Numerics())
    assert (unit.info["bands"], unit.info["in"], unit.info["out"]) == (24, 12100, 2916)
    assert math.ceil(unit_resources("fpdeep_pool", unit.params, "xcup").bram36) == 34


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
@pytest.mark.parametrize("mode", ["fwd", "bwd"])
def test_pool_rtl_bit_exact_and_cycles(run_testbench, tmp_path, mode):
    cases = [dict(c, mode=mode, seed=i + 7) for i, (_, c) in enumerate(CASES)]
    report = tmp_path / "cycles.json"
    run_testbench(toplevel="fpdeep_pool", parameters=PARAMS, test_module="tb_pool",
                  tb_args={"cases": cases, "report": str(report)})
    results = json.loads(report.read_text())
    assert [r["model"] for r in results] == [
        PoolShape.of(PoolAttrs(kernel=tuple(c["k"]), stride=tuple(c["stride"]),
                               pads=tuple(c["pads"]), ceil_mode=c.get("ceil", False)),
                     c=c["c"], in_hw=(c["h"], c["w"])).iterations() + POOL_LATENCY
        for c in cases
    ]
