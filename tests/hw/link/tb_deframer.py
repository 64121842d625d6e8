"""cocotb test of fpdeep_link_deframer alone, fed frames that Python builds from the format in
fpdeep_link_framer's header comment with zlib's crc32: good frames in sequence are passed on
and acknowledged; a spoilt frame is counted and NAKed, not again within the hold-off; frames
past a gap are dropped;
a repeat is acknowledged again; control frames reach the framer side; a frame that breaks the
credit rule raises `overflow`."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from fpdeep_tb import reset, tb_args
from tb_reliable import frame_crc

from fpdeep.hwlib import LINK_DEFRAMER

DATA, ACK, NAK, CREDIT = range(4)


def frame(kind: int, seq: int, payload=(), *, top: int = 0, last: int = 0,
          length: int | None = None, width: int = 64) -> list[int]:
    """The words of a frame: header, payload, trailer with zlib's CRC."""
    n = len(payload) if length is None else length
    head = kind | last << 2 | seq << 8 | n << 16 | top << 32
    words = [head, *payload]
    return [*words, frame_crc(words, width)]


class Bench:
    def __init__(self, dut, rng: random.Random) -> None:
        self.dut, self.rng = dut, rng
        self.out: list[tuple[int, int, int]] = []   # (data, tag, last) passed on
        self.pulses = {"adv_ack": 0, "adv_nak": 0}
        self.peer: list[tuple[int, int, int]] = []  # (nak, seq, credit)
        self.reading = True

    async def cycle(self, word: int | None = None, last: int = 0) -> None:
        """One clock: offer ``word`` on the link (none: idle), read at random, watch."""
        await RisingEdge(self.dut.clk)
        d = self.dut
        d.s_valid.value = int(word is not None)
        if word is not None:
            d.s_data.value, d.s_last.value = word, last
        d.m_ready.value = int(self.reading and self.rng.random() < 0.7)
        await ReadOnly()
        if d.m_valid.value and d.m_ready.value:
            self.out.append((int(d.m_data.value), int(d.m_tag.value), int(d.m_last.value)))
        for name in self.pulses:
            self.pulses[name] += int(getattr(d, name).value)
        if d.peer_valid.value:
            self.peer.append((int(d.peer_nak.value), int(d.peer_seq.value),
                              int(d.peer_credit.value)))

    async def send(self, words: list[int]) -> None:
        for k, word in enumerate(words):
            while self.rng.random() < 0.2:   # the link idles at random between words
                await self.cycle()
            await self.cycle(word, int(k == len(words) - 1))

    async def settle(self, cycles: int = 40) -> None:
        for _ in range(cycles):
            await self.cycle()


def count(dut, name: str) -> int:
    return int(getattr(dut, name).value)


@cocotb.test()
async def deframer_keeps_good_frames_in_sequence(dut):
    params = tb_args()["parameters"]
    rxd = int(params["RXD"])
    rng = random.Random(3)
    for port in LINK_DEFRAMER.ports(**params):
        if port.direction == "input" and port.name not in ("clk", "rst"):
            getattr(dut, port.name).value = 0
    holdoff = 200
    dut.cfg_holdoff.value = holdoff
    await reset(dut)
    bench = Bench(dut, rng)
    await bench.settle(2)
    assert count(dut, "adv_credit") == rxd, "the first credit is the whole buffer"

    p0 = [rng.getrandbits(64) for _ in range(3)]
    await bench.send(frame(DATA, 0, p0, top=5, last=1))
    await bench.settle()
    assert bench.out == [(w, 5, int(k == 2)) for k, w in enumerate(p0)]
    assert bench.pulses == {"adv_ack": 1, "adv_nak": 0} and count(dut, "adv_seq") == 1
    assert count(dut, "adv_credit") == rxd + 3, "each word read returns a credit"

    # a flipped bit: counted, NAKed, not passed on
    p1 = [rng.getrandbits(64) for _ in range(4)]
    spoilt = frame(DATA, 1, p1, top=6)
    spoilt[2] ^= 1 << 17
    await bench.send(spoilt)
    # past the gap: dropped, but no second NAK until a frame is kept
    await bench.send(frame(DATA, 2, [1, 2], top=6))
    await bench.settle()
    assert count(dut, "crc_errors") == 1 and count(dut, "discards") == 1
    assert bench.pulses == {"adv_ack": 1, "adv_nak": 1} and len(bench.out) == 3
    # the replay spoilt too, a round trip later: asked for again
    await bench.settle(holdoff)
    await bench.send(spoilt)
    await bench.settle()
    assert count(dut, "crc_errors") == 2 and bench.pulses["adv_nak"] == 2

    # the replay is kept; a repeat of it is dropped and acknowledged again
    await bench.send(frame(DATA, 1, p1, top=6))
    await bench.send(frame(DATA, 1, p1, top=6))
    await bench.settle()
    assert bench.out[3:] == [(w, 6, 0) for w in p1]
    assert count(dut, "frames") == 2 and count(dut, "discards") == 2
    assert bench.pulses["adv_ack"] == 3 and count(dut, "adv_seq") == 2

    # control frames go to the framer side, with what they say
    await bench.send(frame(NAK, 7, top=0x12345))
    await bench.send(frame(ACK, 3, top=99))
    await bench.send(frame(CREDIT, 4, top=1 << 31))
    await bench.settle()
    assert bench.peer == [(1, 7, 0x12345), (0, 3, 99), (0, 4, 1 << 31)]

    # a frame whose length disagrees with its header, or a header-only data frame, is refused
    await bench.send(frame(DATA, 2, [4, 5, 6], length=4))
    await bench.send(frame(DATA, 2, []))
    await bench.settle()
    assert count(dut, "crc_errors") == 4 and count(dut, "frames") == 2

    # no reader: the buffer fills; a frame past the credit raises overflow and is not kept
    bench.reading = False
    await bench.settle(2)
    seq, held = 2, 0
    while held + 8 <= rxd:
        await bench.send(frame(DATA, seq, list(range(8))))
        seq, held = seq + 1, held + 8
    await bench.settle()
    assert not dut.overflow.value, "a frame within the credit raised overflow"
    await bench.send(frame(DATA, seq, [1]))
    await bench.settle()
    assert dut.overflow.value, "a frame beyond the credit was not reported"
    assert count(dut, "adv_seq") == seq, "the frame that did not fit was kept"
