"""cocotb test of fpdeep_link_keep: the keep flags of a link port beat, rebuilt from its link
words' last flags, are the ones fpdeep_link_pack gives the beat: the bytes of the words up to
the first word with its last flag set, or of every word."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import Timer
from fpdeep_tb import tb_args


def packed_keep(words: int, ww: int, tw: int) -> int:
    """fpdeep_link_pack's keep for a beat of ``words`` words: every byte below their bits."""
    return sum(1 << k for k in range(tw // 8) if k * 8 < words * ww)


@cocotb.test()
async def keep_follows_the_last_flag(dut):
    params = tb_args()["parameters"]
    ww, tw, last = int(params["WW"]), int(params["TW"]), int(params["LAST"])
    n = tw // ww
    rng = random.Random(tw)
    for words in [*range(1, n + 1)] * 8:
        beat = 0
        for j in range(words):  # random data, the last flag only on the final word
            word = rng.getrandbits(ww) & ~(1 << last)
            if j == words - 1 and (words < n or rng.random() < 0.5):
                word |= 1 << last
            beat |= word << (j * ww)
        dut.data.value = beat
        await Timer(1, unit="ns")
        assert int(dut.keep.value) == packed_keep(words, ww, tw), f"{words} words"
