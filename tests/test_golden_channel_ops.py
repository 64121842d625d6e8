"""LRN, Concat, Dropout, ChannelShuffle and per-channel Scale/Bias one op at a time: float
against ONNX's reference evaluator and central differences, the LFSR against stepping it bit
by bit, fixed point against float."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from golden_nets import OnnxNet
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from test_golden_ops import numeric_grad

from fpdeep.errors import FpdeepError
from fpdeep.golden import affine, concat, dropout, infer, lrn, shuffle, train_step
from fpdeep.ir import LRNAttrs, Op
from fpdeep.numerics import Format, dequantise, quantise

RNG = np.random.default_rng(17)
ACT, ERR = Format(16, 10), Format(16, 14)


def onnx_lrn(x: np.ndarray, a: LRNAttrs) -> np.ndarray:
    node = helper.make_node("LRN", ["x"], ["y"], size=a.size, alpha=a.alpha, beta=a.beta,
                            bias=a.bias)
    info = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, x.shape) for n in "xy"]
    model = helper.make_model(helper.make_graph([node], "lrn", info[:1], info[1:]))
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


def f32(v: float) -> float:
    """An attribute as an ONNX node stores it."""
    return float(np.float32(v))


def spec_lrn(x: np.ndarray, a: LRNAttrs) -> np.ndarray:
    """The ONNX operator's formula, channel by channel."""
    out = np.empty_like(x)
    for c in range(x.shape[1]):
        lo = max(0, c - (a.size - 1) // 2)
        hi = min(x.shape[1] - 1, c + -(-(a.size - 1) // 2))
        square = (x[:, lo:hi + 1] ** 2).sum(axis=1)
        out[:, c] = x[:, c] / (a.bias + a.alpha / a.size * square) ** a.beta
    return out


LRN_ATTRS = [LRNAttrs(size=3, alpha=f32(0.3), beta=0.75, bias=1.0),
             LRNAttrs(size=4, alpha=0.5, beta=f32(0.6), bias=2.0),  # even: ONNX's window
             LRNAttrs(size=5, alpha=f32(1e-4), beta=0.75, bias=1.0),  # AlexNet's
             LRNAttrs(size=7, alpha=2.0, beta=f32(1.2), bias=0.5)]


@pytest.mark.parametrize("attrs", LRN_ATTRS, ids=lambda a: f"size{a.size}")
def test_lrn_float_equals_onnx_and_finite_differences(attrs):
    # onnx.reference's LRN loops its channel index over the batch axis and computes alpha/size
    # in float32: with N = C its result is right to float32 precision
    x = RNG.normal(size=(6, 6, 3, 2))
    np.testing.assert_allclose(lrn.forward_float(x, attrs), onnx_lrn(x, attrs), rtol=1e-6)
    np.testing.assert_allclose(lrn.forward_float(x, attrs), spec_lrn(x, attrs), rtol=1e-13)
    x = x[:2]
    r = RNG.normal(size=x.shape)
    numeric = numeric_grad(lambda t: float((lrn.forward_float(t, attrs) * r).sum()), x.copy())
    np.testing.assert_allclose(lrn.backward_float(r, x, attrs), numeric, atol=1e-7)


@pytest.mark.parametrize("attrs", LRN_ATTRS, ids=lambda a: f"size{a.size}")
def test_lrn_fixed_point_follows_float(attrs):
    qx, qe = quantise(RNG.normal(size=(2, 8, 3, 3)), ACT), quantise(
        RNG.normal(0, 0.2, size=(2, 8, 3, 3)), ERR)
    x, e = dequantise(qx, ACT), dequantise(qe, ERR)
    y = dequantise(lrn.forward(qx, attrs=attrs, x_fmt=ACT, out_fmt=ACT), ACT)
    # a few output LSBs: the table interpolations are good to about 2^-15
    assert np.abs(y - lrn.forward_float(x, attrs)).max() < 4 * 2.0 ** -ACT.frac
    dx = dequantise(lrn.backward(qe, qx, attrs=attrs, x_fmt=ACT, e_fmt=ERR, out_fmt=ERR), ERR)
    assert np.abs(dx - lrn.backward_float(e, x, attrs)).max() < 2e-3


def test_lrn_log2_and_power_tables():
    d = np.array([1, 3, 1000, 2**40 + 12345, 7 * 2**70], dtype=object)
    got = lrn.log2_fixed(d, 20) / 65536
    want = np.array([np.log2(float(v)) - 20 for v in d])
    assert np.abs(got - want).max() < 2**-14
    logs = np.array([0, 65536, -3 * 65536, 12345, 40 * 65536])
    v, k = lrn.power_fixed(logs, 0.75)
    want = 2.0 ** (-0.75 * logs / 65536)
    assert np.all(np.abs(v * 2.0 ** (k - 15) / want - 1) < 2**-14)
    assert lrn.LOG2_TABLE[0] == 0 and lrn.LOG2_TABLE[256] == 65536
    with pytest.raises(FpdeepError, match="must be positive"):
        lrn.log2_fixed(np.array([0], dtype=object), 0)


def test_lrn_with_a_non_positive_constant_is_refused_by_the_golden_step(tmp_path):
    net = OnnxNet((3, 4, 4))
    net.conv(4, 3)
    net.node("LRN", [net.last], (4, 2, 2), size=3, alpha=0.0)
    net.flatten()
    net.fc(3)
    network, weights = net.load(tmp_path / "m.onnx")
    with pytest.raises(FpdeepError, match=r"LRN with size 3, alpha 0.0.*alpha, beta, bias "
                                          r"positive"):
        train_step(network, weights, np.zeros((1, 3, 4, 4)), np.zeros(1, int), lr=0.1)


def test_lfsr_states_equal_stepping_bit_by_bit():
    seeds = [dropout.seed(0, 0, 0), dropout.seed(2, 7, 3), 1]
    got = dropout.states(np.array(seeds), 200)
    for row, s in zip(got, seeds, strict=True):
        want = []
        for _ in range(200):
            for _ in range(16):
                s = (s >> 1) ^ (0x80200003 if s & 1 else 0)
            want.append(s)
        assert row.tolist() == want


def test_dropout_mask_rate_seeds_and_threshold():
    keep = dropout.keep_mask((4, 16, 32, 32), 0.3, layer=0, step=0)
    assert abs(keep.mean() - (1 - dropout.threshold(0.3) / 65536)) < 0.005
    assert dropout.threshold(0.5) == 32768 and dropout.threshold(0.0) == 0
    assert keep_differs(keep, dropout.keep_mask((4, 16, 32, 32), 0.3, layer=1, step=0))
    assert keep_differs(keep, dropout.keep_mask((4, 16, 32, 32), 0.3, layer=0, step=1))
    assert keep_differs(keep[0], keep[1])  # images of a batch get their own masks
    assert dropout.keep_mask((2, 5), 0.0, layer=0, step=0).all()
    with pytest.raises(FpdeepError, match=r"ratio 1.0 must be in \[0, 1\)"):
        dropout.threshold(1.0)


def keep_differs(a: np.ndarray, b: np.ndarray) -> bool:
    return 0.3 < (a != b).mean() < 0.6


def test_dropout_fixed_point_scales_by_two_exactly_at_one_half():
    q = quantise(RNG.normal(size=(2, 3, 4, 4)), ACT)
    keep = dropout.keep_mask(q.shape, 0.5, layer=0, step=0)
    out = dropout.forward(q, keep, 0.5, x_fmt=ACT, out_fmt=ACT)
    np.testing.assert_array_equal(out, np.where(keep, np.clip(2 * q, ACT.lo, ACT.hi), 0))
    np.testing.assert_array_equal(dropout.backward(q, keep, 0.5, e_fmt=ACT, out_fmt=ACT), out)


def test_dropout_is_off_at_inference(tmp_path):
    net = OnnxNet((3, 4, 4))
    net.conv(4, 3)
    net.node("Dropout", [net.last], (4, 2, 2), ratio=0.5)
    net.flatten()
    net.fc(3)
    network, weights = net.load(tmp_path / "m.onnx")
    without = OnnxNet((3, 4, 4))
    without.conv(4, 3)
    without.flatten()
    without.fc(3)
    plain, plain_weights = without.load(tmp_path / "plain.onnx")
    x = RNG.normal(size=(3, 3, 4, 4))
    for numerics in ("float", None):
        kw = {"numerics": numerics} if numerics else {}
        np.testing.assert_array_equal(infer(network, weights, x, **kw),
                                      infer(plain, plain_weights, x, **kw))


def test_the_step_number_seeds_the_dropout_masks(tmp_path):
    net = OnnxNet((3, 4, 4))
    net.conv(4, 3)
    net.node("Dropout", [net.last], (4, 2, 2), ratio=0.5)
    net.flatten()
    net.fc(3)
    network, weights = net.load(tmp_path / "m.onnx")
    x, y = RNG.normal(size=(2, 3, 4, 4)), np.array([0, 2])
    drop = next(layer.name for layer in network.layers if layer.op is Op.DROPOUT)
    outs = {t: train_step(network, weights, x, y, lr=0.1, numerics="float", step=t)
            .trace[drop].output for t in (0, 1)}
    # each step's output is zero exactly where that step's mask drops (the mask rule of
    # docs/numerics.md §21, layer 0, step t), and the two steps' masks differ
    for t, out in outs.items():
        keep = dropout.keep_mask((2, 4, 2, 2), 0.5, layer=0, step=t)
        assert np.array_equal(out != 0, keep.reshape(out.shape))
    assert not np.array_equal(outs[0] != 0, outs[1] != 0)
    with pytest.raises(FpdeepError, match="step must be a whole number >= 0"):
        train_step(network, weights, x, y, lr=0.1, step=-1)


def test_channel_shuffle_is_reshape_transpose_reshape():
    x = RNG.normal(size=(2, 12, 3, 3))
    want = x.reshape(2, 3, 4, 3, 3).transpose(0, 2, 1, 3, 4).reshape(2, 12, 3, 3)
    np.testing.assert_array_equal(shuffle.forward_float(x, 3), want)
    np.testing.assert_array_equal(shuffle.backward_float(want, 3), x)
    q = quantise(x, ACT)
    np.testing.assert_array_equal(shuffle.backward(shuffle.forward(q, 3, x_fmt=ACT, out_fmt=ACT),
                                                   3, e_fmt=ACT, out_fmt=ACT), q)


def test_shufflenet_pattern_loads_as_one_layer_equal_to_onnx(tmp_path):
    net = OnnxNet((6, 2, 2))
    conv_out = net.conv(6, 1)
    shape_a = net.node("Constant", [], (), value=onnx.numpy_helper.from_array(
        np.array([1, 2, 3, 2, 2], np.int64), "a"))
    shape_b = net.node("Constant", [], (), value=onnx.numpy_helper.from_array(
        np.array([1, 6, 2, 2], np.int64), "b"))
    split = net.node("Reshape", [conv_out, shape_a], (2, 3, 2, 2))
    moved = net.node("Transpose", [split], (3, 2, 2, 2), perm=[0, 2, 1, 3, 4])
    net.node("Reshape", [moved, shape_b], (6, 2, 2))
    network, _ = net.load(tmp_path / "m.onnx")
    layers = [layer for layer in network.layers if layer.op is Op.CHANNEL_SHUFFLE]
    assert len(layers) == 1 and layers[0].attrs.groups == 2
    x = RNG.normal(size=(1, 6, 2, 2))
    graph = onnx.load(tmp_path / "m.onnx")
    graph.graph.node.pop(0)  # evaluate the shuffle alone, from the conv's output
    graph.graph.input[0].name = conv_out
    want = ReferenceEvaluator(graph).run(None, {conv_out: x.astype(np.float32)})[0]
    np.testing.assert_allclose(shuffle.forward_float(x, 2), want, rtol=1e-6)


def test_concat_splits_the_error_at_the_channel_boundaries():
    a, b = RNG.normal(size=(2, 3, 2, 2)), RNG.normal(size=(2, 5, 2, 2))
    r = RNG.normal(size=(2, 8, 2, 2))
    f = lambda ta, tb: float((concat.forward_float([ta, tb]) * r).sum())  # noqa: E731
    ea, eb = concat.backward_float(r, [3, 5])
    np.testing.assert_allclose(ea, numeric_grad(lambda t: f(t, b), a.copy()), atol=1e-8)
    np.testing.assert_allclose(eb, numeric_grad(lambda t: f(a, t), b.copy()), atol=1e-8)
    fine = Format(16, 12)
    qa, qb = quantise(a, ACT), quantise(b, fine)
    out = concat.forward([qa, qb], x_fmts=[ACT, fine], out_fmt=ACT)
    np.testing.assert_array_equal(out[:, :3], qa)
    np.testing.assert_array_equal(out[:, 3:], (qb + 2) >> 2)  # round half up to 10 bits


@pytest.mark.parametrize("size", [4, 1])
def test_scale_and_bias_gradients_are_finite_differences(size):
    x, r = RNG.normal(size=(3, 4, 2, 2)), RNG.normal(size=(3, 4, 2, 2))
    s, b = RNG.normal(size=size), RNG.normal(size=size)

    def f(tx, ts, tb):
        return float((affine.bias_forward_float(affine.scale_forward_float(tx, ts), tb) * r).sum())

    y = affine.scale_forward_float(x, s)
    np.testing.assert_allclose(affine.scale_backward_float(r, s),
                               numeric_grad(lambda t: f(t, s, b), x.copy()), atol=1e-8)
    np.testing.assert_allclose(affine.scale_gradient_float(r, x, size),
                               numeric_grad(lambda t: f(x, t, b), s.copy()), atol=1e-8)
    np.testing.assert_allclose(affine.bias_gradient_float(r, size),
                               numeric_grad(lambda t: f(x, s, t), b.copy()), atol=1e-8)
    q = quantise(y, ACT)
    qs = quantise(s, ERR)
    assert np.abs(dequantise(affine.scale_forward(q, qs, x_fmt=ACT, s_fmt=ERR, out_fmt=ACT),
                             ACT) - affine.scale_forward_float(dequantise(q, ACT),
                                                               dequantise(qs, ERR))).max() \
        <= 2.0 ** -(ACT.frac + 1)
