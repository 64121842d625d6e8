"""Carrying a host script out through a `Transport`, as the simulation hosts carry it out on
the cluster top's ports (sim/native_host.cpp, sim/tb_cluster.py): the same operations in the
same order, the same answers recorded, so `fpdeep.cosim.session.decode` reads them alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from fpdeep.cosim.script import POLL_OUTCOMES, Op, Outputs, Script
from fpdeep.errors import FpdeepError
from fpdeep.hwlib.protocol import HEADER, HOST_OPCODES

from .transport import Transport

#: Called with PROGRESS's arguments (step, steps, task[, reading]) at each PROGRESS operation.
ProgressCallback = Callable[..., None]


def answer_limit(beats: tuple[int, ...]) -> int:
    """The most beats the answer to packet ``beats`` has: a READ's status beat and its words,
    any other packet's status beat."""
    if beats and HEADER["opcode"].take(beats[0]) == HOST_OPCODES["READ"]:
        return 1 + HEADER["length"].take(beats[0])
    return 1


def execute(script: Script, chain: Transport, *,
            progress: ProgressCallback | None = None) -> Outputs:
    """Run ``script`` on ``chain``: what the boards answered, as a host's outputs file holds
    it. A POLL that does not end on its wanted value skips to the operations after FAIL (the
    readings that explain the failure), which run, and the script stops."""
    if script.boards != chain.boards:
        raise FpdeepError(f"the host script is for {script.boards} board(s); the chain has "
                          f"{chain.boards}")
    ops = script.ops
    fail_section = next((k for k, op in enumerate(ops) if op.name == "FAIL"), len(ops))
    chain.reset(script.reset_cycles)
    began = time.monotonic_ns()
    mark = chain.cycle()
    answers: dict[int, tuple[int, ...]] = {}
    failed: int | None = None
    k = 0
    while k < len(ops):
        op = ops[k]
        if op.name == "FAIL":
            if failed is None:
                break
        elif op.name == "MARK":
            mark = chain.cycle()
            answers[k] = (mark, time.monotonic_ns() - began)
        elif op.name == "PROGRESS":
            if progress is not None:
                progress(*op.args)
        elif op.name == "POLL":
            answers[k] = _poll(chain, op, since=mark)
            if POLL_OUTCOMES[answers[k][1]] != "wanted" and failed is None:
                failed = k
                k = fail_section  # the failure section starts after FAIL
        else:
            answer = _primitive(chain, op)
            if answer is not None:
                answers[k] = answer
        k += 1
    return Outputs(answers, failed, chain.cycle(), time.monotonic_ns() - began)


def _primitive(chain: Transport, op: Op) -> tuple[int, ...] | None:
    """The transport's part of one operation; its answer where it has one."""
    b, args = op.board, op.args
    if op.name == "EXCHANGE":
        chain.write_stream(b, args)
        answer = chain.read_stream(b, answer_limit(args))
        if not answer:
            raise FpdeepError(f"board {b} did not answer a host packet (header {args[0]:#018x})")
        return tuple(answer)
    if op.name == "CSR_WRITE":
        chain.csr_write(b, args[0], args[1])
        return None
    if op.name == "CSR_READ":
        return (chain.csr_read(b, args[0]),)
    if op.name == "IDLE":
        chain.idle(args[0])
        return None
    raise FpdeepError(f"host operation {op.name} is not one the runtime carries out")


def _poll(chain: Transport, op: Op, *, since: int) -> tuple[int, int, int]:
    """Read the register until it shows the wanted value, a bad one, or the time is up:
    (the last value, the outcome's index in POLL_OUTCOMES, the cycle it ended on)."""
    address, mask, want, timeout, interval, *bad = op.args
    while True:
        value = chain.csr_read(op.board, address)
        if value & mask == want:
            outcome = "wanted"
        elif value & mask in bad:
            outcome = "bad"
        elif chain.cycle() - since > timeout:
            outcome = "timeout"
        else:
            chain.idle(interval)
            continue
        return value, POLL_OUTCOMES.index(outcome), chain.cycle()
