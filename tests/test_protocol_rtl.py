"""The board RTL decodes the bits fpdeep.hwlib.protocol encodes: the opcodes, error codes,
states and every header, status and instruction field are read out of hw/board/*.sv and
compared with the declarations, so a change on either side alone fails here."""

from __future__ import annotations

import re

import pytest

from fpdeep.hwlib import protocol as p
from fpdeep.resources import data_dir

BOARD = data_dir("hw") / "board"


def _source(name: str) -> str:
    return (BOARD / f"{name}.sv").read_text()


def _parameters(text: str) -> dict[str, int]:
    """The module's integer parameters with their defaults."""
    return {m[1]: int(m[2]) for m in re.finditer(r"parameter int (\w+) = (\d+)\b", text)}


def _value(expr: str, params: dict[str, int]) -> int:
    """A constant expression of numbers, parameters, + and -."""
    total = 0
    for sign, term in re.findall(r"([+-]?)\s*(\w+)", expr.replace(" ", "")):
        v = int(term) if term.isdigit() else params[term]
        total += -v if sign == "-" else v
    return total


def _slice(text: str, params: dict[str, int]) -> tuple[int, int]:
    """(lsb, width) of a part select's inside: ``63:56``, ``52 +: RW``, ``CW-1:0``, ``55``."""
    if "+:" in text:
        lsb, width = text.split("+:")
        return _value(lsb, params), _value(width, params)
    if ":" in text:
        msb, lsb = text.split(":")
        return _value(lsb, params), _value(msb, params) - _value(lsb, params) + 1
    return _value(text, params), 1


def _one(pattern: str, text: str) -> str:
    found = re.findall(pattern, text)
    assert len(found) >= 1, f"the RTL no longer matches {pattern!r}"
    assert len(set(found)) == 1, f"{pattern!r} matches differently: {found}"
    return found[0]


def _localparams(text: str, width: str, radix: str) -> dict[str, int]:
    out = {}
    for stmt in re.findall(rf"localparam logic \[{width}\] ([^;]+);", text):
        for name, value in re.findall(rf"(\w+) = \d+'{radix}([0-9a-fA-F]+)", stmt):
            out[name] = int(value, 16 if radix == "h" else 10)
    return out


def test_host_opcodes():
    ops = _localparams(_source("fpdeep_host"), "7:0", "h")
    found = {name.removeprefix("OP_"): v for name, v in ops.items() if name.startswith("OP_")}
    assert found == dict(p.HOST_OPCODES)


def test_error_codes_and_who_raises_them():
    def codes(name: str) -> dict[str, int]:
        return {k.removeprefix("E_").lower(): v
                for k, v in _localparams(_source(name), "7:0", "d").items()
                if k.startswith("E_")}

    host, ctl = codes("fpdeep_host"), codes("fpdeep_board_ctl")
    assert set(host) == p.PACKET_ERRORS
    assert set(ctl) == set(p.ERROR_CODES) - p.PACKET_ERRORS
    assert {**host, **ctl} == dict(p.ERROR_CODES)


def test_controller_states():
    states = _localparams(_source("fpdeep_board_ctl"), "1:0", "d")
    assert {name.lower(): v for name, v in states.items()} == {
        s: k for k, s in enumerate(p.STATES)}


def test_instruction_opcodes():
    text = _source("fpdeep_sequencer")
    assert _localparams(text, f"{p.OP.width - 1}:0", "d") == dict(p.OPS)


def test_header_fields():
    text = _source("fpdeep_host")
    names = {"h_op": "opcode", "h_target": "target", "h_addr": "address", "h_len": "length"}
    found = {names[m[1]]: _slice(m[2], {})
             for m in re.finditer(r"wire logic \[[^\]]+\]\s+(h_\w+) = s_axis_tdata\[([^\]]+)\];",
                                  text) if m[1] in names}
    assert found == {f.name: (f.lsb, f.width) for f in p.HEADER.values()}


def test_status_beat():
    # {8'h80 | op, code, 24'(0), 24'(len)}: response bit and opcode, code, zeros, length
    text = _source("fpdeep_host")
    assert "m_axis_tdata = {8'h80 | op, code, 24'(0), 24'(len)};" in text
    assert p.RESPONSE == 0x80
    s = p.STATUS
    assert (s["response"].lsb, s["response"].width, s["opcode"].lsb, s["opcode"].width) == (
        63, 1, 56, 7)
    assert (s["code"].lsb, s["code"].width, s["length"].lsb, s["length"].width) == (48, 8, 0, 24)
    # a WRITE's payload word is the beat's low WORD_BITS; a read word is sign-extended
    params = _parameters(text)
    assert params["WIDTH"] == p.WORD_BITS
    assert "wr_data <= s_axis_tdata[WIDTH-1:0];" in text
    assert "m_axis_tdata = 64'($signed(off_chip ? mem_rd_data : r_data));" in text


#: Where fpdeep_sequencer.sv takes each field from its instruction register `ir`.
SEQUENCER_FIELDS = [
    (r"wire logic \[3:0\] op = ir\[([^\]]+)\];", [(op, "op") for op in p.OPS]),
    (r"wait_res = ir\[([^\]]+)\];", [("WAIT", "resource")]),
    (r"wait_n = ir\[([^\]]+)\];", [("WAIT", "count")]),
    (r"op == IN && ir\[([^\]]+)\] ==", [("IN", "mover")]),
    (r"op == OUT && ir\[([^\]]+)\] ==", [("OUT", "mover")]),
    (r"cmd_bank = ir\[([^\]]+)\];", [("IN", "bank"), ("OUT", "bank")]),
    (r"cmd_addr = ir\[([^\]]+)\];", [("IN", "address"), ("OUT", "address")]),
    (r"cmd_len = ir\[([^\]]+)\];", [("IN", "words"), ("OUT", "words")]),
    (r"cmd_hold = ir\[([^\]]+)\];", [("IN", "hold"), ("OUT", "hold")]),
    (r"cmd_parts = ir\[([^\]]+)\];", [("IN", "parts"), ("OUT", "parts")]),
    (r"cmd_chain = ir\[([^\]]+)\];", [("IN", "chain"), ("OUT", "chain")]),
    # the register number: the CFG write compares it with each register's
    (r"if \(int'\(ir\[([^\]]+)\]\) == k\) cfg\[", [("CFG", "field")]),
    (r"CFGW'\(ir\[([^\]]+)\]\)", [("CFG", "value")]),
    (r"cmd_maddr <= ir\[([^\]]+)\];", [("MEM", "address")]),
    (r"cmd_mslot <= ir\[([^\]]+)\];", [("MEM", "slot")]),
]


@pytest.mark.parametrize(("pattern", "fields"), SEQUENCER_FIELDS)
def test_sequencer_fields(pattern, fields):
    text = _source("fpdeep_sequencer")
    params = _parameters(text)
    lsb, width = _slice(_one(pattern, text), params)
    for op, name in fields:
        f = p.INSTRUCTIONS[op][name]
        assert (lsb, width) == (f.lsb, f.width), f"{op}.{name}"


def test_sequencer_go_flags():
    text = _source("fpdeep_sequencer")
    base, width = _slice(_one(r"flags <= ir\[([^\]]+)\];", text), {})
    go = p.INSTRUCTIONS["GO"]
    flags = {"start": r"start <= flags\[(\d)\];", "flush": r"flush <= flags\[(\d)\];",
             "wait_done": r"!flags\[(\d)\]", "ends_task": r"if \(flags\[(\d)\]\) ended"}
    assert width == len(flags)
    for name, pattern in flags.items():
        assert (base + int(_one(pattern, text)), 1) == (go[name].lsb, go[name].width), name


def test_every_instruction_field_is_checked():
    checked = {(op, name) for _, fields in SEQUENCER_FIELDS for op, name in fields}
    checked |= {("GO", name) for name in ("start", "flush", "wait_done", "ends_task")}
    assert checked == {(op, name) for op, fields in p.INSTRUCTIONS.items() for name in fields}
