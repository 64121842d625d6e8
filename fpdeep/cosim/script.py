"""A host session as a plain list of operations, and the file formats hosts exchange it in.

fpdeep compiles what a host does to a cluster (`fpdeep.cosim.session`) into these operations;
a host only executes them against the boards' ports, one after the other, and writes what the
boards answered: the cocotb host (sim/tb_cluster.py) and the compiled one
(sim/native_host.cpp) read the same script file and write the same outputs file, so one
Python decoder checks both. Both files are little-endian 64-bit words:

    script:  MAGIC, VERSION, boards, reset cycles, link seed, link bit error rate and link
             frame drop rate (each x 2^32), operations; then per operation: code, board, n,
             n arguments
    outputs: MAGIC, VERSION, then per answered operation: index, n, n words;
             last: END, the failed operation's index (or NONE), total cycles, wall nanoseconds

A host writes the outputs file as it goes: the header at once, the answers so far at every
PROGRESS operation, the END record last. So a reader (`OutputsReader`) can follow a long
session step by step while it runs, and what a host that was stopped had answered is there.

A POLL that does not end on its wanted value (a bad value, or its time is up) makes the host
skip to the operations after FAIL (the readings that explain the failure), run those and stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from fpdeep.errors import FpdeepError

MAGIC = int.from_bytes(b"FPDHOST\0", "little")
VERSION = 2
#: The word that ends an outputs file, and "no operation" in its failed-index field.
END = NONE = (1 << 64) - 1

#: Operation codes and what each does; its arguments follow in this order.
OPS = MappingProxyType({
    # send the arguments as one packet on the board's host stream (tlast on the last beat)
    # and record every beat of its answer up to tlast. A host may carry a run of consecutive
    # EXCHANGEs out boards side by side, each board's in their order: a session puts no
    # packet in such a run that depends on another board's
    "EXCHANGE": 1,
    # write `value` to CSR byte address `address`
    "CSR_WRITE": 2,
    # read CSR `address`; record its value
    "CSR_READ": 3,
    # read CSR `address` every `interval` cycles until value & mask == want; stop early (a
    # failure) on value & mask in bad..., or when `timeout` cycles have passed since the last
    # MARK; record the last value, the outcome (`POLL_OUTCOMES`) and the cycle it ended on
    "POLL": 4,
    # a point in time: record the cycle and the wall-clock nanoseconds since the host began
    "MARK": 5,
    # the rest runs only after a failed POLL
    "FAIL": 6,
    # the host rewrites its progress file: {"step", "steps", "task", "tasks": 1, "cycle"}
    # (task 1: the step is over; cycle: the host's clock cycle); with a fourth argument of
    # READING_BACK, also "reading": true (the step has ended and the host reads its results
    # back, which on a large design takes as long as the load). The native host also writes
    # it at its start ({"configuring": true, "cycle": 0}) and every 10 s, with the cycle it
    # has reached, so that a long step or load shows it is moving
    "PROGRESS": 7,
    # let `cycles` clock cycles pass with the host's buses idle
    "IDLE": 8,
    # the two halves of EXCHANGE, for a host runtime that reaches the boards through a
    # transport (fpdeep.runtime; the native host's --serve mode): send the arguments as one
    # packet; record the board's next answer up to tlast (empty: none within `limit` cycles)
    "SEND": 9,
    "RECEIVE": 10,
})
CODES = MappingProxyType({v: k for k, v in OPS.items()})
POLL_OUTCOMES = ("wanted", "bad", "timeout")
#: PROGRESS's fourth argument once a step has ended: the host is reading its results back.
READING_BACK = 1
#: The operations whose answers the outputs file holds.
ANSWERED = frozenset({"EXCHANGE", "CSR_READ", "POLL", "MARK"})


@dataclass(frozen=True)
class Op:
    """One host operation on board ``board`` (0 for MARK, FAIL and PROGRESS)."""

    name: str
    board: int
    args: tuple[int, ...] = ()

    @classmethod
    def poll(cls, board: int, address: int, *, mask: int, want: int, bad: Sequence[int],
             timeout: int, interval: int) -> Op:
        return cls("POLL", board, (address, mask, want, timeout, interval, *bad))


@dataclass(frozen=True)
class LinkFaults:
    """What the simulated link channels inject (the cluster top's link_seed, link_ber and
    link_drop, which the host sets before it releases the reset): bit errors per bit and
    frames lost per frame, each as a fraction of 2^32."""

    seed: int = 0
    ber: int = 0
    drop: int = 0

    @classmethod
    def rates(cls, *, seed: int, ber: float, drop: float) -> LinkFaults:
        return cls(seed & 0xFFFFFFFF, round(ber * 2**32), round(drop * 2**32))

    def words(self) -> list[int]:
        return [self.seed, self.ber, self.drop]


@dataclass(frozen=True)
class Script:
    """A session's operations for a cluster of ``boards`` boards, held in reset for
    ``reset_cycles`` cycles before the first, its links faulty as ``faults`` says."""

    boards: int
    reset_cycles: int
    ops: tuple[Op, ...]
    faults: LinkFaults = LinkFaults()


#: No faults: ideal links.
NO_LINK_FAULTS = LinkFaults()

#: Words of a script's header: MAGIC, VERSION, boards, reset cycles, the link faults, count.
SCRIPT_HEADER = 8


def write_script(path: Path, script: Script) -> None:
    words = [MAGIC, VERSION, script.boards, script.reset_cycles, *script.faults.words(),
             len(script.ops)]
    for op in script.ops:
        words += [OPS[op.name], op.board, len(op.args), *op.args]
    Path(path).write_bytes(np.asarray(words, dtype="<u8").tobytes())


def read_script(path: Path) -> Script:
    words = _words(path, "script")
    boards, reset_cycles, seed, ber, drop, count = (int(v) for v in words[2:SCRIPT_HEADER])
    ops, at = [], SCRIPT_HEADER
    for _ in range(count):
        code, board, n = (int(v) for v in words[at:at + 3])
        ops.append(Op(CODES[code], board, tuple(int(v) for v in words[at + 3:at + 3 + n])))
        at += 3 + n
    return Script(boards, reset_cycles, tuple(ops), LinkFaults(seed, ber, drop))


@dataclass(frozen=True)
class Outputs:
    """What a host recorded: each answered operation's words by its index, the operation whose
    failure stopped the session (None when none did), and the run's cycles and wall time."""

    answers: dict[int, tuple[int, ...]]
    failed: int | None
    cycles: int
    wall_ns: int

    @property
    def cycles_per_s(self) -> int:
        return round(self.cycles / max(self.wall_ns * 1e-9, 1e-9))


class OutputsWriter:
    """Writes an outputs file while the host runs: answers collect until ``flush`` appends
    them (a host flushes at every PROGRESS operation); ``close`` adds the END record."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.write_bytes(np.asarray([MAGIC, VERSION], dtype="<u8").tobytes())
        self._words: list[int] = []

    def answer(self, index: int, words: Sequence[int]) -> None:
        self._words += [index, len(words), *words]

    def flush(self) -> None:
        with self.path.open("ab") as f:
            f.write(np.asarray(self._words, dtype="<u8").tobytes())
        self._words = []

    def close(self, failed: int | None, cycles: int, wall_ns: int) -> None:
        self._words += [END, NONE if failed is None else failed, cycles, wall_ns]
        self.flush()


def write_outputs(path: Path, outputs: Outputs) -> None:
    writer = OutputsWriter(path)
    for index, answer in outputs.answers.items():
        writer.answer(index, answer)
    writer.close(outputs.failed, outputs.cycles, outputs.wall_ns)


class OutputsReader:
    """Follows an outputs file as its host writes it: each ``read`` takes in the answers
    flushed since the last one; ``finished`` once the END record is in."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.answers: dict[int, tuple[int, ...]] = {}
        self.last = -1  # the highest operation index answered so far
        self._offset = 0
        self._pending = np.empty(0, dtype="<u8")
        self._header = False
        self._end: tuple[int, int, int] | None = None

    @property
    def finished(self) -> bool:
        return self._end is not None

    def read(self) -> bool:
        """Take in what the host has flushed; True when new answers came."""
        if self.finished:
            return False
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return False
        whole = len(data) // 8 * 8
        self._offset += whole
        words = np.concatenate([self._pending, np.frombuffer(data[:whole], dtype="<u8")])
        at, before = 0, len(self.answers)
        if not self._header:
            if len(words) < 2:
                self._pending = words
                return False
            if int(words[0]) != MAGIC or int(words[1]) != VERSION:
                raise FpdeepError(f"{str(self.path)!r} is not an fpdeep host outputs file of "
                                  f"version {VERSION}")
            self._header, at = True, 2
        while at + 2 <= len(words):
            index, n = int(words[at]), int(words[at + 1])
            if index == END:
                if at + 4 <= len(words):
                    self._end = (int(words[at + 1]), int(words[at + 2]), int(words[at + 3]))
                    at += 4
                break
            if at + 2 + n > len(words):
                break
            self.answers[index] = tuple(words[at + 2:at + 2 + n].tolist())
            self.last = max(self.last, index)
            at += 2 + n
        self._pending = words[at:]
        return len(self.answers) > before

    def outputs(self) -> Outputs:
        """Everything the host recorded, once it has finished."""
        if self._end is None:
            raise FpdeepError(f"host outputs {str(self.path)!r} end early (no END record): "
                              "the host stopped before the session ended")
        failed, cycles, wall_ns = self._end
        return Outputs(self.answers, None if failed == NONE else failed, cycles, wall_ns)


def read_outputs(path: Path) -> Outputs:
    reader = OutputsReader(path)
    reader.read()
    return reader.outputs()


def _words(path: Path, what: str) -> np.ndarray:
    data = Path(path).read_bytes()
    words = np.frombuffer(data[:len(data) // 8 * 8], dtype="<u8")
    if len(words) < 2 or int(words[0]) != MAGIC or int(words[1]) != VERSION:
        raise FpdeepError(f"{str(path)!r} is not an fpdeep host {what} file of version "
                          f"{VERSION}")
    return words
