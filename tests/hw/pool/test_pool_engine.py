"""The pooling engine: configuration checks and RTL against fpdeep.golden.pool."""

from __future__ import annotations

import json

import pytest

from fpdeep.cosim.simulator import simulator_available
from fpdeep.design.pool import PoolShape, pool_config
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
