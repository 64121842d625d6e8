"""The host protocol and the controller's instruction format, declared once.

The board's RTL (hw/board/fpdeep_host.sv, fpdeep_sequencer.sv, fpdeep_board_ctl.sv) decodes
exactly these fields; every host (the cocotb testbench, a compiled host, a real board's driver)
encodes with these functions. docs/board.md is written from the tables here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from fpdeep.errors import FpdeepError

#: Host packet opcodes (header bits [63:56]).
HOST_OPCODES: Mapping[str, int] = MappingProxyType({
    "WRITE": 0x01,    # store bank `target`, words from `address` on; payload: a word per beat
    "READ": 0x02,     # answered with a status beat, then `length` words, tlast on the last
    "PROGRAM": 0x03,  # resource `target`'s instruction memory from `address` on
})
#: Status responses carry 0x80 | the opcode in bits [63:56].
RESPONSE = 0x80

#: Error codes, in the status response (bits [55:48]) and in the CSR STATUS register.
ERRORS: Mapping[int, str] = MappingProxyType({
    0: "ok",
    1: "unknown opcode",
    2: "packet length does not match its payload",
    3: "unknown bank or resource, or a region beyond its size",
    4: "step started before every weight bank and program was loaded",
    5: "deadlock: no progress within the watchdog limit",
    6: "a stream's last flag did not close its tensor",
})
ERROR_CODES: Mapping[str, int] = MappingProxyType({
    "ok": 0, "opcode": 1, "length": 2, "target": 3, "not_loaded": 4, "deadlock": 5, "frame": 6})

#: Controller states in the CSR STATUS register.
STATES = ("idle", "busy", "done", "error")

#: Field widths of the header and of the instructions.
TARGET_BITS, ADDRESS_BITS, LENGTH_BITS = 8, 24, 24
BANK_BITS, BANK_ADDRESS_BITS, WORD_LENGTH_BITS = 8, 20, 24
WORD_BITS = 48  # a store word: a 16-bit element or a 48-bit raw sum, sign-extended
BEAT_BITS = 64  # host stream and instruction word

#: Instruction opcodes (bits [63:60]).
OPS: Mapping[str, int] = MappingProxyType(
    {"END": 0, "WAIT": 1, "IN": 2, "OUT": 3, "CFG": 4, "GO": 5})


def header(opcode: str, target: int, address: int, length: int) -> int:
    """A packet's header beat."""
    if opcode not in HOST_OPCODES:
        raise FpdeepError(f"unknown host opcode {opcode!r}; valid: {', '.join(HOST_OPCODES)}")
    _fits("target", target, TARGET_BITS)
    _fits("address", address, ADDRESS_BITS)
    _fits("length", length, LENGTH_BITS)
    return HOST_OPCODES[opcode] << 56 | target << 48 | address << 24 | length


@dataclass(frozen=True)
class Status:
    """A status response beat, decoded."""

    opcode: int
    code: int
    length: int

    @classmethod
    def decode(cls, beat: int) -> Status:
        if not beat >> 63:
            raise FpdeepError(f"host response {beat:#018x} is not a status beat")
        return cls((beat >> 56) & 0x7F, (beat >> 48) & 0xFF, beat & ((1 << LENGTH_BITS) - 1))

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def message(self) -> str:
        return ERRORS.get(self.code, f"error code {self.code}")


def _fits(name: str, value: int, bits: int) -> None:
    if not 0 <= value < 1 << bits:
        raise FpdeepError(f"{name} {value} does not fit the {bits}-bit field "
                          f"(0 .. {(1 << bits) - 1})")


def word(value: int) -> int:
    """A signed store word as a 64-bit beat (two's complement of the 48-bit word)."""
    return value & ((1 << WORD_BITS) - 1)


def signed_word(beat: int) -> int:
    """A read-back beat (the word sign-extended to 64 bits) as a Python int."""
    beat &= (1 << BEAT_BITS) - 1
    return beat - (1 << BEAT_BITS) if beat >> (BEAT_BITS - 1) else beat


# ---- instructions -----------------------------------------------------------------------

def op_end() -> int:
    return OPS["END"] << 60


def op_wait(resource: int, count: int) -> int:
    _fits("resource", resource, 8)
    _fits("task count", count, 32)
    return OPS["WAIT"] << 60 | resource << 52 | count


def _move(op: str, mover: int, bank: int, address: int, words: int, *, hold: bool,
          parts: int) -> int:
    _fits("mover", mover, 4)
    _fits("bank", bank, BANK_BITS)
    _fits("bank address", address, BANK_ADDRESS_BITS)
    _fits("words", words, WORD_LENGTH_BITS)
    if not 1 <= parts <= 3:
        raise FpdeepError(f"a word travels as 1 to 3 beats, not {parts}")
    return (OPS[op] << 60 | mover << 56 | int(hold) << 55 | (parts - 1) << 53 | bank << 44
            | address << 24 | words)


def op_in(mover: int, bank: int, address: int, words: int, *, hold: bool = False,
          parts: int = 1) -> int:
    return _move("IN", mover, bank, address, words, hold=hold, parts=parts)


def op_out(mover: int, bank: int, address: int, words: int, *, parts: int = 1) -> int:
    return _move("OUT", mover, bank, address, words, hold=False, parts=parts)


def op_cfg(field: int, value: int) -> int:
    _fits("configuration field", field, 8)
    return OPS["CFG"] << 60 | field << 52 | (value & ((1 << 48) - 1))


def op_go(*, start: bool = False, flush: bool = False, wait_done: bool = False,
          ends_task: bool = True) -> int:
    return (OPS["GO"] << 60 | int(start) << 59 | int(flush) << 58 | int(wait_done) << 57
            | int(ends_task) << 56)
