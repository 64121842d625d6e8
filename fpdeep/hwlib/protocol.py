"""The host protocol and the controller's instruction format, declared once.

The board's RTL (hw/board/fpdeep_host.sv, fpdeep_sequencer.sv, fpdeep_board_ctl.sv) decodes
exactly these fields; every host (the cocotb testbench, a compiled host, a real board's driver)
encodes with these functions. Every field of a 64-bit beat is declared once below as a
`Field` (name, lowest bit, width); the encoders place values through those declarations and
docs/board.md's tables are written from them (``python -m fpdeep.codegen.board_doc``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from fpdeep.errors import FpdeepError

WORD_BITS = 48  # a store word: a 16-bit element or a 48-bit raw sum, sign-extended
BANK_WIDTH_BITS = 8  # a bank's word width (1 .. WORD_BITS) in fpdeep_store's WIDTHS
BEAT_BITS = 64  # host stream and instruction word


@dataclass(frozen=True)
class Field:
    """Bits ``[lsb + width - 1 : lsb]`` of a 64-bit beat."""

    name: str
    lsb: int
    width: int
    meaning: str = ""

    @property
    def msb(self) -> int:
        return self.lsb + self.width - 1

    @property
    def bits(self) -> str:
        """The bit range as the RTL writes it: ``63:56``, or ``55`` for a single bit."""
        return str(self.lsb) if self.width == 1 else f"{self.msb}:{self.lsb}"

    @property
    def limit(self) -> int:
        """One more than the largest value the field holds."""
        return 1 << self.width

    def place(self, value: int, where: str) -> int:
        """``value`` at the field's bits; ``where`` names the beat in the error."""
        if not 0 <= value < self.limit:
            raise FpdeepError(f"{where} {self.name} {value} does not fit the {self.width}-bit "
                              f"field [{self.bits}] (0 .. {self.limit - 1})")
        return value << self.lsb

    def take(self, beat: int) -> int:
        """The field's value in ``beat``."""
        return (beat >> self.lsb) & (self.limit - 1)


def _fields(*fields: Field) -> Mapping[str, Field]:
    """A beat's fields by name, checked to lie inside the beat without overlapping."""
    used = 0
    for f in fields:
        mask = (f.limit - 1) << f.lsb
        if f.lsb < 0 or f.msb >= BEAT_BITS or used & mask:
            raise FpdeepError(f"field {f.name} [{f.bits}] overlaps another or leaves the beat")
        used |= mask
    return MappingProxyType({f.name: f for f in fields})


def _pack(where: str, fields: Mapping[str, Field], **values: int) -> int:
    return sum(fields[name].place(value, where) for name, value in values.items())


# ---- host packets -----------------------------------------------------------------------

#: Host packet opcodes (the header's `opcode` field).
HOST_OPCODES: Mapping[str, int] = MappingProxyType(
    {"WRITE": 0x01, "READ": 0x02, "PROGRAM": 0x03, "MEMORY": 0x04})
HOST_OPCODE_MEANINGS: Mapping[str, str] = MappingProxyType({
    "WRITE": "store bank `target`, words from `address` on; payload: `length` beats, a word "
             "in the low 48 bits of each (a bank narrower than 48 bits keeps the word's low "
             "bits); answered with a status beat",
    "READ": "no payload; answered with a status beat, then `length` words of bank `target` "
            "from `address` on, each sign-extended from its bank's width to 64 bits, tlast on "
            "the last",
    "PROGRAM": "resource `target`'s instruction memory from `address` on; payload: `length` "
               "instructions; answered with a status beat",
    "MEMORY": "where the next WRITE or READ of bank 255 goes in off-chip memory: "
              "`target` is log2 of the bytes a word takes there (0-3), `length` is 1 and the "
              "payload beat the byte address of the first word; answered with a status beat "
              "(only on a board with off-chip memory)",
})

#: A packet's first beat.
HEADER: Mapping[str, Field] = _fields(
    Field("opcode", 56, 8, "what the packet does (`HOST_OPCODES`)"),
    Field("target", 48, 8, "WRITE, READ: the store bank (255: off-chip memory); "
                           "PROGRAM: the resource; MEMORY: log2 of a word's bytes"),
    Field("address", 24, 24, "the first word within the bank or instruction memory"),
    Field("length", 0, 24, "words: payload beats of WRITE and PROGRAM, words READ returns"),
)

#: Status responses carry 0x80 | the opcode in bits [63:56].
RESPONSE = 0x80

#: The beat that answers every packet (for READ, it heads the data).
STATUS: Mapping[str, Field] = _fields(
    Field("response", 63, 1, "1: a status beat"),
    Field("opcode", 56, 7, "the answered packet's opcode"),
    Field("code", 48, 8, "the error code (`ERRORS`), 0: ok"),
    Field("length", 0, 24, "the answered packet's length"),
)

#: Error codes, in the status response (its `code` field) and in the CSR STATUS register.
ERRORS: Mapping[int, str] = MappingProxyType({
    0: "ok",
    1: "unknown opcode",
    2: "packet length does not match its payload",
    3: "unknown bank or resource, or a region beyond its size",
    4: "step started before every weight bank and program was loaded",
    5: "deadlock: no progress within the watchdog limit",
    6: "a stream's last flag did not close its tensor",
    7: "a link is stuck or its peer overran it (the CSR's LINK_FLAGS name the link)",
    8: "the off-chip memory answered a burst with an error",
})
ERROR_CODES: Mapping[str, int] = MappingProxyType({
    "ok": 0, "opcode": 1, "length": 2, "target": 3, "not_loaded": 4, "deadlock": 5, "frame": 6,
    "link": 7, "memory": 8})
#: The errors a packet's status response can carry (fpdeep_host); the others arise in a step
#: (fpdeep_board_ctl) and show only in the CSR.
PACKET_ERRORS = frozenset({"ok", "opcode", "length", "target"})
#: When each error happens, as the RTL decides it.
ERROR_CAUSES: Mapping[str, str] = MappingProxyType({
    "ok": "the packet was carried out, or the step ran to its end",
    "opcode": "a header whose opcode is none of `HOST_OPCODES`",
    "length": "WRITE, PROGRAM: tlast on the header although `length` > 0, none on it although "
              "`length` = 0, or tlast before or after the `length`-th payload beat; READ: "
              "beats after the header",
    "target": "WRITE, READ: no bank `target`, or `address` + `length` beyond its depth; "
              "PROGRAM: no resource `target`, or beyond its instruction memory (checked "
              "before the length; nothing is written)",
    "not_loaded": "CONTROL.start while a bank of weights, biases or constants (exp table, "
                  "pooling tables, zero word) has had no complete WRITE, or a resource no "
                  "complete PROGRAM, since power-on reset",
    "deadlock": "during a step no mover moved a beat and no engine was busy for the watchdog's "
                "cycles; the step is cancelled and STALLED_UNIT names the resource",
    "frame": "during a step a stream's last flag did not mark the last word of an output "
             "mover's command, or an engine or unit flagged a broken frame; the step is "
             "cancelled",
    "link": "during a step a link end saw no ACK or credit move for its stuck limit while it "
            "had words to send, or its peer sent a frame beyond the credit it was given; the "
            "step is cancelled",
    "memory": "during a step an off-chip memory reader or writer got a response other than "
              "OKAY (the address lies beyond the memory); the step is cancelled",
})

#: Controller states in the CSR STATUS register.
STATES = ("idle", "busy", "done", "error")

#: Field widths of the header.
TARGET_BITS = HEADER["target"].width
ADDRESS_BITS = HEADER["address"].width
LENGTH_BITS = HEADER["length"].width


def header(opcode: str, target: int, address: int, length: int) -> int:
    """A packet's header beat."""
    if opcode not in HOST_OPCODES:
        raise FpdeepError(f"unknown host opcode {opcode!r}; valid: {', '.join(HOST_OPCODES)}")
    return _pack("header", HEADER, opcode=HOST_OPCODES[opcode], target=target,
                 address=address, length=length)


@dataclass(frozen=True)
class Status:
    """A status response beat, decoded."""

    opcode: int
    code: int
    length: int

    @classmethod
    def decode(cls, beat: int) -> Status:
        if not STATUS["response"].take(beat):
            raise FpdeepError(f"host response {beat:#018x} is not a status beat")
        return cls(*(STATUS[name].take(beat) for name in ("opcode", "code", "length")))

    def encode(self) -> int:
        """The beat the board sends for this status."""
        return _pack("status", STATUS, response=1, opcode=self.opcode, code=self.code,
                     length=self.length)

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def message(self) -> str:
        return ERRORS.get(self.code, f"error code {self.code}")


def word(value: int) -> int:
    """A signed store word as a 64-bit beat (two's complement of the 48-bit word)."""
    return value & ((1 << WORD_BITS) - 1)


def signed_word(beat: int) -> int:
    """A read-back beat (the word sign-extended to 64 bits) as a Python int."""
    beat &= (1 << BEAT_BITS) - 1
    return beat - (1 << BEAT_BITS) if beat >> (BEAT_BITS - 1) else beat


# ---- instructions -----------------------------------------------------------------------

#: Instruction opcodes (the `op` field).
OPS: Mapping[str, int] = MappingProxyType(
    {"END": 0, "WAIT": 1, "IN": 2, "OUT": 3, "CFG": 4, "GO": 5, "MEM": 6})
OP_MEANINGS: Mapping[str, str] = MappingProxyType({
    "END": "the step's program of this resource is over (any op not listed acts as END)",
    "WAIT": "wait until resource `resource` has ended `count` tasks in this step",
    "IN": "start input mover `mover`: `words` store words to the resource's stream",
    "OUT": "start output mover `mover`: `words` words from the resource's stream into the store",
    "CFG": "set runtime configuration input `field` to `value`",
    "GO": "wait for the started input movers, pulse start/flush, wait for done (if asked) and "
          "the output movers; then the next instruction",
    "MEM": "where the next IN or OUT of bank 255 goes in off-chip memory",
})

#: Every instruction's opcode.
OP = Field("op", 60, 4, "the instruction (`OPS`)")

_MOVE = (
    Field("mover", 56, 4, "the resource's mover, in its order of streams"),
    Field("hold", 55, 1, "IN only: the same word `words` times"),
    Field("parts", 53, 2, "beats per word minus one (a raw 48-bit sum over a link: 2)"),
    Field("chain", 52, 1, "IN only: the mover's next IN continues this stream (a tensor "
                          "kept in two banks)"),
    Field("bank", 44, 8, "the store bank (255: off-chip memory, at the last MEM's "
                         "address; `address` then holds the high bits of `words`)"),
    Field("address", 24, 20, "the first word within the bank"),
    Field("words", 0, 24, "words to move (bank 255: their low bits)"),
)
#: The fields of each instruction besides `op`; bits not named are 0.
INSTRUCTIONS: Mapping[str, Mapping[str, Field]] = MappingProxyType({
    "END": _fields(OP),
    "WAIT": _fields(OP, Field("resource", 52, 8, "the resource waited for"),
                    Field("count", 0, 32, "until it has ended this many tasks of the step")),
    "IN": _fields(OP, *_MOVE),
    "OUT": _fields(OP, *_MOVE),
    "CFG": _fields(OP, Field("field", 52, 8, "the resource's runtime configuration input"),
                   Field("value", 0, 48, "its value (two's complement, cut to 48 bits)")),
    "GO": _fields(OP, Field("start", 59, 1, "pulse the resource's start after the inputs"),
                  Field("flush", 58, 1, "pulse its flush after the inputs"),
                  Field("wait_done", 57, 1, "wait for its done"),
                  Field("ends_task", 56, 1, "count a task ended when the pass is over")),
    "MEM": _fields(OP, Field("slot", 54, 2, "log2 of the bytes a word takes in off-chip memory"),
                   Field("address", 0, 48, "the byte address of the first word")),
})

#: Field widths of the movers' commands.
BANK_BITS = INSTRUCTIONS["IN"]["bank"].width
BANK_ADDRESS_BITS = INSTRUCTIONS["IN"]["address"].width
WORD_LENGTH_BITS = INSTRUCTIONS["IN"]["words"].width
#: The bank number that means off-chip memory, in IN, OUT, WRITE and READ.
DRAM_BANK = (1 << BANK_BITS) - 1
#: Length bits of an off-chip command, whose `address` field carries the high bits of
#: `words` (off chip, MEM says where): a whole fully connected layer's weights (VGG's fc6
#: holds 103 M) stream as one command.
DRAM_WORD_LENGTH_BITS = WORD_LENGTH_BITS + BANK_ADDRESS_BITS
#: Byte address bits of off-chip memory in MEM (a MEMORY packet's payload carries 64).
MEM_ADDRESS_BITS = INSTRUCTIONS["MEM"]["address"].width


def _instruction(op: str, **values: int) -> int:
    return _pack(op, INSTRUCTIONS[op], op=OPS[op], **values)


def op_end() -> int:
    return _instruction("END")


def op_wait(resource: int, count: int) -> int:
    return _instruction("WAIT", resource=resource, count=count)


def _move(op: str, mover: int, bank: int, address: int, words: int, *, hold: bool,
          parts: int, chain: bool) -> int:
    if not 1 <= parts <= 3:
        raise FpdeepError(f"a word travels as 1 to 3 beats, not {parts}")
    if bank == DRAM_BANK:
        if address:
            raise FpdeepError(f"an off-chip {op} names no address (MEM does), not {address}")
        if not 0 <= words < 1 << DRAM_WORD_LENGTH_BITS:
            raise FpdeepError(f"{op} words {words} does not fit an off-chip command's "
                              f"{DRAM_WORD_LENGTH_BITS} bits (0 .. "
                              f"{(1 << DRAM_WORD_LENGTH_BITS) - 1})")
        address, words = words >> WORD_LENGTH_BITS, words & ((1 << WORD_LENGTH_BITS) - 1)
    return _instruction(op, mover=mover, hold=int(hold), parts=parts - 1, chain=int(chain),
                        bank=bank, address=address, words=words)


def op_in(mover: int, bank: int, address: int, words: int, *, hold: bool = False,
          parts: int = 1, chain: bool = False) -> int:
    return _move("IN", mover, bank, address, words, hold=hold, parts=parts, chain=chain)


def op_out(mover: int, bank: int, address: int, words: int, *, parts: int = 1) -> int:
    return _move("OUT", mover, bank, address, words, hold=False, parts=parts, chain=False)


def op_mem(slot: int, address: int) -> int:
    """The off-chip place of the next IN or OUT of bank 255: words of 2^slot bytes
    from byte ``address`` on."""
    return _instruction("MEM", slot=slot, address=address)


def op_cfg(field: int, value: int) -> int:
    value &= INSTRUCTIONS["CFG"]["value"].limit - 1
    return _instruction("CFG", field=field, value=value)


def op_go(*, start: bool = False, flush: bool = False, wait_done: bool = False,
          ends_task: bool = True) -> int:
    return _instruction("GO", start=int(start), flush=int(flush), wait_done=int(wait_done),
                        ends_task=int(ends_task))
