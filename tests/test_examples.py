"""The bundled example models load and match the code that makes them."""

from __future__ import annotations

import fpdeep
from fpdeep.examples import DIGITS_CNN, build_digits_cnn
from fpdeep.ir import Op


def test_digits_cnn_file_is_what_the_builder_makes():
    assert DIGITS_CNN.read_bytes() == build_digits_cnn().SerializeToString()


def test_digits_cnn_structure():
    net = fpdeep.load_onnx(DIGITS_CNN)
    assert net.input_shape == (1, 8, 8)
    assert [layer.op for layer in net.layers] == [
        Op.CONV, Op.RELU, Op.MAXPOOL, Op.CONV, Op.RELU, Op.FLATTEN, Op.FC]
    assert net.layers[-1].out_shape == (10,)
