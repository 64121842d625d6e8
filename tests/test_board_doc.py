"""docs/board.md's generated parts match the declarations they are written from
(`python -m fpdeep.codegen.board_doc` rewrites them)."""

from __future__ import annotations

import pytest

from fpdeep.codegen import board_doc
from fpdeep.codegen.board import top_ports
from fpdeep.design.lower import Design
from fpdeep.errors import FpdeepError
from fpdeep.hwlib import protocol as p
from fpdeep.resources import PACKAGE_DIR

DOC = PACKAGE_DIR.parent / board_doc.DOC_PATH


def test_the_doc_is_current():
    text = DOC.read_text()
    for name in board_doc.PARTS:
        assert board_doc.part(name) in text, (
            f"{board_doc.DOC_PATH} part {name!r} is stale: run `{board_doc.COMMAND}`")
    assert board_doc.updated(text) == text


def test_a_stale_part_is_rewritten_and_missing_markers_refused():
    text = DOC.read_text()
    stale = text.replace("| `WRITE` | `0x01` |", "| `WRITE` | `0x09` |")
    assert stale != text and board_doc.updated(stale) == text
    with pytest.raises(FpdeepError, match="must hold the markers"):
        board_doc.updated(text.replace(board_doc.end("errors"), ""))


def test_the_ports_table_lists_exactly_the_top_ports():
    d = Design(model="", boards=(), data_width=16, clock_mhz=0.0, link_gbps=(), homes={})
    rows = [line for line in board_doc.ports_table().splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == [t.name for t in top_ports(d)]


def test_the_worked_packets_are_the_hand_encoded_beats():
    text = board_doc.examples()
    # WRITE of 1, -2, 32767 to bank 2 from 0x10: opcode 01, target 02, address 000010, length 3
    for beat in ("0102000010000003", "0000fffffffffffe", "8100000000000003",
                 "0202000010000003", "fffffffffffffffe", "0301000000000005",
                 "5b00000000000000", "8701000000000000"):
        assert beat in text
    assert f"{p.header('READ', 2, 0x10, 3):016x}" == "0202000010000003"
