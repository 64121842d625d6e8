"""A build's simulated cluster as a `Transport`: the native host (sim/native_host.cpp) in its
``--serve`` mode, Verilated with the cluster top, takes one transport operation at a time on
a pipe, in the host script's encoding, and answers it; the cluster's clock runs only while
an operation needs it.

This is how `fpdeep run --device sim` and the tests drive the runtime without a board.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fpdeep.cosim.script import OPS
from fpdeep.errors import FpdeepError

from .transport import Transport

#: Cycles a RECEIVE waits for a board's answer before the board counts as silent.
RECEIVE_LIMIT = 10_000_000


class SimulatedChain(Transport):
    """The cluster of ``boards`` boards simulated by the native host executable ``exe``."""

    def __init__(self, exe: Path, *, boards: int, log: Path | None = None) -> None:
        self.boards = boards
        self.exe = Path(exe)
        self._log = open(log, "w") if log is not None else subprocess.DEVNULL  # noqa: SIM115
        self._proc: subprocess.Popen[bytes] | None = None

    def reset(self, cycles: int) -> None:
        # the native host holds reset for ``cycles`` cycles as it starts
        self.close()
        self._proc = subprocess.Popen([str(self.exe), "--serve", str(self.boards), str(cycles)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._log)

    def _call(self, name: str, board: int, args: Sequence[int] = ()) -> list[int]:
        proc = self._proc
        if proc is None:
            raise FpdeepError("the simulated chain is not running: reset it first")
        assert proc.stdin is not None and proc.stdout is not None
        request = np.asarray([OPS[name], board, len(args), *args], dtype="<u8").tobytes()
        try:
            proc.stdin.write(request)
            proc.stdin.flush()
            head = proc.stdout.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else None
            body = proc.stdout.read(8 * n) if n else b""
        except BrokenPipeError:
            n = None
        if n is None or len(body) != 8 * n:
            status = proc.poll()
            raise FpdeepError(f"the simulated cluster ({self.exe}) stopped during {name} on "
                              f"board {board} (exit status {status})")
        return np.frombuffer(body, dtype="<u8").astype(np.uint64).tolist()

    def write_stream(self, board: int, words: Sequence[int]) -> None:
        self._call("SEND", board, words)

    def read_stream(self, board: int, limit: int) -> list[int]:
        return self._call("RECEIVE", board, (RECEIVE_LIMIT,))[:limit]

    def csr_read(self, board: int, address: int) -> int:
        return self._call("CSR_READ", board, (address,))[0]

    def csr_write(self, board: int, address: int, value: int) -> None:
        self._call("CSR_WRITE", board, (address, value))

    def idle(self, cycles: int) -> None:
        self._call("IDLE", 0, (cycles,))

    def cycle(self) -> int:
        return self._call("MARK", 0)[0]

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __del__(self) -> None:
        self.close()
        if self._log is not subprocess.DEVNULL:
            self._log.close()
