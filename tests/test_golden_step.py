"""train_step over whole networks: gradients, trace, errors, and training on digits."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import F64_REL
from golden_nets import OnnxNet, digits_cnn

from fpdeep.errors import FpdeepError
from fpdeep.golden import Format, Numerics, conv, infer, quantise, quantise_weights, train_step
from fpdeep.golden import loss as loss_ops


def residual_net(path, *, seed=0):
    """Conv, a skip connection read twice (error fan-in), avg pool with pads, GAP, FC."""
    net = OnnxNet((2, 7, 7), seed=seed)
    net.conv(3, 3, pads=(1, 1, 1, 1))
    skip = net.relu()
    net.conv(3, 3, pads=(1, 1, 1, 1), src=skip)
    net.relu()
    net.add(net.last, skip)
    net.avgpool(3, 2, pads=(1, 1, 1, 1))
    net.conv(4, 2, stride=1)
    net.conv(4, 1, groups=2)
    net.maxpool(2, 1)
    net.gap()
    net.flatten()
    net.fc(3)
    return net.load(path)


def test_network_gradient_matches_finite_differences(tmp_path):
    network, weights = residual_net(tmp_path / "r.onnx")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(3, 2, 7, 7)), np.array([0, 2, 1])
    lr = 0.5
    step = train_step(network, weights, x, y, lr=lr, numerics="float")

    def loss_at(ws):
        return loss_ops.loss_value(infer(network, ws, x, numerics="float"), y, "softmax_ce")

    assert step.loss == pytest.approx(loss_at(weights), rel=F64_REL)
    eps = 1e-6
    for name, value in weights.items():
        grad = (value - step.weights[name]) / lr
        trial = dict(weights)
        fd = np.zeros_like(value)
        for i in range(value.size):
            for sign in (1, -1):
                bumped = value.copy()
                bumped.flat[i] += sign * eps
                trial[name] = bumped
                fd.flat[i] += sign * loss_at(trial) / (2 * eps)
        np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-7, err_msg=name)


def test_matmul_weight_layout_gives_the_same_step(tmp_path):
    # Gemm transB=1 stores (out, in); MatMul stores (in, out). Same numbers either way.
    gemm_net, gemm_w = digits_cnn(tmp_path / "a.onnx", seed=4)
    mm = OnnxNet((1, 8, 8), seed=4)
    mm.conv(8, 3, pads=(1, 1, 1, 1))
    mm.relu()
    mm.maxpool(2, 2)
    mm.conv(16, 3, pads=(1, 1, 1, 1))
    mm.relu()
    mm.flatten()
    mm.inits["fcT"] = gemm_w["fc9"].T.copy()
    mm.inits["fcT_b"] = gemm_w["fc9_b"].copy()
    mm.node("MatMul", [mm.last, "fcT"], (10,))
    mm.node("Add", [mm.last, "fcT_b"], (10,))
    mm_net, _ = mm.load(tmp_path / "b.onnx")
    mm_w = {**{k: v for k, v in gemm_w.items() if not k.startswith("fc9")},
            "fcT": gemm_w["fc9"].T.copy(), "fcT_b": gemm_w["fc9_b"]}
    rng = np.random.default_rng(1)
    x, y = rng.random((4, 1, 8, 8)), rng.integers(0, 10, 4)

    def float64_close(got, want):
        # float64 matmuls of a transposed and a contiguous weight may sum in another order
        # (BLAS picks its kernel by layout), so they agree to rounding, on the weights' scale
        np.testing.assert_allclose(got, want, rtol=0, atol=F64_REL * np.abs(want).max())

    # fixed point is integer arithmetic: bit-exact whatever the layout
    for numerics, same in ((Numerics(), np.testing.assert_array_equal), ("float", float64_close)):
        a = train_step(gemm_net, gemm_w, x, y, lr=0.1, numerics=numerics)
        b = train_step(mm_net, mm_w, x, y, lr=0.1, numerics=numerics)
        same(a.weights["fc9"], b.weights["fcT"].T)
        same(a.weights["w1"], b.weights["w1"])


def test_trace_locates_every_tensor(tmp_path):
    network, weights = digits_cnn(tmp_path / "m.onnx", softmax=True)
    rng = np.random.default_rng(3)
    x, y = rng.random((5, 1, 8, 8)), rng.integers(0, 10, 5)
    nm = Numerics()
    res = train_step(network, weights, x, y, lr=0.05, numerics=nm)
    trace = res.trace
    compute = [layer.name for layer in network.layers if layer.op != "Softmax"]
    assert list(trace) == compute
    first = network.layers[0]
    t0 = trace[first.name]
    assert t0.input_errors == (None,)  # the first compute layer does no BP
    assert t0.output.dtype == np.int64 and t0.formats["act"] == nm.fmt("act")
    # The traced conv output is the integer Conv of the traced input and weights.
    w1 = quantise(weights["w1"], nm.fmt("weight"))
    again = conv.forward(trace.input, w1, quantise(weights["w1_b"], nm.fmt("weight")),
                         attrs=first.attrs, x_fmt=nm.fmt("act"), w_fmt=nm.fmt("weight"),
                         out_fmt=nm.fmt("act"))
    assert np.array_equal(t0.output, again)
    assert np.array_equal(t0.weights["w1"], w1)
    # New weights in the trace are the integers behind the returned floats.
    for layer in network.compute_layers:
        for name, q in trace[layer.name].new_weights.items():
            assert np.array_equal(np.ldexp(q.astype(float), -14), res.weights[name])
            assert np.abs(trace[layer.name].accumulators[name]).max() < 2**47
    assert trace.probabilities.shape == (5, 10)
    assert np.array_equal(trace.loss_error, trace[network.layers[-2].name].output_error)


def test_per_layer_override_changes_only_that_layer(tmp_path):
    network, weights = digits_cnn(tmp_path / "m.onnx")
    conv1 = network.layers[0].name
    nm = Numerics(overrides={conv1: {"act": Format(16, 8)}})
    rng = np.random.default_rng(3)
    x, y = rng.random((2, 1, 8, 8)), rng.integers(0, 10, 2)
    a = train_step(network, weights, x, y, lr=0.05)
    b = train_step(network, weights, x, y, lr=0.05, numerics=nm)
    out_a, out_b = a.trace[conv1].output, b.trace[conv1].output
    # Same values with two fractional bits fewer: b = round_half_up(a / 4), up to saturation.
    assert b.trace[conv1].formats["act"] == Format(16, 8)
    assert np.abs(out_b - np.floor(out_a / 4 + 0.5)).max() <= 1
    relu1 = network.layers[1].name
    assert b.trace[relu1].formats["act"] == Format(16, 10)
    assert np.array_equal(b.trace[relu1].output, np.maximum(out_b, 0) << 2)


def test_unsupported_layers_are_named(tmp_path):
    net = OnnxNet((2, 4, 4))
    net.conv(2, 3, pads=(1, 1, 1, 1))
    for name, value in (("s", 1.0), ("b", 0.0), ("m", 0.0), ("v", 1.0)):
        net.inits[f"bn_{name}"] = np.full(2, value)
    net.node("BatchNormalization", [net.last, "bn_s", "bn_b", "bn_m", "bn_v"], (2, 4, 4))
    net.node("LRN", [net.last], (2, 4, 4), size=3, beta=0.0)  # a power of 0: refused
    net.flatten()
    net.fc(3)
    network, weights = net.load(tmp_path / "u.onnx")
    with pytest.raises(FpdeepError, match=r"does not support these layers yet: \S+ "
                       r"\(LRN with size 3, .* beta 0\.0.*\)\. Planning and analysis still work"):
        train_step(network, weights, np.zeros((1, 2, 4, 4)), np.array([0]), lr=0.1)


def test_bad_arguments_are_explained(tmp_path):
    network, weights = digits_cnn(tmp_path / "m.onnx")
    x, y = np.zeros((2, 1, 8, 8)), np.array([1, 2])
    cases = [
        (dict(numerics="double"), "numerics='double' is not valid"),
        (dict(loss="hinge"), "loss='hinge' is not valid; choose one of softmax_ce, mse"),
        (dict(lr=-1.0), "learning rate lr=-1.0 is not valid"),
        (dict(x=np.zeros((2, 8, 8))), r"takes a batch of shape \(B, 1, 8, 8\)"),
        (dict(y=np.array([0.5, 1.0])), "y must be non-negative integer labels"),
        (dict(y=np.array([3, 10])), r"labels y must be in 0\.\.9"),
        (dict(weights={}), "weights lacks these parameters: w1, w1_b"),
        (dict(weights={**weights, "w1": np.zeros((8, 1, 2, 2))}), r"weights\['w1'\] has shape"),
    ]
    for override, message in cases:
        kwargs = dict(network=network, weights=weights, x=x, y=y, lr=0.1)
        kwargs.update(override)
        with pytest.raises(FpdeepError, match=message):
            train_step(**kwargs)
    soft_net, soft_w = digits_cnn(tmp_path / "s.onnx", softmax=True)
    with pytest.raises(FpdeepError, match="ends in Softmax .*use loss='softmax_ce'"):
        train_step(soft_net, soft_w, x, y, lr=0.1, loss="mse")


@pytest.mark.slow
def test_fixed_point_training_on_digits_matches_float(tmp_path):
    datasets = pytest.importorskip("sklearn.datasets", reason="scikit-learn is not installed")
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl not installed")
    images, labels = datasets.load_digits(return_X_y=True)
    images = images.reshape(-1, 1, 8, 8) / 16.0
    order = np.random.default_rng(0).permutation(len(images))
    test, train = order[:360], order[360:]
    network, w0 = digits_cnn(tmp_path / "m.onnx", seed=0)
    accuracy, seconds = {}, {}
    with threadpoolctl.threadpool_limits(1):  # tiny matrices: BLAS threads only cost time
        for label, numerics in (("fixed", Numerics()), ("float", "float")):
            start = time.perf_counter()
            weights, batches = dict(w0), np.random.default_rng(1)
            for _ in range(300):
                idx = train[batches.integers(0, len(train), 32)]
                weights = train_step(network, weights, images[idx], labels[idx], lr=0.1,
                                     numerics=numerics).weights
            pred = infer(network, weights, images[test], numerics=numerics).argmax(axis=1)
            accuracy[label] = float((pred == labels[test]).mean())
            seconds[label] = time.perf_counter() - start
    print(f"digits: accuracy {accuracy}, seconds {seconds}")
    assert accuracy["fixed"] >= 0.90
    assert abs(accuracy["fixed"] - accuracy["float"]) <= 0.02
    assert sum(seconds.values()) < 60


def test_wide_fixed_point_tracks_float_through_every_op(tmp_path):
    # With 24-bit data the integer plumbing of every op (pads, reciprocals, fan-in, formats)
    # must reproduce the float step closely; a wrong shift would be off by a power of two.
    network, weights = residual_net(tmp_path / "r.onnx", seed=2)
    wide = Numerics(formats={"act": Format(24, 16), "weight": Format(24, 18),
                             "err": Format(24, 18), "grad": Format(24, 18)})
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(4, 2, 7, 7)), np.array([0, 1, 2, 1])
    fixed = train_step(network, weights, x, y, lr=0.5, numerics=wide)
    ref = train_step(network, weights, x, y, lr=0.5, numerics="float")
    assert fixed.loss == pytest.approx(ref.loss, abs=1e-4)
    for name in weights:
        d_fixed = fixed.weights[name] - quantise_weights(network, weights, wide)[name] / 2**18
        d_float = ref.weights[name] - weights[name]
        np.testing.assert_allclose(d_fixed, d_float, atol=2e-4 * np.abs(d_float).max() + 4e-6,
                                   err_msg=name)


def test_bundled_example_trains_from_its_own_parameters():
    from fpdeep import load_onnx
    from fpdeep.examples import DIGITS_CNN

    network = load_onnx(DIGITS_CNN)
    rng = np.random.default_rng(0)
    x, y = rng.random((8, 1, 8, 8)), rng.integers(0, 10, 8)
    weights = dict(network.params)
    first = None
    for _ in range(5):
        step = train_step(network, weights, x, y, lr=0.1)
        first = step.loss if first is None else first
        weights = step.weights
    assert step.loss < first
    assert set(weights) >= {"conv1.weight", "conv1.bias", "fc.weight", "fc.bias"}


def test_shared_parameter_is_refused(tmp_path):
    net = OnnxNet((2, 5, 5))
    first = net.conv(2, 3, pads=(1, 1, 1, 1), bias=False)
    weight = net.nodes[-1].input[1]
    net.node("Conv", [first, weight], (2, 5, 5), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    net.flatten()
    net.fc(3)
    network, weights = net.load(tmp_path / "shared.onnx")
    with pytest.raises(FpdeepError, match=f"parameter '{weight}' is shared by layers"):
        train_step(network, weights, np.zeros((1, 2, 5, 5)), np.array([0]), lr=0.1)
