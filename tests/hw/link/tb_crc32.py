"""cocotb test of fpdeep_crc32 against zlib's crc32: random words, one after another through
the register (started at all ones), give zlib's CRC of their little-endian bytes, inverted."""

from __future__ import annotations

import random
import zlib

import cocotb
from cocotb.triggers import Timer
from fpdeep_tb import tb_args


@cocotb.test()
async def crc32_matches_zlib(dut):
    width = int(tb_args()["parameters"]["W"])
    rng = random.Random(width)
    for length in (1, 2, 5, 17):
        words = [0, (1 << width) - 1] if length == 2 else [rng.getrandbits(width)
                                                           for _ in range(length)]
        crc = 0xFFFF_FFFF
        for word in words:
            dut.crc_in.value, dut.data.value = crc, word
            await Timer(1, unit="ns")
            crc = int(dut.crc_out.value)
        data = b"".join(w.to_bytes(width // 8, "little") for w in words)
        assert crc ^ 0xFFFF_FFFF == zlib.crc32(data), f"{length} words: {crc:#x}"
