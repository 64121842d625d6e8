"""Per-op checks: finite differences for the float reference, hand-worked integer cases."""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pytest

from fpdeep.errors import FpdeepError
from fpdeep.golden import add, conv, fc, flatten, loss, pool, relu, sgd
from fpdeep.ir import ConvAttrs, PoolAttrs
from fpdeep.numerics import Format

RNG = np.random.default_rng(1234)
Q8 = Format(16, 8)


def numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar function f at x, element by element."""
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f(x)
        flat[i] = old - eps
        down = f(x)
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return g


def assert_close(a, b, tol=1e-6):
    scale = max(1.0, float(np.abs(b).max()))
    assert np.abs(a - b).max() <= tol * scale, np.abs(a - b).max()


# ------------------------------------------------------------- finite differences, float


@pytest.mark.parametrize(
    "shape,co,k,stride,pads,groups",
    [
        ((2, 3, 6, 5), 4, 3, (1, 1), (1, 1, 1, 1), 1),
        ((1, 2, 7, 7), 3, 1, (1, 1), (0, 0, 0, 0), 1),
        ((2, 2, 9, 8), 2, 5, (2, 3), (2, 1, 0, 2), 1),
        ((1, 1, 13, 13), 2, 11, (4, 4), (2, 2, 2, 2), 1),
        ((1, 2, 6, 6), 2, 2, (2, 2), (0, 0, 1, 1), 1),
        ((2, 4, 5, 5), 6, 3, (1, 2), (1, 0, 1, 1), 2),
        ((1, 3, 5, 6), 3, 3, (1, 1), (1, 1, 1, 1), 3),  # depthwise
    ],
)
def test_conv_float_gradients(shape, co, k, stride, pads, groups):
    attrs = ConvAttrs(kernel=(k, k), stride=stride, pads=pads, groups=groups, has_bias=True)
    x = RNG.normal(size=shape)
    w = RNG.normal(size=(co, shape[1] // groups, k, k))
    b = RNG.normal(size=co)
    r = RNG.normal(size=conv.forward_float(x, w, b, attrs=attrs).shape)

    def loss_of(xx, ww, bb):
        return float((conv.forward_float(xx, ww, bb, attrs=attrs) * r).sum())

    assert_close(conv.backward_float(r, w, attrs=attrs, in_hw=shape[2:]),
                 numeric_grad(lambda v: loss_of(v, w, b), x))
    dw, db = conv.weight_gradient_float(r, x, attrs=attrs)
    assert_close(dw, numeric_grad(lambda v: loss_of(x, v, b), w))
    assert_close(db, numeric_grad(lambda v: loss_of(x, w, v), b))


def test_fc_float_gradients():
    x, w, b = RNG.normal(size=(3, 7)), RNG.normal(size=(5, 7)), RNG.normal(size=5)
    r = RNG.normal(size=(3, 5))

    def loss_of(xx, ww, bb):
        return float((fc.forward_float(xx, ww, bb) * r).sum())

    assert_close(fc.backward_float(r, w), numeric_grad(lambda v: loss_of(v, w, b), x))
    dw, db = fc.weight_gradient_float(r, x)
    assert_close(dw, numeric_grad(lambda v: loss_of(x, v, b), w))
    assert_close(db, numeric_grad(lambda v: loss_of(x, w, v), b))


def test_relu_float_gradient():
    x = RNG.normal(size=(2, 3, 4, 4))
    r = RNG.normal(size=x.shape)
    fd = numeric_grad(lambda v: float((relu.forward_float(v) * r).sum()), x)
    assert_close(relu.backward_float(r, x), fd)


@pytest.mark.parametrize(
    "attrs",
    [
        PoolAttrs(kernel=(2, 2), stride=(2, 2)),
        PoolAttrs(kernel=(3, 3), stride=(2, 2)),  # overlapping windows
        PoolAttrs(kernel=(3, 3), stride=(1, 2), pads=(1, 1, 1, 0)),
        PoolAttrs(kernel=(3, 2), stride=(2, 2), ceil_mode=True),
        PoolAttrs(kernel=(3, 3), stride=(2, 2), pads=(1, 1, 1, 1), count_include_pad=True),
        PoolAttrs(kernel=(2, 3), stride=(2, 1), pads=(1, 0, 0, 1), ceil_mode=True),
    ],
)
def test_pool_float_gradients(attrs):
    x = RNG.normal(size=(2, 2, 7, 6))
    ohw = pool.out_hw(attrs, x.shape[2:])
    r = RNG.normal(size=(2, 2, *ohw))
    fd = numeric_grad(lambda v: float((pool.max_forward_float(v, attrs=attrs) * r).sum()), x)
    assert_close(pool.max_backward_float(r, x, attrs=attrs), fd)
    fd = numeric_grad(lambda v: float((pool.avg_forward_float(v, attrs=attrs) * r).sum()), x)
    assert_close(pool.avg_backward_float(r, attrs=attrs, in_hw=x.shape[2:]), fd)


def test_global_avgpool_float_gradient():
    x = RNG.normal(size=(2, 3, 5, 4))
    attrs = pool.global_attrs(x.shape[2:])
    r = RNG.normal(size=(2, 3, 1, 1))
    y = pool.avg_forward_float(x, attrs=attrs)
    assert_close(y, x.mean(axis=(2, 3), keepdims=True), 1e-12)
    fd = numeric_grad(lambda v: float((pool.avg_forward_float(v, attrs=attrs) * r).sum()), x)
    assert_close(pool.avg_backward_float(r, attrs=attrs, in_hw=(5, 4)), fd)


def test_add_and_flatten_float_gradients():
    a, b = RNG.normal(size=(2, 3, 2, 2)), RNG.normal(size=(2, 3, 2, 2))
    r = RNG.normal(size=a.shape)
    fd_a = numeric_grad(lambda v: float((add.forward_float([v, b]) * r).sum()), a)
    da, db = add.backward_float(r, 2)
    assert_close(da, fd_a)
    assert_close(db, fd_a)
    rf = RNG.normal(size=(2, 12))
    fd = numeric_grad(lambda v: float((flatten.forward_float(v) * rf).sum()), a)
    assert_close(flatten.backward_float(rf, in_shape=(3, 2, 2)), fd)


def test_loss_float_gradients():
    z = RNG.normal(size=(3, 5))
    y = np.array([0, 4, 2])
    # The per-sample error is the gradient of the batch-summed loss (B x the mean's gradient).
    fd = numeric_grad(lambda v: 3 * loss.loss_value(v, y, "softmax_ce"), z)
    assert_close(loss.softmax_ce_error_float(z, y)[0], fd)
    fd = numeric_grad(lambda v: 3 * loss.loss_value(v, y, "mse"), z)
    assert_close(loss.mse_error_float(z, y), fd)


# ----------------------------------------------------------------- integer, worked by hand


def test_maxpool_tie_break_and_overlapping_routing():
    # 3x3 input, 2x2 windows stride 1 -> four overlapping windows.
    x = np.array([[[[5, 5, 1],
                    [2, 5, 5],
                    [7, 0, 7]]]])
    attrs = PoolAttrs(kernel=(2, 2), stride=(1, 1))
    # Window (0,0) = [5 5; 2 5]: first max is (0,0). Window (0,1) = [5 1; 5 5]: first is (0,1).
    # Window (1,0) = [2 5; 7 0]: (2,0). Window (1,1) = [5 5; 0 7]: (2,2).
    assert pool.argmax(x, attrs).tolist() == [[[[0, 0], [2, 3]]]]
    y = pool.max_forward(x, attrs=attrs, x_fmt=Q8, out_fmt=Q8)
    assert y.tolist() == [[[[5, 5], [7, 7]]]]
    e = np.array([[[[100, 30], [-20, 32767]]]])
    dx = pool.max_backward(e, x, attrs=attrs, e_fmt=Q8, out_fmt=Q8)
    assert dx.tolist() == [[[[100, 30, 0], [0, 0, 0], [-20, 0, 32767]]]]
    # Padding never wins, even against negative values: 1x2 map, 2x2 windows, pad 1 all round.
    neg = np.array([[[[-5, -3]]]])
    attrs_pad = PoolAttrs(kernel=(2, 2), stride=(2, 2), pads=(1, 1, 1, 1))
    assert pool.max_forward(neg, attrs=attrs_pad, x_fmt=Q8, out_fmt=Q8).tolist() == [
        [[[-5, -3]]]
    ]


def test_maxpool_overlap_accumulates_and_saturates():
    # 1x3 map, 1x2 windows stride 1: both windows pick the middle 9.
    x = np.array([[[[1, 9, 2]]]])
    attrs = PoolAttrs(kernel=(1, 2), stride=(1, 1))
    e = np.array([[[[20000, 20000]]]])
    # 40000 does not fit Q16 -> 32767 after the single saturation.
    assert pool.max_backward(e, x, attrs=attrs, e_fmt=Q8, out_fmt=Q8).tolist() == [
        [[[0, 32767, 0]]]
    ]
    e = np.array([[[[20000, -5000]]]])
    assert pool.max_backward(e, x, attrs=attrs, e_fmt=Q8, out_fmt=Q8).tolist() == [
        [[[0, 15000, 0]]]
    ]


def test_avgpool_reciprocal_by_hand():
    # 1x3 map [1, 2, 4] (Q16.8 ints), window 1x3 with pad 1 left/right, stride 1, no pad count.
    x = np.array([[[[256, 512, 1024]]]])
    attrs = PoolAttrs(kernel=(1, 3), stride=(1, 1), pads=(0, 1, 0, 1))
    # counts: [2, 3, 2] -> r = 15 + ceil(log2 3) = 17; M_2 = 65536, M_3 = 43691.
    # y0 = (256+512) * 65536 >> 17 = 384; y1 = 1792 * 43691 / 2^17 = 597.33 -> 597;
    # y2 = 1536 * 65536 / 2^17 = 768.
    y = pool.avg_forward(x, attrs=attrs, x_fmt=Q8, out_fmt=Q8)
    assert y.tolist() == [[[[384, 597, 768]]]]
    # Backward: e = [100, 300, -7]: element 0 gets 100*65536 + 300*43691 = 19660900 -> /2^17
    # = 150.0008 -> 150; element 1: 100*65536 + 300*43691 - 7*65536 = 19202148 -> 146.5008 ->
    # 147; element 2: 300*43691 - 7*65536 = 12648548 -> 96.5008 -> 97.
    e = np.array([[[[100, 300, -7]]]])
    dx = pool.avg_backward(e, attrs=attrs, in_hw=(1, 3), e_fmt=Q8, out_fmt=Q8)
    assert dx.tolist() == [[[[150, 147, 97]]]]


def test_global_avgpool_7x7_constant():
    x = np.full((1, 1, 7, 7), 3)
    attrs = pool.global_attrs((7, 7))
    # sum = 147; 147 * 42799 / 2^21 = 3.00000... -> 3 (r = 21, M = 42799 as in the doc).
    assert pool.avg_forward(x, attrs=attrs, x_fmt=Q8, out_fmt=Q8).item() == 3
    x[0, 0, 0, 0] = 4  # sum 148 -> 148 * 42799 / 2^21 = 3.0204 -> 3
    assert pool.avg_forward(x, attrs=attrs, x_fmt=Q8, out_fmt=Q8).item() == 3
    x[0, 0, 0, :] = 30  # sum 6*7... 7*30 + 42*3 = 336 -> 6.857 -> 7
    assert pool.avg_forward(x, attrs=attrs, x_fmt=Q8, out_fmt=Q8).item() == 7


def test_relu_mask_blocks_zero_and_converts():
    x = np.array([[-3, 0, 5, 1]])
    e = np.array([[7, 7, 7, -7]])
    assert relu.backward(e, x, e_fmt=Q8, out_fmt=Q8).tolist() == [[0, 0, 7, -7]]
    # Error to one fewer fractional bit: 7/2 = 3.5 -> 4, -7/2 = -3.5 -> -3.
    assert relu.backward(e, x, e_fmt=Q8, out_fmt=Format(16, 7)).tolist() == [[0, 0, 4, -3]]
    assert relu.forward(x, x_fmt=Q8, out_fmt=Format(16, 9)).tolist() == [[0, 0, 10, 2]]


def test_add_aligns_formats_and_fans_in():
    a = np.array([3])  # 3/2^8
    b = np.array([5])  # 5/2^10
    # F = 10: 3<<2 + 5 = 17 at 2^-10 -> to Q16.8: 17/4 = 4.25 -> 4
    assert add.forward([a, b], x_fmts=[Q8, Format(16, 10)], out_fmt=Q8).tolist() == [4]
    assert [v.tolist() for v in add.backward(np.array([-3]), e_fmt=Q8,
                                              out_fmts=[Q8, Format(16, 7)])] == [[-3], [-1]]
    parts = [np.array([30000, -30000, 5]), np.array([30000, -30000, -6])]
    assert add.error_fan_in(parts, fmt=Q8).tolist() == [32767, -32768, -1]


def test_exp_table_against_decimal():
    getcontext().prec = 40
    ln2 = Decimal(2).ln()
    for i in range(257):
        exact = (Decimal(i) / 256 * ln2).exp() * 2**15
        assert loss.EXP2_TABLE[i] == int((exact + Decimal("0.5")).to_integral_value(
            rounding="ROUND_FLOOR")), i
    assert int(2**15 / ln2 + Decimal("0.5")) == loss.LOG2E_M  # floor for positives


def test_softmax_by_hand():
    z_fmt, e_fmt = Format(16, 10), Format(16, 14)
    e, p = loss.softmax_ce_error(np.array([[512, 512]]), np.array([0]), z_fmt=z_fmt,
                                 e_fmt=e_fmt)
    assert p.tolist() == [[8192, 8192]] and e.tolist() == [[-8192, 8192]]
    # z = (0, -ln 2 * 1024 -> -710): d*log2e = -710*47274 / 2^9 = -65555.74 (Q.16) -> u =
    # -65556 = -2 * 65536 + 65516; k = -2, f = 65516; hi = 255, lo = 236; E[255] = 65359,
    # E[256] = 65536: v = 65359 + round(177*236/256 = 163.17) = 65522; x = round(65522 / 4
    # = 16380.5) = 16381 (exp(-ln 2) = 0.5 -> 16384 exactly; 3 LSB low from rounding d).
    # S = 32768 + 16381 = 49149; p0 = floor((32768*2^15 + 49149) / 98298) = floor(10923.83)
    # = 10923, p1 = floor((16381*2^15 + 49149) / 98298) = floor(5461.17) = 5461.
    assert loss.exp_fixed(np.array([-710]), 10).tolist() == [16381]
    e, p = loss.softmax_ce_error(np.array([[0, -710]]), np.array([1]), z_fmt=z_fmt,
                                 e_fmt=e_fmt)
    assert p.tolist() == [[10923, 5461]] and e.tolist() == [[10923, 5461 - 16384]]
    # Very negative logits give exp = 0 but never a zero sum.
    e, p = loss.softmax_ce_error(np.array([[32767, -32768]]), np.array([0]), z_fmt=z_fmt,
                                 e_fmt=e_fmt)
    assert p.tolist() == [[16384, 0]] and e.tolist() == [[0, 0]]


def test_mse_error_by_hand():
    # N = 4: 2/N = 0.5 -> (32768, 16). z = [1.5, 0, -1, 0.25] (Q16.10), label 0:
    # e = (z - t) * 0.5 -> [0.25, 0, -0.5, 0.125] at Q16.14.
    z = np.array([[1536, 0, -1024, 256]])
    e = loss.mse_error(z, np.array([0]), z_fmt=Format(16, 10), e_fmt=Format(16, 14))
    assert e.tolist() == [[4096, 0, -8192, 2048]]


def test_batch_mean_and_sgd_update_by_hand():
    # B = 3: (43691, 17). acc = 3000 at 20 fractional bits -> grad Q16.14:
    # 3000 * 43691 / 2^(20+17-14) = 15.625... -> 16 (15.6254).
    g = sgd.mean_gradient(np.array([3000, -3000, 2**47 - 1]), acc_frac=20, batch=3,
                          out_fmt=Format(16, 14))
    assert g.tolist() == [16, -16, 32767]
    # lr = 0.1 -> (52429, 19); g = 1000 (Q16.14), w Q16.14: step = 1000*52429 / 2^19 =
    # 100.0002 -> 100; g = -5 -> step = -0.500002 -> -1 (0.1 is not exact);
    # w = -32768 with a positive step saturates at -32768.
    w = np.array([5000, 5000, -32768])
    got = sgd.update(w, np.array([1000, -5, 1000]), lr=0.1, g_fmt=Format(16, 14),
                     w_fmt=Format(16, 14))
    assert got.tolist() == [4900, 5001, -32768]
    # lr = 0.5 -> (32768, 16): step = g / 2 exactly; ties: 2.5 -> 3, -2.5 -> -2.
    got = sgd.update(np.array([0, 0, 32767]), np.array([5, -5, -4]), lr=0.5,
                     g_fmt=Format(16, 14), w_fmt=Format(16, 14))
    assert got.tolist() == [-3, 2, 32767]


def test_sgd_rejects_bad_lr_and_batch():
    with pytest.raises(FpdeepError, match="learning rate lr=0 is not valid"):
        sgd.lr_constant(0)
    with pytest.raises(FpdeepError, match="batch size 0 is not supported"):
        sgd.batch_constant(0)
