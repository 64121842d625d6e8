"""The float reference against PyTorch: one SGD step; fixed-point updates against float."""

from __future__ import annotations

import numpy as np
import pytest
from golden_nets import OnnxNet, digits_cnn

from fpdeep.golden import train_step
from fpdeep.ir import Network, Op

torch = pytest.importorskip("torch", reason="PyTorch is not installed; parity tests skipped")
F = torch.nn.functional

pytestmark = pytest.mark.torch


def torch_forward(network: Network, params: dict, x):
    """Run the IR with PyTorch ops (symmetric pads only), returning the logits."""
    acts = {network.input_name: x}
    for layer in network.layers:
        ins = [acts[name] for name in layer.inputs]
        w = {ref.role: params[ref.name] for ref in layer.weights}
        a = layer.attrs
        if layer.op is Op.CONV:
            out = F.conv2d(ins[0], w["weight"], w.get("bias"), stride=a.stride,
                           padding=a.pads[:2], groups=a.groups)
        elif layer.op is Op.FC:
            out = F.linear(ins[0], w["weight"], w.get("bias"))
        elif layer.op is Op.RELU:
            out = F.relu(ins[0])
        elif layer.op is Op.MAXPOOL:
            out = F.max_pool2d(ins[0], a.kernel, a.stride, a.pads[:2], ceil_mode=a.ceil_mode)
        elif layer.op is Op.AVGPOOL:
            out = F.avg_pool2d(ins[0], a.kernel, a.stride, a.pads[:2], ceil_mode=a.ceil_mode,
                               count_include_pad=a.count_include_pad)
        elif layer.op is Op.GLOBAL_AVGPOOL:
            out = ins[0].mean(dim=(2, 3), keepdim=True)
        elif layer.op is Op.ADD:
            out = ins[0] + ins[1]
        elif layer.op is Op.FLATTEN:
            out = ins[0].flatten(1)
        elif layer.op is Op.SOFTMAX:
            return ins[0]  # cross_entropy applies it
        else:
            raise AssertionError(layer.op)
        acts[layer.output] = out
    return acts[network.output_name]


def torch_sgd_step(network, weights, x, y, lr, kind):
    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
              for k, v in weights.items()}
    opt = torch.optim.SGD(list(params.values()), lr=lr)
    z = torch_forward(network, params, torch.tensor(x, dtype=torch.float64))
    target = torch.tensor(y)
    if kind == "mse":
        lossv = F.mse_loss(z, F.one_hot(target, z.shape[1]).to(torch.float64))
    else:
        lossv = F.cross_entropy(z, target)
    opt.zero_grad()
    lossv.backward()
    opt.step()
    return {k: v.detach().numpy() for k, v in params.items()}, lossv.item()


def residual_net(path):
    net = OnnxNet((2, 9, 9), seed=3)
    net.conv(4, 3, pads=(1, 1, 1, 1))
    skip = net.relu()
    net.conv(4, 3, pads=(1, 1, 1, 1), src=skip)
    net.relu()
    net.add(net.last, skip)
    net.avgpool(3, 2, pads=(1, 1, 1, 1), include_pad=1)
    net.conv(4, 3, pads=(1, 1, 1, 1), groups=4)  # depthwise
    net.conv(6, 2, stride=1)
    net.maxpool(2, 1)
    net.gap()
    net.flatten()
    net.fc(5)
    net.softmax()
    return net.load(path)


@pytest.mark.parametrize("build,kind", [(digits_cnn, "softmax_ce"), (digits_cnn, "mse"),
                                        (residual_net, "softmax_ce")])
def test_float_step_equals_torch_sgd(tmp_path, build, kind):
    network, weights = build(tmp_path / "m.onnx")
    rng = np.random.default_rng(5)
    x = rng.random((6, *network.input_shape))
    n_out = network.layers[-1].out_shape[0]
    y = rng.integers(0, n_out, 6)
    ours = train_step(network, weights, x, y, lr=0.05, numerics="float", loss=kind)
    ref, ref_loss = torch_sgd_step(network, weights, x, y, 0.05, kind)
    assert ours.loss == pytest.approx(ref_loss, rel=1e-10)
    for name, value in ref.items():
        np.testing.assert_allclose(ours.weights[name], value, rtol=1e-5, atol=1e-12)
        # The update itself, not only the weights, must agree.
        np.testing.assert_allclose(ours.weights[name] - weights[name], value - weights[name],
                                   rtol=1e-5, atol=1e-12)


def test_fixed_point_updates_correlate_with_float(tmp_path):
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    network, weights = digits_cnn(tmp_path / "m.onnx", seed=1)
    idx = np.random.default_rng(2).choice(len(images), 32, replace=False)
    x, y = images[idx].reshape(-1, 1, 8, 8) / 16.0, labels[idx]
    fixed = train_step(network, weights, x, y, lr=0.1)
    ref = train_step(network, weights, x, y, lr=0.1, numerics="float")
    for name in weights:
        d_fixed = (fixed.weights[name] - weights[name]).ravel()
        d_float = (ref.weights[name] - weights[name]).ravel()
        corr = np.corrcoef(d_fixed, d_float)[0, 1]
        assert corr > 0.99, (name, corr)
    assert fixed.loss == pytest.approx(ref.loss, abs=0.01)
