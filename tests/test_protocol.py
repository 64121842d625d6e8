"""fpdeep.hwlib.protocol: every encoder puts every field at the bits docs/board.md gives, checked
against beats worked out by hand; values that do not fit are refused by name."""

from __future__ import annotations

import pytest

from fpdeep.errors import FpdeepError
from fpdeep.hwlib import protocol as p


@pytest.mark.parametrize(("beat", "expected"), [
    (p.header("WRITE", 0, 0, 0), 0x0100_0000_0000_0000),
    (p.header("READ", 0, 0, 0), 0x0200_0000_0000_0000),
    (p.header("PROGRAM", 0, 0, 0), 0x0300_0000_0000_0000),
    (p.header("WRITE", 0xFF, 0, 0), 0x01FF_0000_0000_0000),        # target [55:48]
    (p.header("WRITE", 0, 0xFFFFFF, 0), 0x0100_FFFF_FF00_0000),    # address [47:24]
    (p.header("WRITE", 0, 0, 0xFFFFFF), 0x0100_0000_00FF_FFFF),    # length [23:0]
    (p.header("READ", 0xAB, 0x123456, 0x789ABC), 0x02AB_1234_5678_9ABC),
])
def test_header_fields(beat, expected):
    assert beat == expected


@pytest.mark.parametrize(("beat", "expected"), [
    (p.op_end(), 0),
    (p.op_wait(0, 0), 0x1000_0000_0000_0000),
    (p.op_wait(0xFF, 0), 0x1FF0_0000_0000_0000),                    # resource [59:52]
    (p.op_wait(0, 0xFFFF_FFFF), 0x1000_0000_FFFF_FFFF),             # count [31:0]
    (p.op_in(0, 0, 0, 0), 0x2000_0000_0000_0000),
    (p.op_in(0xF, 0, 0, 0), 0x2F00_0000_0000_0000),                 # mover [59:56]
    (p.op_in(0, 0, 0, 0, hold=True), 0x2080_0000_0000_0000),        # hold [55]
    (p.op_in(0, 0, 0, 0, parts=2), 0x2020_0000_0000_0000),          # parts - 1 [54:53]
    (p.op_in(0, 0, 0, 0, parts=3), 0x2040_0000_0000_0000),
    (p.op_in(0, 0xFF, 0, 0), 0x200F_F000_0000_0000),                # bank [51:44]
    (p.op_in(0, 0, 0xFFFFF, 0), 0x2000_0FFF_FF00_0000),             # address [43:24]
    (p.op_in(0, 0, 0, 0xFFFFFF), 0x2000_0000_00FF_FFFF),            # words [23:0]
    (p.op_in(3, 2, 16, 3), 0x2300_2000_1000_0003),
    (p.op_out(0, 0, 0, 0), 0x3000_0000_0000_0000),
    (p.op_out(0xF, 0xFE, 0xFFFFF, 0xFFFFFF, parts=3), 0x3F4F_EFFF_FFFF_FFFF),
    # off chip (bank 255) the address field holds the high bits of words
    (p.op_out(0xF, 0xFF, 0, (1 << 44) - 1, parts=3), 0x3F4F_FFFF_FFFF_FFFF),
    (p.op_in(0, 0xFF, 0, 1 << 24), 0x200F_F000_0100_0000),
    (p.op_cfg(0, 0), 0x4000_0000_0000_0000),
    (p.op_cfg(0xFF, 0), 0x4FF0_0000_0000_0000),                     # field [59:52]
    (p.op_cfg(1, 5), 0x4010_0000_0000_0005),                        # value [47:0]
    (p.op_cfg(0, -1), 0x4000_FFFF_FFFF_FFFF),                       # two's complement, 48 bits
    (p.op_go(ends_task=False), 0x5000_0000_0000_0000),
    (p.op_go(), 0x5100_0000_0000_0000),                             # ends_task [56], default on
    (p.op_go(start=True, ends_task=False), 0x5800_0000_0000_0000),  # start [59]
    (p.op_go(flush=True, ends_task=False), 0x5400_0000_0000_0000),  # flush [58]
    (p.op_go(wait_done=True, ends_task=False), 0x5200_0000_0000_0000),  # wait_done [57]
    (p.op_go(start=True, wait_done=True), 0x5B00_0000_0000_0000),
])
def test_instruction_fields(beat, expected):
    assert beat == expected


@pytest.mark.parametrize(("encode", "field", "limit"), [
    (lambda v: p.header("WRITE", v, 0, 0), "target", 255),
    (lambda v: p.header("WRITE", 0, v, 0), "address", 16777215),
    (lambda v: p.header("READ", 0, 0, v), "length", 16777215),
    (lambda v: p.op_wait(v, 0), "resource", 255),
    (lambda v: p.op_wait(0, v), "count", 4294967295),
    (lambda v: p.op_in(v, 0, 0, 0), "mover", 15),
    (lambda v: p.op_in(0, v, 0, 0), "bank", 255),
    (lambda v: p.op_out(0, 0, v, 0), "address", 1048575),
    (lambda v: p.op_out(0, 0, 0, v), "words", 16777215),
    (lambda v: p.op_cfg(v, 0), "field", 255),
    (lambda v: p.op_in(0, p.DRAM_BANK, 0, v), "words", (1 << 44) - 1),
])
def test_values_out_of_range_are_refused_by_name(encode, field, limit):
    encode(limit)  # the largest value fits
    for bad in (limit + 1, -1):
        message = rf"\b{field} {bad} does not fit .*\(0 \.\. {limit}\)"
        with pytest.raises(FpdeepError, match=message):
            encode(bad)


def test_an_off_chip_command_names_no_bank_address():
    with pytest.raises(FpdeepError, match="an off-chip OUT names no address"):
        p.op_out(0, p.DRAM_BANK, 8, 1)


def test_unknown_opcode_and_parts_are_refused():
    with pytest.raises(FpdeepError, match="unknown host opcode 'NOP'; valid: WRITE, READ, PROGRAM"):
        p.header("NOP", 0, 0, 0)
    for parts in (0, 4):
        with pytest.raises(FpdeepError, match=f"1 to 3 beats, not {parts}"):
            p.op_in(0, 0, 0, 1, parts=parts)


def test_status_decodes_and_round_trips():
    ok = p.Status.decode(0x8100_0000_0000_0003)
    assert (ok.opcode, ok.code, ok.length, ok.ok) == (1, 0, 3, True)
    bad = p.Status.decode(0x8701_0000_0000_0000)
    assert (bad.opcode, bad.code, bad.length, bad.ok) == (7, 1, 0, False)
    assert bad.message == "unknown opcode"
    assert p.Status.decode(0x80FF_0000_0000_0000).message == "error code 255"
    assert p.Status(3, 2, 0xFFFFFF).encode() == 0x8302_0000_00FF_FFFF
    for status in (p.Status(0x7F, 0xFF, 0xFFFFFF), p.Status(2, 3, 17), p.Status(0, 0, 0)):
        assert p.Status.decode(status.encode()) == status
    with pytest.raises(FpdeepError, match="not a status beat"):
        p.Status.decode(0x0100_0000_0000_0003)


def _sign_extended(stored: int) -> int:
    """What the board sends for a 48-bit store word: bit 47 copied into bits 63:48."""
    return stored | (0xFFFF << 48) if stored >> 47 else stored


@pytest.mark.parametrize(("value", "stored"), [
    (0, 0), (1, 1), (-1, 0xFFFF_FFFF_FFFF), (-2, 0xFFFF_FFFF_FFFE),
    ((1 << 47) - 1, 0x7FFF_FFFF_FFFF), (-(1 << 47), 0x8000_0000_0000),
])
def test_words_round_trip_the_48_bit_extremes(value, stored):
    assert p.word(value) == stored
    assert p.signed_word(_sign_extended(stored)) == value
    assert p.signed_word(_sign_extended(p.word(value))) == value


def test_signed_word_reads_64_bit_beats():
    assert p.signed_word(0xFFFF_FFFF_FFFF_FFFF) == -1
    assert p.signed_word(0x7FFF_FFFF_FFFF_FFFF) == (1 << 63) - 1
    assert p.signed_word(0x8000_0000_0000_0000) == -(1 << 63)


def test_declarations_name_the_same_things():
    assert set(p.ERRORS) == set(p.ERROR_CODES.values())
    assert set(p.ERROR_CAUSES) == set(p.ERROR_CODES)
    assert set(p.ERROR_CODES) >= p.PACKET_ERRORS
    assert set(p.HOST_OPCODE_MEANINGS) == set(p.HOST_OPCODES)
    assert set(p.INSTRUCTIONS) == set(p.OPS) == set(p.OP_MEANINGS)
    assert all(fields["op"] is p.OP for fields in p.INSTRUCTIONS.values())


def test_overlapping_fields_are_refused():
    with pytest.raises(FpdeepError, match="b .*overlaps"):
        p._fields(p.Field("a", 0, 8), p.Field("b", 7, 2))
    with pytest.raises(FpdeepError, match="leaves the beat"):
        p._fields(p.Field("c", 60, 8))
