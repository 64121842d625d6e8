"""How the host runtime reaches a chain of boards: the `Transport` interface, and the devices
of real boards behind it.

A transport does four things to board ``b`` — write one packet on its host stream (tlast on
the last beat), read its next answer up to tlast, read and write a CSR — plus the passing of
time, counted in the design's clock cycles. `fpdeep.runtime.execute` carries a host script
out through nothing else.

Real boards are reached one device per board, in chain order:

- a PCIe card with the XDMA bridge (Xilinx PG195, in AXI4-Stream mode with one H2C and one C2H
  channel and the AXI4-Lite master, as the shell configures it) through the character devices
  of Xilinx's XDMA driver (dma_ip_drivers): ``PATH_h2c_0`` (a write() is one packet),
  ``PATH_c2h_0`` (a read() returns at tlast) and ``PATH_user`` (the AXI4-Lite window, 32-bit
  reads and writes at the register's byte offset); ``--device /dev/xdma0`` names all three;
- the ZCU102's programmable logic from Linux on its own PS: the CSR and the AXI DMA (PG021,
  simple register mode, as the shell configures it) at the fixed bases of the PS's AXI masters,
  mapped through /dev/mem, and the packets in a physically contiguous buffer of the u-dma-buf
  driver; ``--device /dev/udmabuf0`` names the buffer.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from fpdeep.errors import FpdeepError
from fpdeep.hwlib.csr import ADDRESS_BITS, register_map

#: Bytes per host stream beat and per CSR register.
BEAT_BYTES = 8
CSR_BYTES = 4


class Transport(ABC):
    """A chain of ``boards`` boards as a host reaches them."""

    boards: int

    @abstractmethod
    def reset(self, cycles: int) -> None:
        """Bring every board to its state after reset (a simulation holds reset ``cycles``
        cycles; a real board gets a soft reset through its CSR)."""

    @abstractmethod
    def write_stream(self, board: int, words: Sequence[int]) -> None:
        """Send ``words`` (64-bit beats) as one packet on board ``board``'s host stream."""

    @abstractmethod
    def read_stream(self, board: int, limit: int) -> list[int]:
        """Board ``board``'s next answer on its host stream, up to tlast (at most ``limit``
        beats)."""

    @abstractmethod
    def csr_read(self, board: int, address: int) -> int:
        """The 32-bit CSR at byte ``address`` of board ``board``."""

    @abstractmethod
    def csr_write(self, board: int, address: int, value: int) -> None:
        """Write the 32-bit CSR at byte ``address`` of board ``board``."""

    @abstractmethod
    def idle(self, cycles: int) -> None:
        """Let ``cycles`` clock cycles pass."""

    @abstractmethod
    def cycle(self) -> int:
        """Clock cycles since the transport began (a real board: its wall time at the design's
        clock)."""

    def close(self) -> None:  # noqa: B027 - a transport without resources has nothing to do
        """Release the devices (or stop the simulation)."""

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BoardDevice(ABC):
    """One real board's host stream pair and CSR window."""

    path: str

    @abstractmethod
    def write_stream(self, words: Sequence[int]) -> None: ...

    @abstractmethod
    def read_stream(self, limit: int) -> list[int]: ...

    @abstractmethod
    def csr_read(self, address: int) -> int: ...

    @abstractmethod
    def csr_write(self, address: int, value: int) -> None: ...

    def close(self) -> None:  # noqa: B027 - a device without files has nothing to do
        """Close the device's files."""


def _beats(words: Sequence[int]) -> bytes:
    return b"".join(int(w).to_bytes(BEAT_BYTES, "little") for w in words)


def _words(data: bytes) -> list[int]:
    return [int.from_bytes(data[k:k + BEAT_BYTES], "little")
            for k in range(0, len(data) - len(data) % BEAT_BYTES, BEAT_BYTES)]


def _check_csr(address: int, value: int | None = None) -> None:
    if not 0 <= address < 1 << ADDRESS_BITS or address % CSR_BYTES:
        raise FpdeepError(f"CSR address {address:#x} is not a register of the board's "
                          f"{1 << ADDRESS_BITS}-byte window")
    if value is not None and not 0 <= value < 1 << 32:
        raise FpdeepError(f"CSR value {value:#x} does not fit 32 bits")


class XdmaBoard(BoardDevice):
    """A PCIe card through the XDMA driver's character devices ``PATH_h2c_0``,
    ``PATH_c2h_0`` and ``PATH_user``."""

    SUFFIXES = ("_h2c_0", "_c2h_0", "_user")

    def __init__(self, path: str) -> None:
        self.path = path
        missing = [path + s for s in self.SUFFIXES if not os.path.exists(path + s)]
        if missing:
            raise FpdeepError(f"--device {path!r}: {', '.join(missing)} do(es) not exist; an "
                              f"XDMA card is named by the prefix of its driver's character "
                              f"devices, e.g. /dev/xdma0 for /dev/xdma0_h2c_0, /dev/xdma0_c2h_0 "
                              f"and /dev/xdma0_user (is the xdma driver loaded?)")
        self._fds: list[int] = []
        try:
            self._h2c = self._open("_h2c_0", os.O_WRONLY)
            self._c2h = self._open("_c2h_0", os.O_RDONLY)
            self._user = self._open("_user", os.O_RDWR)
        except OSError as exc:
            self.close()
            raise FpdeepError(f"--device {path!r}: cannot open {exc.filename}: "
                              f"{exc.strerror}") from exc

    def _open(self, suffix: str, flags: int) -> int:
        fd = os.open(self.path + suffix, flags)
        self._fds.append(fd)
        return fd

    def write_stream(self, words: Sequence[int]) -> None:
        data = _beats(words)
        # the driver sends one write() as one packet and ends it with tlast
        written = os.write(self._h2c, data)
        if written != len(data):
            raise FpdeepError(f"{self.path}_h2c_0 took {written} of {len(data)} bytes")

    def read_stream(self, limit: int) -> list[int]:
        # a read() of the C2H channel returns at the packet's tlast
        return _words(os.read(self._c2h, limit * BEAT_BYTES))

    def csr_read(self, address: int) -> int:
        _check_csr(address)
        return struct.unpack("<I", os.pread(self._user, CSR_BYTES, address))[0]

    def csr_write(self, address: int, value: int) -> None:
        _check_csr(address, value)
        os.pwrite(self._user, struct.pack("<I", value), address)

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()


class ZynqBoard(BoardDevice):
    """The ZCU102's programmable logic from Linux on its PS: the board's CSR behind
    M_AXI_HPM0_LPD, the shell's AXI DMA registers behind M_AXI_HPM0_FPD (both mapped through
    ``mem``), packets in the u-dma-buf buffer ``path``."""

    #: The PS's AXI masters' windows (Xilinx UG1085, "System Addresses": M_AXI_HPM0_LPD at
    #: 0x8000_0000, M_AXI_HPM0_FPD at 0xA000_0000); the shell wires each master straight to
    #: one slave, which decodes the low address bits.
    CSR_BASE = 0x8000_0000
    DMA_BASE = 0xA000_0000
    #: AXI DMA registers in simple (register) mode (Xilinx PG021, "Register Space").
    MM2S_DMACR, MM2S_DMASR, MM2S_SA, MM2S_SA_MSB, MM2S_LENGTH = 0x00, 0x04, 0x18, 0x1C, 0x28
    S2MM_DMACR, S2MM_DMASR, S2MM_DA, S2MM_DA_MSB, S2MM_LENGTH = 0x30, 0x34, 0x48, 0x4C, 0x58
    #: DMACR.RS and IOC_IrqEn; DMASR.IOC_Irq (write 1 to clear), DMAIntErr|SlvErr|DecErr
    RUN, DONE, ERRORS = 0x1001, 0x1000, 0x70
    #: The DMA's register space and the most bytes one transfer moves (c_sg_length_width 26).
    DMA_SPAN, MAX_TRANSFER = 1 << 10, (1 << 26) - 1
    #: Seconds a DMA transfer may take before the board is taken to be stuck.
    TIMEOUT_S = 10.0

    def __init__(self, path: str, *, mem: str = "/dev/mem") -> None:
        self.path = path
        name = Path(path).name
        sysfs = Path("/sys/class/u-dma-buf") / name
        if not os.path.exists(path) or not (sysfs / "phys_addr").is_file():
            raise FpdeepError(f"--device {path!r}: not a u-dma-buf buffer (no {path} or no "
                              f"{sysfs / 'phys_addr'}); on the ZCU102 load the u-dma-buf "
                              "driver (e.g. insmod u-dma-buf.ko udmabuf0=1048576) and name "
                              "its device, e.g. /dev/udmabuf0")
        self._phys = int((sysfs / "phys_addr").read_text().strip(), 0)
        self._size = int((sysfs / "size").read_text().strip(), 0)
        try:
            self._buf_fd = os.open(path, os.O_RDWR | os.O_SYNC)
            self._mem_fd = os.open(mem, os.O_RDWR | os.O_SYNC)
        except OSError as exc:
            raise FpdeepError(f"--device {path!r}: cannot open {exc.filename}: {exc.strerror} "
                              "(the runtime needs root on the board's PS for /dev/mem)") from exc
        self._buf = mmap.mmap(self._buf_fd, self._size)
        self._csr = mmap.mmap(self._mem_fd, 1 << ADDRESS_BITS, offset=self.CSR_BASE)
        self._dma = mmap.mmap(self._mem_fd, self.DMA_SPAN, offset=self.DMA_BASE)
        # the packet goes out from the first half of the buffer, the answer comes into the
        # second
        self._half = self._size // 2 // BEAT_BYTES * BEAT_BYTES
        for cr in (self.MM2S_DMACR, self.S2MM_DMACR):
            self._reg(cr, self.RUN)

    def _reg(self, offset: int, value: int | None = None) -> int:
        if value is not None:
            struct.pack_into("<I", self._dma, offset, value)
            return value
        return struct.unpack_from("<I", self._dma, offset)[0]

    def _transfer(self, status: int, what: str) -> None:
        deadline = time.monotonic() + self.TIMEOUT_S
        while True:
            sr = self._reg(status)
            if sr & self.ERRORS:
                raise FpdeepError(f"{self.path}: the AXI DMA reports error bits {sr:#x} on "
                                  f"{what}")
            if sr & self.DONE:
                self._reg(status, self.DONE)
                return
            if time.monotonic() > deadline:
                raise FpdeepError(f"{self.path}: {what} did not finish within "
                                  f"{self.TIMEOUT_S:g} s")
            time.sleep(0)

    def write_stream(self, words: Sequence[int]) -> None:
        data = _beats(words)
        if len(data) > min(self._half, self.MAX_TRANSFER):
            raise FpdeepError(f"{self.path}: a packet of {len(data)} bytes is more than the "
                              f"buffer's half ({self._half} bytes) holds; load u-dma-buf with "
                              "a larger buffer")
        self._buf[:len(data)] = data
        self._reg(self.MM2S_SA, self._phys & 0xFFFF_FFFF)
        self._reg(self.MM2S_SA_MSB, self._phys >> 32)
        self._reg(self.MM2S_LENGTH, len(data))  # writing the length starts the transfer
        self._transfer(self.MM2S_DMASR, "a packet to the board")

    def read_stream(self, limit: int) -> list[int]:
        size = min(limit * BEAT_BYTES, self._size - self._half, self.MAX_TRANSFER)
        target = self._phys + self._half
        self._reg(self.S2MM_DA, target & 0xFFFF_FFFF)
        self._reg(self.S2MM_DA_MSB, target >> 32)
        self._reg(self.S2MM_LENGTH, size)
        self._transfer(self.S2MM_DMASR, "an answer from the board")
        received = self._reg(self.S2MM_LENGTH)  # the bytes up to tlast
        return _words(bytes(self._buf[self._half:self._half + received]))

    def csr_read(self, address: int) -> int:
        _check_csr(address)
        return struct.unpack_from("<I", self._csr, address)[0]

    def csr_write(self, address: int, value: int) -> None:
        _check_csr(address, value)
        struct.pack_into("<I", self._csr, address, value)

    def close(self) -> None:
        for m in (self._buf, self._csr, self._dma):
            m.close()
        os.close(self._buf_fd)
        os.close(self._mem_fd)


#: The device class of each host bridge a board's shell has (`fpdeep.planning.shell.HOSTS`).
DEVICES: dict[str, type[BoardDevice]] = {"xdma": XdmaBoard, "zynq_ps": ZynqBoard}


class DeviceChain(Transport):
    """Real boards, one device each in chain order, running at ``clock_mhz``; time is the
    host's wall clock counted in the design's cycles."""

    def __init__(self, devices: Sequence[BoardDevice], *, clock_mhz: float) -> None:
        self.devices = list(devices)
        self.boards = len(self.devices)
        self.clock_mhz = clock_mhz
        self._began = time.monotonic_ns()

    def reset(self, cycles: int) -> None:
        # CONTROL.soft_reset resets each board's datapath (docs/csr.md); its address and
        # encoding do not depend on the board's counters
        rmap = register_map(counters=1)
        for device in self.devices:
            device.csr_write(rmap.addr("CONTROL"), rmap.encode("CONTROL", soft_reset=1))
        self.idle(cycles)

    def write_stream(self, board: int, words: Sequence[int]) -> None:
        self.devices[board].write_stream(words)

    def read_stream(self, board: int, limit: int) -> list[int]:
        return self.devices[board].read_stream(limit)

    def csr_read(self, board: int, address: int) -> int:
        return self.devices[board].csr_read(address)

    def csr_write(self, board: int, address: int, value: int) -> None:
        self.devices[board].csr_write(address, value)

    def idle(self, cycles: int) -> None:
        time.sleep(cycles / (self.clock_mhz * 1e6))

    def cycle(self) -> int:
        return int((time.monotonic_ns() - self._began) * self.clock_mhz / 1000)

    def close(self) -> None:
        for device in self.devices:
            device.close()


def open_chain(paths: Sequence[str], hosts: Sequence[str | None], *,
               clock_mhz: float) -> DeviceChain:
    """The chain of devices ``paths``, board ``i`` through its shell's host bridge
    ``hosts[i]`` (None: the board file has no shell); FpdeepError naming what does not fit."""
    if len(paths) != len(hosts):
        raise FpdeepError(f"--device names {len(paths)} device(s); the build has {len(hosts)} "
                          f"board(s): give one --device per board, in chain order")
    for b, host in enumerate(hosts):
        if host not in DEVICES:
            raise FpdeepError(f"board {b} has no host bridge fpdeep can drive (its board file "
                              f"has no [shell] host); hosts known: {', '.join(DEVICES)}")
    devices: list[BoardDevice] = []
    try:
        for path, host in zip(paths, hosts, strict=True):
            devices.append(DEVICES[host](path))
    except BaseException:
        for device in devices:
            device.close()
        raise
    return DeviceChain(devices, clock_mhz=clock_mhz)
