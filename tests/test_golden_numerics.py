"""Fixed-point primitives and integer Conv/FC against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fpdeep.errors import FpdeepError
from fpdeep.golden import conv, fc
from fpdeep.ir import ConvAttrs
from fpdeep.numerics import (
    Format,
    Numerics,
    dequantise,
    quantise,
    reciprocal_table,
    requantise,
    round_shift,
    saturate,
    scale_constant,
    wrap,
)

Q16_8 = Format(16, 8)


def test_round_half_up_ties_positive_and_negative():
    # 1.5 -> 2, 2.5 -> 3, -1.5 -> -1, -2.5 -> -2, -0.5 -> 0, 0.5 -> 1 (shift by 1 = halve)
    x = np.array([3, 5, -3, -5, -1, 1])
    assert round_shift(x, 1).tolist() == [2, 3, -1, -2, 0, 1]
    # quarter steps with shift 2: 0.25 -> 0, 0.75 -> 1, -0.25 -> 0, -0.75 -> -1
    assert round_shift(np.array([1, 3, -1, -3]), 2).tolist() == [0, 1, 0, -1]


def test_round_shift_does_not_overflow_near_int64_limit():
    big = np.array([2**62 - 1, -(2**62)], dtype=np.int64)
    # (2^62 - 1) / 2^40 = 4194304 - 2^-40 -> 4194304; -(2^62)/2^40 = -4194304 exactly.
    assert round_shift(big, 40).tolist() == [4194304, -4194304]


def test_requantise_saturates_both_ends_and_keeps_most_negative():
    # 16-bit output from 8 extra fractional bits: 32767.5 -> 32768 saturates to 32767.
    x = np.array([32767 * 256 + 128, -32768 * 256, -32768 * 256 - 129, 40000 * 256])
    assert requantise(x, 8, Q16_8).tolist() == [32767, -32768, -32768, 32767]
    # Left shift (output has more fractional bits): 100 << 2 = 400; 20000 << 2 saturates.
    assert requantise(np.array([100, 20000, -20000]), -2, Q16_8).tolist() == [400, 32767, -32768]


def test_quantise_rounds_half_up_and_saturates():
    q = quantise([1.5 / 256, -1.5 / 256, 2.5 / 256, -2.5 / 256, 1e9, -1e9, -128.0], Q16_8)
    assert q.tolist() == [2, -1, 3, -2, 32767, -32768, -32768]
    assert dequantise(np.array([-32768, 384]), Q16_8).tolist() == [-128.0, 1.5]  # x 2**-8: exact
    with pytest.raises(FpdeepError, match="NaN"):
        quantise([np.nan], Q16_8)


def test_saturate_and_wrap():
    assert saturate(np.array([-40000, 40000, 5]), Q16_8).tolist() == [-32768, 32767, 5]
    # 2^47 wraps to -2^47; -2^47 - 1 wraps to 2^47 - 1; 2^48 + 3 wraps to 3.
    x = np.array([2**47, -(2**47) - 1, 2**48 + 3])
    assert wrap(x, 48).tolist() == [-(2**47), 2**47 - 1, 3]


def test_scale_constants():
    assert scale_constant(1 / 3) == (43691, 17)  # 2^17/3 = 43690.67
    assert scale_constant(0.5) == (32768, 16)
    assert scale_constant(1.0) == (32768, 15)
    assert scale_constant(0.1) == (52429, 19)  # 0.1 * 2^19 = 52428.8
    mult, r = reciprocal_table(np.array([9, 6, 4]))
    # r = 15 + ceil(log2 9) = 19; 2^19/9 = 58254.2, /6 = 87381.3, /4 = 131072
    assert r == 19 and mult.tolist() == [58254, 87381, 131072]


def test_numerics_overrides_and_errors():
    nm = Numerics(formats={"act": Format(16, 9)}, overrides={"conv1": {"err": Format(12, 10)}})
    assert nm.fmt("act") == Format(16, 9)
    assert nm.fmt("err", "conv1") == Format(12, 10)
    assert nm.fmt("err", "conv2") == nm.fmt("err")
    with pytest.raises(FpdeepError, match="unknown tensor class 'bias'.*act, weight, err, grad"):
        Numerics(formats={"bias": Format()})
    with pytest.raises(FpdeepError, match="width 64 is not supported"):
        Format(64, 8)


def _rq(acc: int, shift: int) -> int:
    """Round half up and saturate to 16 bits with Python integers."""
    return min(max((acc + (1 << (shift - 1))) >> shift, -32768), 32767)


def _naive_conv(x, w, b, e, stride, pads, groups):
    """Loop references of the three passes with plain Python integers (no im2col)."""
    bsz, _, h, wd = x.shape
    co, ci, kh, kw = w.shape  # ci: input channels per group
    (sh, sw), (pt, pl, pb, pr) = stride, pads
    ho, wo = (h + pt + pb - kh) // sh + 1, (wd + pl + pr - kw) // sw + 1
    y = {(n, o, i, j): int(b[o]) << 8 for n in range(bsz) for o in range(co)
         for i in range(ho) for j in range(wo)}
    dx, dw = {}, {}
    for (n, o, i, j) in list(y):
        first = o // (co // groups) * ci
        for c in range(ci):
            for u in range(kh):
                for v in range(kw):
                    r, q = i * sh + u - pt, j * sw + v - pl
                    if 0 <= r < h and 0 <= q < wd:
                        xv, wv = int(x[n, first + c, r, q]), int(w[o, c, u, v])
                        ev = int(e[n, o, i, j])
                        y[n, o, i, j] += xv * wv
                        dx[n, first + c, r, q] = dx.get((n, first + c, r, q), 0) + ev * wv
                        dw[o, c, u, v] = dw.get((o, c, u, v), 0) + ev * xv
    return y, dx, dw


@pytest.mark.parametrize(
    "k,stride,pads,groups",
    [(3, (1, 1), (1, 1, 1, 1), 1), (2, (2, 1), (0, 1, 1, 0), 1), (5, (2, 2), (2, 2, 2, 2), 1),
     (3, (1, 2), (1, 0, 1, 2), 2)],
)
def test_conv_passes_match_loop_reference(k, stride, pads, groups):
    rng = np.random.default_rng(k)
    x = rng.integers(-4096, 4096, size=(2, 4, 7, 6))
    x[0, 0, 0, :] = -32768  # most negative input values too
    w = rng.integers(-4096, 4096, size=(6, 4 // groups, k, k))
    b = rng.integers(-32768, 32768, size=6)
    attrs = ConvAttrs(kernel=(k, k), stride=stride, pads=pads, groups=groups, has_bias=True)
    ho, wo = conv.out_hw(attrs, (7, 6))
    e = rng.integers(-4096, 4096, size=(2, 6, ho, wo))
    y_ref, dx_ref, dw_ref = _naive_conv(x, w, b, e, stride, pads, groups)
    # x Q16.8, w Q16.12 -> acc frac 20 -> out Q16.6: shift 14.
    y = conv.forward(x, w, b, attrs=attrs, x_fmt=Q16_8, w_fmt=Format(16, 12),
                     out_fmt=Format(16, 6))
    assert all(y[key] == _rq(acc, 14) for key, acc in y_ref.items())
    # e Q16.8, w Q16.12 -> dx Q16.10: shift 10. Positions no tap reaches get 0.
    dx = conv.backward(e, w, attrs=attrs, in_hw=(7, 6), e_fmt=Q16_8, w_fmt=Format(16, 12),
                       out_fmt=Format(16, 10))
    expect = np.zeros_like(dx)
    for key, acc in dx_ref.items():
        expect[key] = _rq(acc, 10)
    assert np.array_equal(dx, expect)
    dw, db = conv.weight_gradient(e, x, attrs=attrs)
    assert all(dw[key] == acc for key, acc in dw_ref.items()) and len(dw_ref) == dw.size
    assert db.tolist() == [int(v) for v in e.sum(axis=(0, 2, 3))]


def test_conv_accumulator_wraps_at_48_bits():
    # 1x1 conv over 300 input channels of (-32768) * (-32768) = 2^30 each: sum = 300 * 2^30
    # = 2^38 * 75, below 2^47 -> no wrap. With 2^18 channels the sum is 2^48 -> wraps to 0.
    attrs = ConvAttrs(kernel=(1, 1))
    fmt = Format(16, 0)
    x = np.full((1, 300, 1, 1), -32768)
    w = np.full((1, 300, 1, 1), -32768)
    acc_fmt = Format(32, 0)
    assert conv.forward(x, w, attrs=attrs, x_fmt=fmt, w_fmt=fmt,
                        out_fmt=Format(32, -8)).item() == (300 << 30) >> 8
    n = 1 << 18
    x = np.full((1, n, 1, 1), -32768)
    w = np.full((1, n, 1, 1), -32768)
    assert conv.forward(x, w, attrs=attrs, x_fmt=fmt, w_fmt=fmt, out_fmt=acc_fmt).item() == 0
    # One more product of -1 * 1 (2^48 - 1 in all) wraps to -1.
    x2 = np.concatenate([x, np.full((1, 1, 1, 1), -1)], axis=1)
    w2 = np.concatenate([w, np.full((1, 1, 1, 1), 1)], axis=1)
    assert conv.forward(x2, w2, attrs=attrs, x_fmt=fmt, w_fmt=fmt, out_fmt=acc_fmt).item() == -1


def test_fc_forward_backward_by_hand():
    # x = [1.5, -2.0] (Q16.8: 384, -512), W = [[0.5, 0.25], [-1, 1]] (Q16.12), b = [0.125, 0]
    x = np.array([[384, -512]])
    w = np.array([[2048, 1024], [-4096, 4096]])
    b = np.array([512, 0])
    y = fc.forward(x, w, b, x_fmt=Q16_8, w_fmt=Format(16, 12), out_fmt=Q16_8)
    # y0 = 0.75 - 0.5 + 0.125 = 0.375 -> 96; y1 = -1.5 - 2.0 = -3.5 -> -896
    assert y.tolist() == [[96, -896]]
    e = np.array([[256, -128]])  # [1.0, -0.5] in Q16.8
    dx = fc.backward(e, w, e_fmt=Q16_8, w_fmt=Format(16, 12), out_fmt=Q16_8)
    # dx0 = 0.5 + 0.5 = 1.0 -> 256; dx1 = 0.25 - 0.5 = -0.25 -> -64
    assert dx.tolist() == [[256, -64]]
    dw, db = fc.weight_gradient(e, x)
    # acc frac 16: dW = e^T x = [[1.5, -2], [-0.75, 1]] * 2^16
    assert dw.tolist() == [[98304, -131072], [-49152, 65536]] and db.tolist() == [256, -128]


def test_integer_ops_refuse_floats():
    with pytest.raises(FpdeepError, match="FC input must be an integer array"):
        fc.forward(np.zeros((1, 2)), np.zeros((1, 2), np.int64), x_fmt=Q16_8, w_fmt=Q16_8,
                   out_fmt=Q16_8)


def test_requantise_with_per_element_shifts():
    # Right shift by 8 of 2^20 -> 4096 must not be clamped by the left-shifted neighbour.
    got = requantise(np.array([1 << 20, 20000, 3]), np.array([8, -1, 0]), Q16_8)
    assert got.tolist() == [4096, 32767, 3]


@given(st.integers(-(2**62), 2**62 - 1), st.integers(-20, 62), st.integers(2, 32),
       st.integers(-16, 40))
def test_requantise_is_round_half_up_then_saturate(x, shift, width, frac):
    fmt = Format(width, frac)
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    # Python integers: no overflow, // floors.
    exact = (x + (1 << (shift - 1))) // (1 << shift) if shift > 0 else x * (1 << -shift)
    assert requantise(np.array([x]), shift, fmt).item() == min(max(exact, lo), hi)
