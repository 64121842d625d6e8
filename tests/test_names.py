"""Identifiers from a user's model are made safe for Verilog, C++ and Tcl."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from fpdeep.design.names import MAX_LENGTH, RESERVED, Namer, sanitize

SAFE = re.compile(r"^[a-z][a-z0-9_]*$")


def test_typical_onnx_names():
    assert sanitize("gpu_0/res2_0_branch2a_1") == "gpu_0_res2_0_branch2a_1"
    assert sanitize("/layer1/layer1.0/conv1/Conv") == "layer1_layer1_0_conv1_conv"
    assert sanitize("conv1.weight") == "conv1_weight"
    assert sanitize("123") == "n_123"
    assert sanitize("") == "n"
    assert sanitize("module") == "module_n"
    assert sanitize("Input") == "input_n"  # case-folded onto a keyword
    assert sanitize("a$b;puts [exec rm]") == "a_b_puts_exec_rm"


@given(st.text(max_size=200))
def test_any_text_gives_a_safe_identifier(text):
    ident = sanitize(text)
    assert SAFE.match(ident) and ident not in RESERVED and len(ident) <= MAX_LENGTH


@given(st.lists(st.text(max_size=80), max_size=40))
def test_namer_is_injective_and_stable(names):
    namer = Namer()
    idents = {name: namer(name) for name in names}
    assert len(set(idents.values())) == len(idents)
    assert all(namer(name) == ident for name, ident in idents.items())
    assert all(SAFE.match(i) and i not in RESERVED and len(i) <= MAX_LENGTH
               for i in idents.values())


def test_namer_collisions_get_suffixes():
    namer = Namer(taken=frozenset({"clk"}))
    assert [namer("a.b"), namer("a/b"), namer("a-b"), namer("clk")] == ["a_b", "a_b_1", "a_b_2",
                                                                        "clk_1"]


def test_namer_keys_on_the_models_names_not_their_sanitised_form():
    namer = Namer()
    first, second = namer("Conv1", "c0_4"), namer("conv1", "c0_4")
    assert (first, second) == ("conv1_c0_4", "conv1_c0_4_1")
    assert namer("Conv1", "c0_4") == first  # stable
    assert namer("block.relu", "u") != namer("block/relu", "u")
    long = namer("x" * 100, "fanin")
    assert len(long) <= MAX_LENGTH and long.endswith("_fanin")
