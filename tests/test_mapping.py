"""The RTL mapping table: `fpdeep build` accepts exactly the op kinds the table maps."""

from __future__ import annotations

import numpy as np
import pytest
from golden_nets import OnnxNet
from onnx import helper, numpy_helper

import fpdeep
from fpdeep.design.lower import check_buildable, lower
from fpdeep.design.mapping import RTL_MAPPING, VIEW_OPS
from fpdeep.errors import FpdeepError
from fpdeep.ir import Op
from fpdeep.ops.batchnorm import with_batchnorm


def _const(net: OnnxNet, name: str, values) -> str:
    """An int64 Constant node (the net's initializers are all float)."""
    value = numpy_helper.from_array(np.array(values, dtype=np.int64))
    net.nodes.append(helper.make_node("Constant", [], [name], value=value))
    return name


def _channel_shuffle(net: OnnxNet) -> None:
    c, h, w = net.shape[net.last]
    to, back = _const(net, "split", [1, 2, c // 2, h, w]), _const(net, "back", [1, c, h, w])
    split = net.node("Reshape", [net.last, to], (2, c // 2, h, w))
    swap = net.node("Transpose", [split], (c // 2, 2, h, w), perm=[0, 2, 1, 3, 4])
    net.node("Reshape", [swap, back], (c, h, w))


def _with_constant(net: OnnxNet, op: str, value: float) -> None:
    net.inits[f"{op}_k"] = np.full((4, 1, 1), value)
    net.node(op, [net.last, f"{op}_k"], net.shape[net.last])


def _batchnorm(net: OnnxNet) -> None:
    for role, value in (("s", 1.0), ("o", 0.0), ("m", 0.0), ("v", 1.0)):
        net.inits[f"bn_{role}"] = np.full(4, value)
    net.node("BatchNormalization", [net.last, "bn_s", "bn_o", "bn_m", "bn_v"], (4, 6, 6))


def _two_branches(net: OnnxNet, op: str) -> None:
    a = net.last
    b = net.conv(4, 3, pads=(1, 1, 1, 1), src=a)
    if op == "Add":
        net.add(b, a)
    else:
        net.node("Concat", [a, b], (8, 6, 6), axis=1)


#: A layer of each op kind after conv-relu on a 4x6x6 map (Conv, FC and Flatten are also in
#: the tail flatten-fc; Softmax goes after it).
LAYER = {
    Op.CONV: lambda n: n.conv(4, 3, pads=(1, 1, 1, 1)),
    Op.FC: lambda n: None,
    Op.RELU: lambda n: n.relu(),
    Op.MAXPOOL: lambda n: n.maxpool(2, 2),
    Op.AVGPOOL: lambda n: n.avgpool(3, 2, pads=(1, 1, 1, 1)),
    Op.GLOBAL_AVGPOOL: lambda n: n.gap(),
    Op.ADD: lambda n: _two_branches(n, "Add"),
    Op.CONCAT: lambda n: _two_branches(n, "Concat"),
    Op.BATCHNORM: _batchnorm,
    Op.LRN: lambda n: n.node("LRN", [n.last], (4, 6, 6), size=3),
    Op.DROPOUT: lambda n: n.node("Dropout", [n.last], (4, 6, 6)),
    Op.FLATTEN: lambda n: None,
    Op.SOFTMAX: lambda n: None,
    Op.IDENTITY: lambda n: n.node("Identity", [n.last], (4, 6, 6)),
    Op.SCALE: lambda n: _with_constant(n, "Mul", 0.5),
    Op.BIAS: lambda n: _with_constant(n, "Add", 0.25),
    Op.CHANNEL_SHUFFLE: _channel_shuffle,
}


def _network(tmp_path, op: Op):
    net = OnnxNet((2, 6, 6))
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    LAYER[op](net)
    net.flatten()
    net.fc(10)
    if op is Op.SOFTMAX:
        net.softmax()
    network, _ = net.load(tmp_path / f"{op}.onnx")
    assert op in {layer.op for layer in network.layers}
    return network


def test_every_op_kind_has_a_network_here():
    assert set(LAYER) == set(Op)


@pytest.mark.parametrize("op", list(Op), ids=str)
def test_build_accepts_an_op_kind_exactly_when_the_table_maps_it(tmp_path, op):
    # the boards run BatchNormalization frozen (training mode is refused: its own test)
    network = with_batchnorm(_network(tmp_path, op), "frozen")
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=2)
    if op not in RTL_MAPPING:
        with pytest.raises(FpdeepError, match=rf"\({op}\): no RTL unit for this op yet"):
            check_buildable(network, plan)
        return
    check_buildable(network, plan)
    design = lower(network, plan)
    units = {u.layer: u for b in design.boards for u in b.units}
    engines = {s.layer for b in design.boards for s in b.slices}
    for layer in (layer for layer in network.layers if layer.op is op):
        kind = RTL_MAPPING[op].kind
        if kind == "engine":
            assert layer.name in engines
        elif kind == "loss":
            assert layer is network.layers[-1]
            assert any(u.kind == "loss" for u in units.values())
        elif kind == "view":
            assert op in VIEW_OPS and layer.name not in units
        else:  # the unit of that kind serves the layer
            assert units[layer.name].kind == kind


def _grouped_net(tmp_path, *, softmax: bool = False):
    """conv, ReLU, a conv of groups=2 (4 channels), then (a Softmax and) FC."""
    net = OnnxNet((2, 6, 6))
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.conv(4, 3, pads=(1, 1, 1, 1), groups=2)
    if softmax:
        net.softmax()
    net.flatten()
    net.fc(5)
    return net.load(tmp_path / "g.onnx")[0]


def test_variants_the_rtl_does_not_compute_are_refused(tmp_path):
    network = _grouped_net(tmp_path, softmax=True)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=2)
    # the grouped conv runs on the engine; the Softmax before the FC is refused, by name
    with pytest.raises(FpdeepError, match=r"cannot run: \S+ \(Softmax\): a Softmax that is "
                       r"not the last layer$"):
        check_buildable(network, plan)


def test_a_mul_or_add_the_affine_unit_does_not_compute_is_refused_naming_node_and_op(
        tmp_path, capsys):
    """A per-channel Scale or Bias runs on fpdeep_affine; a Mul by a spatial tensor is no
    per-channel scaling and is refused, naming node and op; so is a Bias whose input and value
    formats are further apart than the unit aligns."""
    from fpdeep.cli import main
    from fpdeep.design.units import layer_unit
    from fpdeep.numerics import Format, Numerics

    net = OnnxNet((2, 6, 6))
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.inits["k"] = np.ones((1, 6, 6))
    net.node("Mul", [net.last, "k"], (4, 6, 6))
    net.flatten()
    net.fc(5)
    model = tmp_path / "spatial.onnx"
    with pytest.raises(FpdeepError):
        net.load(model)
    assert main(["build", str(model), "--board", "zcu102", "--boards", "1",
                 "-o", str(tmp_path / "b")]) == 2
    assert "node 'mul3' (Mul): constant 'k' of shape (1, 6, 6) must be a scalar or one value " \
           "per channel" in capsys.readouterr().err
    net = OnnxNet((2, 6, 6))
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.channel_constant("Add")
    network, _ = net.load(tmp_path / "bias.onnx")
    layer = network.layers[-1]
    far = Numerics(overrides={layer.name: {"weight": Format(16, 40)},
                              layer.inputs[0]: {"act": Format(16, 0)}})
    with pytest.raises(FpdeepError, match=rf"layer '{layer.name}': the Bias's input and value "
                                          r"differ by \d+ fractional bits; the unit aligns at "
                                          "most 31"):
        layer_unit(network, layer, ident="u", board=0, numerics=far)


def test_a_grouped_conv_split_inside_a_group_is_refused_naming_the_layer(tmp_path):
    """Each engine of a grouped conv runs whole groups; a cut inside a group is refused."""
    from fpdeep.planning.partition import chain_model
    from fpdeep.planning.planner import evaluate

    network = _grouped_net(tmp_path)
    cluster = fpdeep.make_cluster(board="zcu102", boards=2)
    chain = chain_model(network, precision=16, pipelining="image")
    grouped = network.compute_layers[1].name
    whole = evaluate(chain, cluster, (0, 6, 13), strategy="fpdeep", batch=2)  # groups 0 | 1
    check_buildable(network, whole)
    lower(network, whole)
    cut = evaluate(chain, cluster, (0, 5, 13), strategy="fpdeep", batch=2)  # inside group 0
    with pytest.raises(FpdeepError, match=rf"'{grouped}' \(Conv\): a grouped convolution "
                       r"\(groups=2\) split at channels 0..0, not on a boundary of its groups "
                       r"of 2 channels"):
        check_buildable(network, cut)
