"""BatchNormalization in training mode and SGD with momentum and weight decay against PyTorch
(float64), and the fixed-point model against the float one."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import onnx
import pytest
from golden_nets import digits_cnn
from onnx import TensorProto, helper, numpy_helper

import fpdeep
from fpdeep.errors import FpdeepError
from fpdeep.golden import train_step
from fpdeep.golden.batchnorm import rsqrt_fixed
from fpdeep.ir import Op
from fpdeep.ops.batchnorm import with_batchnorm

torch = pytest.importorskip("torch", reason="PyTorch is not installed; parity tests skipped")
nn, F = torch.nn, torch.nn.functional

pytestmark = pytest.mark.torch

LR, MOMENTUM, DECAY = 0.1, 0.9, 0.01


@pytest.fixture(autouse=True)
def float64():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


class Block(nn.Module):
    """conv-BN-ReLU, conv-BN, + the input, ReLU: a ResNet basic block."""

    def __init__(self, c: int):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + x)


def bn_resnet() -> nn.Module:
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), Block(4),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))


def bn_alone() -> nn.Module:
    return nn.Sequential(nn.BatchNorm2d(3), nn.Flatten())


def randomise(model: nn.Module, seed: int) -> nn.Module:
    """Random weights, gamma, beta and running statistics from ``seed`` alone (never torch's
    global generator, whose state depends on which tests ran before), every value exactly a
    float32."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Conv2d | nn.Linear):
                # PyTorch's default initialisation range: uniform within 1 / sqrt(fan-in)
                bound = module.weight[0].numel() ** -0.5
                for tensor in (module.weight, module.bias):
                    if tensor is not None:
                        tensor.copy_(bound * (2 * torch.rand(tensor.shape, generator=gen) - 1))
            if isinstance(module, nn.BatchNorm2d):
                c = module.num_features
                module.weight.copy_(0.5 + torch.rand(c, generator=gen))
                module.bias.copy_(0.3 * torch.randn(c, generator=gen))
                module.running_mean.copy_(0.2 * torch.randn(c, generator=gen))
                module.running_var.copy_(0.5 + torch.rand(c, generator=gen))
        for tensor in model.state_dict().values():
            if tensor.is_floating_point():
                tensor.copy_(tensor.float().double())
    return model


def export(model: nn.Module, x_shape: tuple, path, opset: int):
    """The model as ONNX in training mode: opset <= 13 writes BN with five outputs, 14+ with
    training_mode and three."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = torch.zeros(x_shape, dtype=torch.float32)
        torch.onnx.export(copy.deepcopy(model).float(), (x,), str(path), dynamo=False,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          opset_version=opset)
    net = fpdeep.load_onnx(path)
    # the exporter's trace ran in train mode and moved the file's running statistics
    state = model.state_dict()
    return net, {k: state[k].numpy().copy() for k in net.params}


def torch_steps(model: nn.Module, x, y, steps: int, *, momentum=0.0, weight_decay=0.0,
                frozen=False):
    """``steps`` SGD steps in train mode (eval mode and no BN training when ``frozen``), one
    parameter group; the state dict afterwards."""
    model = copy.deepcopy(model)
    if frozen:
        model.eval()
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.requires_grad_(False)
    else:
        model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=LR, momentum=momentum, weight_decay=weight_decay)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(torch.tensor(x)), torch.tensor(y)).backward()
        opt.step()
    return {k: v.detach().numpy() for k, v in model.state_dict().items()
            if v.is_floating_point()}


def golden_steps(net, weights, x, y, steps: int, **kwargs):
    state = None
    for _ in range(steps):
        res = train_step(net, weights, x, y, lr=LR, state=state, **kwargs)
        weights, state = res.weights, res.state
    return weights


def largest_difference(golden: dict, expected: dict) -> float:
    """max |golden - expected| over every tensor, relative to the largest weight."""
    scale = max(np.abs(v).max() for v in expected.values())
    assert set(expected) <= set(golden)
    return max(np.abs(golden[k].reshape(v.shape) - v).max() for k, v in expected.items()) / scale


def batch(shape, classes, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape).astype(np.float32).astype(np.float64)
    return x, rng.integers(0, classes, shape[0])


@pytest.mark.parametrize("opset", [12, 17], ids=["five-outputs", "training-mode"])
def test_batchnorm_alone_equals_pytorch_train_mode(tmp_path, opset):
    model = randomise(bn_alone(), seed=1)
    x, y = batch((4, 3, 2, 2), 12)
    net, weights = export(model, x.shape, tmp_path / "bn.onnx", opset)
    assert [layer.op for layer in net.layers] == [Op.BATCHNORM, Op.FLATTEN]
    assert net.layers[0].attrs.momentum == 0.9  # the float32 attribute read as written
    expected = torch_steps(model, x, y, 1)
    golden = golden_steps(net, weights, x, y, 1, numerics="float")
    assert expected["0.running_var"].tolist() != weights["0.running_var"].tolist()
    assert largest_difference(golden, expected) < 1e-9


def test_bn_resnet_two_momentum_steps_with_weight_decay_equal_pytorch(tmp_path):
    model = randomise(bn_resnet(), seed=2)
    x, y = batch((6, 2, 5, 5), 5)
    net, weights = export(model, x.shape, tmp_path / "res.onnx", 17)
    assert sum(layer.op is Op.BATCHNORM for layer in net.layers) == 3
    assert any(layer.op is Op.ADD for layer in net.layers)
    expected = torch_steps(model, x, y, 2, momentum=MOMENTUM, weight_decay=DECAY)
    golden = golden_steps(net, weights, x, y, 2, momentum=MOMENTUM, weight_decay=DECAY,
                          numerics="float")
    assert largest_difference(golden, expected) < 1e-9


def test_frozen_batchnorm_is_pytorch_eval_mode_with_bn_not_trained(tmp_path):
    model = randomise(bn_resnet(), seed=3)
    x, y = batch((3, 2, 5, 5), 5)
    net, weights = export(model, x.shape, tmp_path / "res.onnx", 17)
    frozen = with_batchnorm(net, "frozen")
    expected = torch_steps(model, x, y, 2, momentum=MOMENTUM, weight_decay=DECAY, frozen=True)
    golden = golden_steps(frozen, weights, x, y, 2, momentum=MOMENTUM, weight_decay=DECAY,
                          numerics="float")
    assert largest_difference(golden, expected) < 1e-9
    bn_params = [ref.name for layer in net.layers if layer.op is Op.BATCHNORM
                 for ref in layer.weights]
    assert all(np.array_equal(golden[name], weights[name]) for name in bn_params)


def test_momentum_and_weight_decay_on_a_network_without_batchnorm(tmp_path):
    from test_golden_torch import torch_forward

    net, weights = digits_cnn(tmp_path / "d.onnx")
    x, y = batch((8, 1, 8, 8), 10, seed=4)
    params = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    opt = torch.optim.SGD(list(params.values()), lr=LR, momentum=MOMENTUM, weight_decay=DECAY)
    for _ in range(3):
        opt.zero_grad()
        F.cross_entropy(torch_forward(net, params, torch.tensor(x)), torch.tensor(y)).backward()
        opt.step()
    expected = {k: v.detach().numpy() for k, v in params.items()}
    golden = golden_steps(net, weights, x, y, 3, momentum=MOMENTUM, weight_decay=DECAY,
                          numerics="float")
    assert largest_difference(golden, expected) < 1e-9


def five_output_graph(path):
    """conv -> BatchNormalization-9 with its five training outputs -> relu -> flatten -> fc."""
    rng = np.random.default_rng(5)
    inits = {"w": rng.normal(0, 0.3, (3, 2, 3, 3)), "g": rng.uniform(0.5, 1.5, 3),
             "b": rng.normal(0, 0.2, 3), "m": rng.normal(0, 0.1, 3), "v": rng.uniform(0.5, 2, 3),
             "fw": rng.normal(0, 0.3, (4, 3 * 4 * 4)), "fb": np.zeros(4)}
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"],
                         ["n", "m_out", "v_out", "m_saved", "v_saved"], epsilon=1e-3,
                         momentum=0.8),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["z"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "bn9", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 4, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)]), path)
    return fpdeep.load_onnx(path), {k: v.astype(np.float32).astype(np.float64)
                                    for k, v in inits.items()}


def test_opset9_five_output_form_from_onnx_helper(tmp_path):
    net, w = five_output_graph(tmp_path / "bn9.onnx")
    bn_layer = net.layers[1]
    assert bn_layer.op is Op.BATCHNORM and bn_layer.attrs.training_mode
    assert (bn_layer.attrs.momentum, bn_layer.attrs.epsilon) == (0.8, 1e-3)
    x, y = batch((5, 2, 4, 4), 4, seed=6)
    t = {k: torch.tensor(v, requires_grad=k not in ("m", "v")) for k, v in w.items()}
    opt = torch.optim.SGD([t[k] for k in ("w", "g", "b", "fw", "fb")], lr=LR)
    c = F.conv2d(torch.tensor(x), t["w"], padding=1)
    # PyTorch's momentum is ONNX's 1 - momentum
    n = F.batch_norm(c, t["m"], t["v"], t["g"], t["b"], training=True, momentum=0.2, eps=1e-3)
    z = F.linear(F.relu(n).flatten(1), t["fw"], t["fb"])
    F.cross_entropy(z, torch.tensor(y)).backward()
    opt.step()
    expected = {k: v.detach().numpy() for k, v in t.items()}
    golden = golden_steps(net, w, x, y, 1, numerics="float")
    assert largest_difference(golden, expected) < 1e-9


def test_fixed_point_bn_resnet_updates_follow_float(tmp_path):
    model = randomise(bn_resnet(), seed=7)
    x, y = batch((8, 2, 5, 5), 5, seed=8)
    net, weights = export(model, x.shape, tmp_path / "res.onnx", 17)
    kwargs = {"momentum": MOMENTUM, "weight_decay": DECAY}
    ref = golden_steps(net, weights, x, y, 2, numerics="float", **kwargs)
    fixed = golden_steps(net, weights, x, y, 2, **kwargs)
    bn_names = {ref_.name for layer in net.layers if layer.op is Op.BATCHNORM
                for ref_ in layer.weights}
    for name in weights:
        a, b = (ref[name] - weights[name]).ravel(), (fixed[name] - weights[name]).ravel()
        corr = np.corrcoef(a, b)[0, 1]
        # a conv bias right before a BN gets no gradient: only decay and rounding move it
        if name != "0.bias":
            assert corr > 0.99, (name, corr)
    assert bn_names <= set(fixed)


def test_fixed_point_rsqrt():
    z, k = rsqrt_fixed(np.array([1, 4, 2, 3, 2**40, 2**52 - 1]))
    assert z.tolist()[:2] == [65536, 65536] and k.tolist()[:2] == [0, 1]
    v = np.unique(np.random.default_rng(0).integers(1, 2**52, 100_000))
    z, k = rsqrt_fixed(v)
    relative = np.abs(np.ldexp(z.astype(np.float64), -(16 + k)) * np.sqrt(v) - 1)
    assert relative.max() < 4e-5
    with pytest.raises(FpdeepError, match="integers from 1"):
        rsqrt_fixed(np.array([0]))


def test_batch_statistics_need_two_values_per_channel(tmp_path):
    model = randomise(nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2), nn.Flatten(),
                                    nn.Linear(2, 3)), seed=9)
    net, weights = export(model, (2, 1, 1, 1), tmp_path / "one.onnx", 17)
    with pytest.raises(FpdeepError, match=r"\(BatchNormalization\) trains on batch statistics.*"
                       r"the batch gives 1: use a batch of 2 or more"):
        train_step(net, weights, np.ones((1, 1, 1, 1)), np.array([0]), lr=LR)
    # a frozen BN has no such limit
    train_step(with_batchnorm(net, "frozen"), weights, np.ones((1, 1, 1, 1)), np.array([0]),
               lr=LR)


def test_bad_optimiser_arguments_are_explained(tmp_path):
    net, weights = digits_cnn(tmp_path / "d.onnx")
    x, y = np.zeros((2, 1, 8, 8)), np.array([1, 2])
    with pytest.raises(FpdeepError, match=r"momentum=1\.0 is not valid: give a number from 0"):
        train_step(net, weights, x, y, lr=LR, momentum=1.0)
    with pytest.raises(FpdeepError, match=r"weight_decay=-0\.1 is not valid"):
        train_step(net, weights, x, y, lr=LR, weight_decay=-0.1)
    with pytest.raises(FpdeepError, match="state holds momentum buffers of no trainable "
                       "parameter: nope"):
        train_step(net, weights, x, y, lr=LR, momentum=0.5, state={"nope": np.zeros(1)})
    with pytest.raises(FpdeepError, match="--bn 'eval' is not known; valid: train, frozen"):
        with_batchnorm(net, "eval")


def test_plain_sgd_keeps_no_state_and_momentum_state_chains(tmp_path):
    net, weights = digits_cnn(tmp_path / "d.onnx")
    x, y = batch((4, 1, 8, 8), 10, seed=10)
    assert train_step(net, weights, x, y, lr=LR).state == {}
    first = train_step(net, weights, x, y, lr=LR, momentum=MOMENTUM)
    trainable = {ref.name for layer in net.compute_layers for ref in layer.weights}
    assert set(first.state) == trainable
    for name, v in first.state.items():  # the first step's buffer is the gradient itself
        assert np.allclose(weights[name] - LR * v, first.weights[name], atol=2 ** -14)
