"""A host session as a plain list of operations, and the file formats hosts exchange it in.

fpdeep compiles what a host does to a cluster (`fpdeep.cosim.session`) into these operations;
a host only executes them against the boards' ports, one after the other, and writes what the
boards answered: the cocotb host (sim/tb_cluster.py) and the compiled one
(sim/native_host.cpp) read the same script file and write the same outputs file, so one
Python decoder checks both. Both files are little-endian 64-bit words:

    script:  MAGIC, VERSION, boards, reset cycles, operations; then per operation: code,
             board, n, n arguments
    outputs: MAGIC, VERSION, then per answered operation: index, n, n words;
             last: END, the failed operation's index (or NONE), total cycles, wall nanoseconds

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
VERSION = 1
#: The word that ends an outputs file, and "no operation" in its failed-index field.
END = NONE = (1 << 64) - 1

#: Operation codes and what each does; its arguments follow in this order.
OPS = MappingProxyType({
    # send the arguments as one packet on the board's host stream (tlast on the last beat)
    # and record every beat of its answer up to tlast
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
    # the host rewrites its progress file: {"step", "steps", "task", "tasks": 1} (task 1: the
    # step is over)
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
class Script:
    """A session's operations for a cluster of ``boards`` boards, held in reset for
    ``reset_cycles`` cycles before the first."""

    boards: int
    reset_cycles: int
    ops: tuple[Op, ...]


def write_script(path: Path, script: Script) -> None:
    words = [MAGIC, VERSION, script.boards, script.reset_cycles, len(script.ops)]
    for op in script.ops:
        words += [OPS[op.name], op.board, len(op.args), *op.args]
    Path(path).write_bytes(np.asarray(words, dtype="<u8").tobytes())


def read_script(path: Path) -> Script:
    words = _words(path, "script")
    boards, reset_cycles, count = (int(v) for v in words[2:5])
    ops, at = [], 5
    for _ in range(count):
        code, board, n = (int(v) for v in words[at:at + 3])
        ops.append(Op(CODES[code], board, tuple(int(v) for v in words[at + 3:at + 3 + n])))
        at += 3 + n
    return Script(boards, reset_cycles, tuple(ops))


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


def write_outputs(path: Path, outputs: Outputs) -> None:
    words = [MAGIC, VERSION]
    for index, answer in outputs.answers.items():
        words += [index, len(answer), *answer]
    words += [END, NONE if outputs.failed is None else outputs.failed, outputs.cycles,
              outputs.wall_ns]
    Path(path).write_bytes(np.asarray(words, dtype="<u8").tobytes())


def read_outputs(path: Path) -> Outputs:
    words = _words(path, "outputs")
    answers: dict[int, tuple[int, ...]] = {}
    at = 2
    while at < len(words) and int(words[at]) != END:
        index, n = int(words[at]), int(words[at + 1])
        answers[index] = tuple(int(v) for v in words[at + 2:at + 2 + n])
        at += 2 + n
    if at + 4 > len(words):
        raise FpdeepError(f"host outputs {str(path)!r} end early (no END record): the host "
                          "stopped before the session ended")
    failed = int(words[at + 1])
    return Outputs(answers, None if failed == NONE else failed, int(words[at + 2]),
                   int(words[at + 3]))


def _words(path: Path, what: str) -> np.ndarray:
    data = Path(path).read_bytes()
    words = np.frombuffer(data[:len(data) // 8 * 8], dtype="<u8")
    if len(words) < 2 or int(words[0]) != MAGIC or int(words[1]) != VERSION:
        raise FpdeepError(f"{str(path)!r} is not an fpdeep host {what} file of version "
                          f"{VERSION}")
    return words
