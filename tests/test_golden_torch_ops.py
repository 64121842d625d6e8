"""The float golden step against PyTorch (float64) for LRN, Concat, Dropout, channel shuffle,
per-channel Scale/Bias, grouped and depthwise Conv, wide FC + softmax cross-entropy and a
SqueezeNet fire module; and how far the fixed-point updates are from the float ones.

Each network is a PyTorch module exported to ONNX and loaded by fpdeep; the reference is that
module's own autograd and ``torch.optim.SGD``. LRN and Dropout are written as ONNX nodes (the
exporter decomposes LocalResponseNorm; Dropout's mask comes from fpdeep's LFSR, which the
reference multiplies in as ``x * mask / (1 - p)``).
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from fpdeep import load_onnx
from fpdeep.golden import dropout, train_step
from fpdeep.ir import Op

torch = pytest.importorskip("torch", reason="PyTorch is not installed; parity tests skipped")
nn, F = torch.nn, torch.nn.functional

pytestmark = pytest.mark.torch
LR = 0.05


@pytest.fixture(autouse=True)
def float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


# ----- the modules ----------------------------------------------------------------------------


class Fire(nn.Module):
    """SqueezeNet's fire module: squeeze 1x1, expand 1x1 and 3x3, concatenated."""

    def __init__(self, cin: int, squeeze: int, expand: int):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1 = nn.Conv2d(squeeze, expand, 1)
        self.expand3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        s = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.expand1(s)), F.relu(self.expand3(s))], 1)


class Branches(nn.Module):
    """Two convolutions of one input, concatenated along channels."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(3, 2, 1)

    def forward(self, x):
        return torch.cat([self.a(x), F.relu(self.b(x))], 1)


class ChannelAffine(nn.Module):
    """DenseNet/Inception "Scale": a per-channel multiply and add after a convolution."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 4).reshape(4, 1, 1))
        self.shift = nn.Parameter(torch.linspace(-0.2, 0.3, 4).reshape(4, 1, 1))

    def forward(self, x):
        return F.relu(self.conv(x) * self.scale + self.shift)


class Shuffle(nn.Module):
    """ShuffleNet's channel shuffle between two grouped convolutions."""

    def __init__(self, groups: int = 3):
        super().__init__()
        self.groups = groups
        self.a = nn.Conv2d(3, 6, 1, groups=groups)
        self.b = nn.Conv2d(6, 6, 3, padding=1, groups=groups)

    def forward(self, x):
        y = self.a(x)
        n, c, h, w = y.shape
        y = y.reshape(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)
        return self.b(F.relu(y))


class Grouped(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.dw = nn.Conv2d(6, 6, 3, stride=2, padding=1, groups=6)

    def forward(self, x):
        return self.dw(F.relu(self.a(x)))


def classifier(body: nn.Module, features: int, classes: int) -> nn.Module:
    return nn.Sequential(body, nn.Flatten(), nn.Linear(features, classes))


CASES = {
    "fire": (lambda: classifier(Fire(3, 2, 3), 6 * 5 * 5, 5), (3, 5, 5)),
    "concat": (lambda: classifier(Branches(), 6 * 4 * 4, 5), (3, 4, 4)),
    "scale_bias": (lambda: classifier(ChannelAffine(), 4 * 3 * 3, 5), (3, 5, 5)),
    "channel_shuffle": (lambda: classifier(Shuffle(), 6 * 4 * 4, 5), (3, 4, 4)),
    "grouped_depthwise": (lambda: classifier(Grouped(), 6 * 3 * 3, 5), (4, 5, 5)),
    "fc_1000": (lambda: nn.Sequential(nn.Flatten(), nn.Linear(48, 64), nn.ReLU(),
                                      nn.Linear(64, 1000)), (3, 4, 4)),
    "fc_4096": (lambda: nn.Sequential(nn.Flatten(), nn.Linear(48, 32), nn.ReLU(),
                                      nn.Linear(32, 4096)), (3, 4, 4)),
}


def export(model: nn.Module, shape, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(1, *shape),), str(path), dynamo=False,
                          input_names=["x"], dynamic_axes={"x": {0: "N"}})
    return load_onnx(path)


def torch_step(model: nn.Module, x, y, lr=LR):
    """One SGD step of the module itself; its parameters after the step, by module name."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss = F.cross_entropy(model(torch.tensor(x)), torch.tensor(y))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {k: v.detach().numpy().copy() for k, v in model.named_parameters()}, loss.item()


def by_value(initial: dict, network_weights: dict) -> dict[str, str]:
    """Match each module parameter to the initializer holding the same values."""
    out = {}
    for name, value in initial.items():
        hits = [k for k, w in network_weights.items()
                if np.shape(w) == value.shape and np.array_equal(w, value)]
        assert len(hits) == 1, (name, hits)
        out[name] = hits[0]
    return out


def assert_parity(ours: dict, ref: dict, initial: dict, names: dict[str, str]) -> None:
    """max |w_ours − w_torch| below 1e-9 of the weight scale, and the updates agree."""
    for module_name, onnx_name in names.items():
        scale = max(float(np.abs(initial[module_name]).max()), 1e-3)
        diff = np.abs(ours[onnx_name] - ref[module_name]).max()
        assert diff < 1e-9 * scale, (module_name, diff, scale)
        step = np.abs(ref[module_name] - initial[module_name]).max()
        assert step > 0 or module_name.endswith("bias"), module_name


def batch(shape, classes, seed=0, n=4):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, *shape)), rng.integers(0, classes, n)


def correlation(fixed: dict, ref: dict, initial: dict, name: str) -> float:
    a = (fixed[name] - initial[name]).ravel()
    b = (ref[name] - initial[name]).ravel()
    return float(np.corrcoef(a, b)[0, 1])


@pytest.mark.parametrize("case", sorted(CASES))
def test_float_step_equals_torch(tmp_path, case):
    build, shape = CASES[case]
    torch.manual_seed(1)
    model = build()
    network = export(model, shape, tmp_path / f"{case}.onnx")
    initial = {k: v.detach().numpy().copy() for k, v in model.named_parameters()}
    weights = {k: np.asarray(v, np.float64) for k, v in network.params.items()}
    names = by_value(initial, weights)
    classes = network.layers[-1].out_shape[0]
    x, y = batch(shape, classes)
    ours = train_step(network, weights, x, y, lr=LR, numerics="float")
    ref, ref_loss = torch_step(model, x, y)
    assert ours.loss == pytest.approx(ref_loss, rel=1e-12)
    assert_parity(ours.weights, ref, initial, names)
    if case == "channel_shuffle":
        assert [layer.op for layer in network.layers].count(Op.CHANNEL_SHUFFLE) == 1
    if case == "scale_bias":
        assert {Op.SCALE, Op.BIAS} <= {layer.op for layer in network.layers}


# ----- LRN and Dropout, written as ONNX nodes ----------------------------------------------------


def onnx_net(path, shape, nodes, inits, out_shape):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", *shape])
    y = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", *out_shape])
    graph = helper.make_graph(nodes, "ops", [x], [y],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return load_onnx(path)


def conv_middle_fc(path, middle: list, shape=(3, 5, 5), co=6, classes=5, seed=0):
    """conv(3x3) -> relu -> <middle nodes from "r" to "m"> -> flatten -> fc."""
    rng = np.random.default_rng(seed)
    c, h, w = shape
    feats = co * (h - 2) * (w - 2)
    inits = {"w1": rng.normal(0, 0.4, (co, c, 3, 3)).astype(np.float32),
             "b1": rng.normal(0, 0.1, co).astype(np.float32),
             "w2": rng.normal(0, 0.2, (classes, feats)).astype(np.float32),
             "b2": rng.normal(0, 0.1, classes).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c"], ["r"]), *middle,
             helper.make_node("Flatten", ["m"], ["f"]),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["z"], transB=1)]
    network = onnx_net(path, shape, nodes, inits, (classes,))
    return network, {k: v.astype(np.float64) for k, v in inits.items()}


def torch_conv_middle_fc(weights, x, y, middle):
    params = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    opt = torch.optim.SGD(list(params.values()), lr=LR)
    h = F.relu(F.conv2d(torch.tensor(x), params["w1"], params["b1"]))
    z = F.linear(middle(h).flatten(1), params["w2"], params["b2"])
    loss = F.cross_entropy(z, torch.tensor(y))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {k: v.detach().numpy() for k, v in params.items()}, loss.item()


LRN_CASES = [(3, 1e-2, 0.75, 2.0), (5, 0.5, 0.75, 1.0), (1, 0.2, 1.5, 1.5)]


@pytest.mark.parametrize("size,alpha,beta,bias", LRN_CASES)
def test_lrn_step_equals_torch(tmp_path, size, alpha, beta, bias):
    node = helper.make_node("LRN", ["r"], ["m"], size=size, alpha=alpha, beta=beta, bias=bias)
    network, weights = conv_middle_fc(tmp_path / "lrn.onnx", [node])
    assert Op.LRN in {layer.op for layer in network.layers}
    x, y = batch((3, 5, 5), 5, seed=2)
    ours = train_step(network, weights, x, y, lr=LR, numerics="float")
    # PyTorch's window is c - size//2 .. c + (size-1)//2: ONNX's for odd sizes
    alpha, beta, bias = (float(np.float32(v)) for v in (alpha, beta, bias))  # as stored
    ref, ref_loss = torch_conv_middle_fc(
        weights, x, y, lambda h: F.local_response_norm(h, size, alpha, beta, bias))
    assert ours.loss == pytest.approx(ref_loss, rel=1e-12)
    assert_parity(ours.weights, ref, weights, {k: k for k in weights})


@pytest.mark.parametrize("ratio", [0.5, 0.3])
def test_dropout_step_equals_torch_with_the_lfsr_mask(tmp_path, ratio):
    ratio_init = numpy_helper.from_array(np.array(ratio, np.float32), "ratio")
    train = numpy_helper.from_array(np.array(True), "train")
    nodes = [helper.make_node("Constant", [], ["p"], value=ratio_init),
             helper.make_node("Constant", [], ["t"], value=train),
             helper.make_node("Dropout", ["r", "p", "t"], ["m"])]
    network, weights = conv_middle_fc(tmp_path / "drop.onnx", nodes)
    x, y = batch((3, 5, 5), 5, seed=3)
    ours = train_step(network, weights, x, y, lr=LR, numerics="float")
    keep = dropout.keep_mask((4, 6, 3, 3), ratio, layer=0, step=0)
    assert 0 < keep.mean() < 1
    mask = torch.tensor(keep.astype(np.float64))
    stored = float(np.float32(ratio))  # the ratio as the model stores it
    ref, ref_loss = torch_conv_middle_fc(weights, x, y, lambda h: h * mask / (1 - stored))
    assert ours.loss == pytest.approx(ref_loss, rel=1e-12)
    assert_parity(ours.weights, ref, weights, {k: k for k in weights})


# ----- fixed point against float -------------------------------------------------------------


def fixed_vs_float(network, weights, x, y) -> dict[str, float]:
    fixed = train_step(network, weights, x, y, lr=LR)
    ref = train_step(network, weights, x, y, lr=LR, numerics="float")
    return {name: correlation(fixed.weights, ref.weights, weights, name) for name in weights}


FIXED_NETS = {
    "lrn": lambda p: conv_middle_fc(p, [helper.make_node("LRN", ["r"], ["m"], size=5,
                                                         alpha=0.5, beta=0.75, bias=1.0)]),
    "dropout": lambda p: conv_middle_fc(p, [helper.make_node("Dropout", ["r"], ["m"],
                                                             ratio=0.25)]),
}


@pytest.mark.parametrize("case", sorted(FIXED_NETS) + sorted(CASES))
def test_fixed_point_updates_follow_float(tmp_path, case):
    if case in FIXED_NETS:
        network, weights = FIXED_NETS[case](tmp_path / "m.onnx")
        shape = network.input_shape
    else:
        build, shape = CASES[case]
        torch.manual_seed(1)
        network = export(build(), shape, tmp_path / "m.onnx")
        weights = {k: np.asarray(v, np.float64) for k, v in network.params.items()}
    x, y = batch(shape, network.layers[-1].out_shape[0], seed=4, n=16)
    x = np.clip(x, -3, 3)
    corr = fixed_vs_float(network, weights, x, y)
    print(case, {k: round(v, 5) for k, v in corr.items()})
    assert min(corr.values()) > 0.95, corr
