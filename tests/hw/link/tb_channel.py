"""cocotb test of fpdeep_link_channel alone: frames of random words go through, and Python,
comparing what leaves with what went in, finds bit errors at the configured rate per bit
(one bit in a spoilt word), whole frames dropped at the configured rate per frame, the model's
own counts of both, and the same errors again after a reset with the same seed."""

from __future__ import annotations

import math
import random

import cocotb
from fpdeep_tb import reset, tb_args
from stream_models import StreamSink, run_streams
from tb_link import PacketSource

from fpdeep.hwlib import LINK_CHANNEL

FRAME = 10


async def run(dut, frames: list[list[int]], rng: random.Random) -> list[list[int]]:
    """The frames that come out, each as its words (unsigned)."""
    await reset(dut)
    src = PacketSource(dut, LINK_CHANNEL.stream("s"), frames, rng=rng, idle=0.1)
    snk = StreamSink(dut, LINK_CHANNEL.stream("m"), rng=rng, stall=0.1)
    quiet = [0]

    def drained() -> bool:
        quiet[0] = quiet[0] + 1 if src.done and not dut.m_valid.value else 0
        return quiet[0] > 40

    words = sum(map(len, frames))
    await run_streams(dut, [src, snk], max_cycles=3 * words + 1000, until=drained)
    out, frame = [], []
    for word, last in zip(snk.beats, snk.lasts, strict=True):
        frame.append(word % (1 << 64))
        if last:
            out.append(frame)
            frame = []
    return out


@cocotb.test()
async def channel_spoils_and_drops_at_its_rates(dut):
    args = tb_args()
    ber, drop = float(args["ber"]), float(args["drop"])
    dut.cfg_latency.value, dut.cfg_num.value, dut.cfg_den.value = 5, 1, 1
    dut.cfg_seed.value = int(args["seed"])
    dut.cfg_ber.value, dut.cfg_drop.value = round(ber * 2**32), round(drop * 2**32)
    dut.s_valid.value = 0
    dut.m_ready.value = 0
    rng = random.Random(int(args["seed"]))
    sent = [[rng.getrandbits(64) for _ in range(FRAME)] for _ in range(int(args["frames"]))]
    got = await run(dut, sent, rng)

    # match each frame that came out with the first one not yet matched that it resembles
    flips, spoilt_frames, at = [], 0, 0
    for frame in got:
        while sum(bin(a ^ b).count("1") for a, b in zip(frame, sent[at], strict=True)) > FRAME:
            at += 1
        diffs = [bin(a ^ b).count("1") for a, b in zip(frame, sent[at], strict=True)]
        flips += [d for d in diffs if d]
        spoilt_frames += any(diffs)
        at += 1
    dropped = len(sent) - len(got)
    words = len(got) * FRAME
    dut._log.info("%d frames: %d dropped, %d spoilt words of %d", len(sent), dropped,
                  len(flips), words)
    assert all(d == 1 for d in flips), "a spoilt word has more than one flipped bit"
    expect = words * 64 * ber
    assert abs(len(flips) - expect) <= 5 * math.sqrt(expect), f"{len(flips)} vs {expect:.0f}"
    expect = len(sent) * drop
    assert abs(dropped - expect) <= 5 * math.sqrt(expect), f"{dropped} vs {expect:.0f}"
    assert int(dut.corrupted.value) == spoilt_frames and int(dut.dropped.value) == dropped

    # the same seed gives the same errors on the same words
    again = await run(dut, sent, rng)
    assert again == got, "a reset with the same seed did not repeat the errors"
