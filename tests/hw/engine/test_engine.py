"""The loop-nest engine: its configuration (pure) and its RTL against the golden model."""

from __future__ import annotations

import itertools
import json

import pytest

from fpdeep.cosim.simulator import simulator_available
from fpdeep.design.engine import (
    QUANTITIES,
    EngineParams,
    LoopShape,
    _coefficients,
    bounds,
    engine_config,
    engine_params,
    jumps,
)
from fpdeep.errors import FpdeepError
from fpdeep.golden import conv
from fpdeep.hwlib import ENGINE
from fpdeep.ir import ConvAttrs

TM, TN = 2, 3  # channel counts below are deliberately not multiples of these

# (name, case) pairs; conv cases give kernel, stride, pads (top, left, bottom, right).
CONV_CASES = [
    ("k3s1p1", {"kind": "conv", "ci": 4, "co": 5, "h": 5, "w": 5, "k": [3, 3], "stride": [1, 1],
                "pads": [1, 1, 1, 1]}),
    # full-scale operands: the requantiser's saturation is exercised
    ("k1s2", {"kind": "conv", "ci": 3, "co": 3, "h": 6, "w": 6, "k": [1, 1], "stride": [2, 2],
              "pads": [0, 0, 0, 0], "mag": 15}),
    ("k5s2p2", {"kind": "conv", "ci": 2, "co": 3, "h": 7, "w": 7, "k": [5, 5], "stride": [2, 2],
                "pads": [2, 2, 2, 2]}),
    ("k11s4p2", {"kind": "conv", "ci": 1, "co": 2, "h": 15, "w": 15, "k": [11, 11],
                 "stride": [4, 4], "pads": [2, 2, 2, 2]}),
    ("k3x2s21asym", {"kind": "conv", "ci": 2, "co": 4, "h": 6, "w": 5, "k": [3, 2],
                     "stride": [2, 1], "pads": [0, 1, 1, 0]}),
    # output with more fractional bits than the accumulator: a negative (left) shift
    ("fc7x5", {"kind": "fc", "ci": 7, "co": 5, "out_frac": 30}),
]


def _shape(case: dict) -> LoopShape:
    if "slice" in case:
        return _shape({k: v for k, v in case.items() if k != "slice"}).slice(*case["slice"])
    if case["kind"] == "fc":
        return LoopShape.fc(in_features=case["ci"], out_features=case["co"])
    attrs = ConvAttrs(kernel=tuple(case["k"]), stride=tuple(case["stride"]),
                      pads=tuple(case["pads"]), groups=case.get("groups", 1))
    hw = (case["h"], case["w"])
    return LoopShape.conv(attrs, ci=case["ci"], co=case["co"], in_hw=hw,
                          out_hw=conv.out_hw(attrs, hw))


# Grouped and depthwise conv (C=4): lanes that divide the group sizes, stride 1 and 2, pads;
# "lanes" is the (tm, tn) split each case runs on.
GROUP_CASES = [
    ("g2k3s1p1", {"kind": "conv", "ci": 4, "co": 4, "h": 5, "w": 5, "k": [3, 3],
                  "stride": [1, 1], "pads": [1, 1, 1, 1], "groups": 2, "lanes": (2, 2)}),
    ("g2k3s2", {"kind": "conv", "ci": 4, "co": 8, "h": 6, "w": 6, "k": [3, 3],
                "stride": [2, 2], "pads": [0, 0, 1, 1], "groups": 2, "lanes": (2, 2)}),
    ("dw4k3s1p1", {"kind": "conv", "ci": 4, "co": 4, "h": 5, "w": 5, "k": [3, 3],
                   "stride": [1, 1], "pads": [1, 1, 1, 1], "groups": 4, "lanes": (1, 1)}),
    ("dw4k3s2p1", {"kind": "conv", "ci": 4, "co": 4, "h": 6, "w": 6, "k": [3, 3],
                   "stride": [2, 2], "pads": [1, 1, 1, 1], "groups": 4, "lanes": (1, 1)}),
    # channel multiplier 2: two output channels per input channel, on two output lanes
    ("dw4x2k3", {"kind": "conv", "ci": 4, "co": 8, "h": 5, "w": 5, "k": [3, 3],
                 "stride": [1, 1], "pads": [1, 1, 1, 1], "groups": 4, "lanes": (2, 1)}),
    # a board's slice of whole groups (output channels 2..5 of 8: groups 1 and 2 of 4): only
    # their input channels are read; BP gives the input error of these output channels alone
    ("dw4x2slice", {"kind": "conv", "ci": 4, "co": 8, "h": 5, "w": 5, "k": [3, 3],
                    "stride": [1, 1], "pads": [1, 1, 1, 1], "groups": 4, "lanes": (2, 1),
                    "slice": (2, 6)}),
    ("dw4slice", {"kind": "conv", "ci": 4, "co": 4, "h": 6, "w": 6, "k": [3, 3],
                  "stride": [2, 2], "pads": [1, 1, 1, 1], "groups": 4, "lanes": (1, 1),
                  "slice": (1, 4)}),
]

# One engine build serves every case: depths cover the largest shape.
PARAMS = engine_params([_shape(c) for _, c in CONV_CASES], tm=TM, tn=TN)


# ------------------------------------------------------------------------------- pure


def _direct(shape: LoopShape, tm: int, tn: int, idx: tuple[int, ...]) -> dict[str, int]:
    """The quantities written out from their definitions (independent of the jump algebra)."""
    grp, cob, cib, kh, kw, ho, wo = idx
    n_cob, n_cib = shape.blocks(tm, tn)
    gcob, gcib = grp * n_cob + cob, grp * n_cib + cib  # blocks counted over every group
    hi = ho * shape.sh + kh - shape.pt
    wi = wo * shape.sw + kw - shape.pl
    return {
        "co0": grp * shape.co_group + cob * tm,
        "ci0": (shape.group_lo + grp) * shape.ci_group + cib * tn, "hi": hi, "wi": wi,
        "x_addr": ((shape.group_lo * n_cib + gcib) * shape.h + hi) * shape.w + wi,
        "w_addr": ((gcob * n_cib + cib) * shape.kh + kh) * shape.kw + kw,
        "dy_addr": (gcob * shape.ho + ho) * shape.wo + wo,
        "b_addr": gcob,
    }


@pytest.mark.parametrize(("name", "case"), CONV_CASES + GROUP_CASES,
                         ids=[n for n, _ in CONV_CASES + GROUP_CASES])
def test_jumps_track_every_quantity(name, case):
    shape = _shape(case)
    tm, tn = case.get("lanes", (TM, TN))
    bound = bounds(shape, tm, tn)
    coefs = _coefficients(shape, tm, tn)
    q = {k: coefs[k][1] for k in QUANTITIES}
    order = list(itertools.product(*(range(b) for b in bound)))
    for step, idx in enumerate(order):
        assert q == _direct(shape, tm, tn, idx), f"{name}: wrong at iteration {idx}"
        if step + 1 < len(order):
            nxt = order[step + 1]
            level = next(i for i in range(len(idx)) if nxt[i] != idx[i])
            for k in QUANTITIES:
                q[k] += jumps(coefs[k][0], bound)[level]


def test_iterations_is_the_ceil_formula():
    shape = _shape(CONV_CASES[0][1])  # ci 4, co 5, 3x3, 5x5 output
    assert shape.iterations(TM, TN) == 3 * 2 * 9 * 25


def test_engine_config_validates():
    shape = LoopShape.fc(in_features=4, out_features=3)
    with pytest.raises(FpdeepError, match="valid modes are fp, bp, wg"):
        engine_config(shape, mode="xx", tm=1, tn=1)
    with pytest.raises(FpdeepError, match="shift must be an integer from -32 to 47"):
        engine_config(shape, mode="fp", tm=1, tn=1, shift=-33)
    # -1 in the shift field's two's complement: all ones
    assert engine_config(shape, mode="fp", tm=1, tn=1, shift=-1).ports["cfg_shift"] == (
        ENGINE.mask("cfg_shift"))
    with pytest.raises(FpdeepError, match="tm .MAC lanes. must be a positive integer"):
        engine_config(shape, mode="fp", tm=0, tn=1)
    small = EngineParams(1, 1, 2, 2, 2, 2, 2)
    with pytest.raises(FpdeepError, match="needs bank depths"):
        engine_config(shape, mode="fp", tm=1, tn=1, params=small)
    grouped = LoopShape.conv(ConvAttrs(kernel=(3, 3), groups=2), ci=4, co=6, in_hw=(5, 5),
                             out_hw=(3, 3))
    with pytest.raises(FpdeepError, match=r"groups=2 \(3 output and 2 input channels per "
                       r"group\) needs tm dividing 3 and tn dividing 2, got tm=2, tn=1"):
        engine_config(grouped, mode="fp", tm=2, tn=1)
    with pytest.raises(FpdeepError, match="groups=4 must divide co=6"):
        LoopShape(co=6, ci=4, h=1, w=1, groups=4)
    with pytest.raises(FpdeepError, match="does not fit input"):
        LoopShape(co=1, ci=1, h=4, w=4, kh=1, kw=1, ho=9, wo=1)


def test_engine_params_are_powers_of_two_that_fit():
    for _, case in CONV_CASES:
        engine_config(_shape(case), mode="wg", tm=TM, tn=TN, params=PARAMS)
    for depth in (PARAMS.x_depth, PARAMS.w_depth, PARAMS.dy_depth, PARAMS.res_depth):
        assert depth & (depth - 1) == 0


# ------------------------------------------------------------------------------- RTL

# A second lane split (4 x 1) checks that nothing assumes the first one; it reruns a few cases.
SECOND = (4, 1, [1, 2, 4, 5])
PARAMS2 = engine_params([_shape(CONV_CASES[i][1]) for i in SECOND[2]], tm=SECOND[0],
                        tn=SECOND[1])


def _run_cases(run_testbench, tmp_path, params: EngineParams, cases: list[dict]) -> list[dict]:
    """Run ``cases`` on one engine build; the testbench's report of each."""
    report = tmp_path / "cycles.json"
    run_testbench(toplevel="fpdeep_engine", parameters=params.as_parameters(),
                  test_module="tb_engine",
                  tb_args={"tm": params.tm, "tn": params.tn, "cases": cases,
                           "report": str(report)})
    results = json.loads(report.read_text())
    assert len(results) == len(cases)
    return results


@pytest.mark.parametrize(
    ("tm", "tn", "mode"),
    [(TM, TN, "fp"), (TM, TN, "bp"), (TM, TN, "wg"), (SECOND[0], SECOND[1], "bp"),
     (SECOND[0], SECOND[1], "wg")],
)
@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
def test_engine_rtl_bit_exact_and_cycles(run_testbench, tmp_path, tm, tn, mode):
    picked = range(len(CONV_CASES)) if (tm, tn) == (TM, TN) else SECOND[2]
    params = PARAMS if (tm, tn) == (TM, TN) else PARAMS2
    # Bias on every other case; WG accumulates a mini-batch of two images.
    cases = [dict(CONV_CASES[i][1], mode=mode, seed=i + 11 * len(mode) + tm, bias=i % 2 == 0,
                  batch=2 if mode == "wg" else 1) for i in picked]
    if (tm, tn) == (TM, TN):
        # the first case again, three images with the double buffers in use
        cases.append(dict(CONV_CASES[0][1], mode=mode, seed=5, batch=3, overlap=True))
    results = _run_cases(run_testbench, tmp_path, params, cases)
    for r in results:
        if r["case"].get("overlap"):
            assert r["window"] <= 3 * r["run"] + 6
            continue
        for cycles in r["cycles"]:
            assert abs(cycles - r["model"]) <= 0.02 * r["model"]


@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
def test_a_wg_engine_with_one_result_half_is_bit_exact(run_testbench, tmp_path):
    """A board's WG engine has one result half per lane (HALVES 1): its runs hold over the
    mini-batch and its one drain comes at the step's flush. Mini-batches one after another on
    one build (each flush's drain must be over before the next batch's first run takes the
    half), the last with the operand double buffers in use: bit-exact, in the modelled
    cycles, and no slower than with two halves."""
    params = engine_params([_shape(c) for _, c in CONV_CASES], tm=TM, tn=TN, mode="wg",
                           halves=1)
    assert params.as_parameters()["HALVES"] == 1
    cases = [dict(c, mode="wg", seed=i + 3, bias=i % 2 == 0, batch=2)
             for i, (_, c) in enumerate(CONV_CASES)]
    cases.append(dict(CONV_CASES[0][1], mode="wg", seed=5, batch=3, overlap=True))
    for r in _run_cases(run_testbench, tmp_path, params, cases):
        if r["case"].get("overlap"):
            assert r["window"] <= 3 * r["run"] + 6
            continue
        for cycles in r["cycles"]:
            assert abs(cycles - r["model"]) <= 0.02 * r["model"]


@pytest.mark.parametrize("lanes", sorted({c["lanes"] for _, c in GROUP_CASES}))
@pytest.mark.sim
@pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed")
def test_engine_rtl_grouped_conv(run_testbench, tmp_path, lanes):
    """Grouped and depthwise conv, FP, BP and WG, bit-exact and in the modelled cycles."""
    tm, tn = lanes
    picked = [c for _, c in GROUP_CASES if c["lanes"] == lanes]
    params = engine_params([_shape(c) for c in picked], tm=tm, tn=tn)
    cases = [dict(c, lanes=list(lanes), mode=mode, seed=7 * i + len(mode), bias=i % 2 == 0,
                  batch=2 if mode == "wg" else 1)
             for i, c in enumerate(picked) for mode in ("fp", "bp", "wg")]
    for r in _run_cases(run_testbench, tmp_path, params, cases):
        assert all(c == r["model"] for c in r["cycles"]), r


def test_loop_shape_of_ir_layers():
    from fpdeep.ir import FCAttrs, Layer, Op

    conv_layer = Layer(name="c1", op=Op.CONV, inputs=("x",), output="y", in_shapes=((3, 8, 8),),
                       out_shape=(6, 4, 4),
                       attrs=ConvAttrs(kernel=(3, 3), stride=(2, 2), pads=(1, 1, 1, 1)))
    shape = LoopShape.of_layer(conv_layer)
    assert (shape.co, shape.ci, shape.h, shape.kh, shape.sh, shape.pt, shape.ho) == (
        6, 3, 8, 3, 2, 1, 4)
    assert LoopShape.of_layer(conv_layer, co=2).co == 2  # a slice of the output channels
    fc_layer = Layer(name="f1", op=Op.FC, inputs=("y",), output="z", in_shapes=((96,),),
                     out_shape=(10,), attrs=FCAttrs(in_features=96, out_features=10))
    assert LoopShape.of_layer(fc_layer) == LoopShape.fc(in_features=96, out_features=10)
    relu = Layer(name="r", op=Op.RELU, inputs=("z",), output="r", in_shapes=((10,),),
                 out_shape=(10,))
    with pytest.raises(FpdeepError, match="is not a Conv or FC layer"):
        LoopShape.of_layer(relu)
