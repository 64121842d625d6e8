"""cocotb test of the reliable link (fpdeep_link_end) through the harness fpdeep_link_pair.sv:
random tensors both ways over faulty channels arrive bit-exact and in order. The frames on
the wire are read by a Python model of the frame format written from the framer's header
comment, with zlib's crc32 as the independent CRC: every frame the framer sends carries the
right CRC, the frames the receiver finds spoilt are the ones the channel model spoilt, and
the payload the receiver holds (its good in-sequence frames less what its reader took)
never exceeds its buffer."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path

import cocotb
from fpdeep_tb import reset, signed, tb_args
from stream_models import StreamSink, run_streams
from tb_link import PacketSource

from fpdeep.hwlib.signature import sink, source

TAG = (("tag", "TAGW"),)
A_IN, B_IN = sink("a_s", "W", side=TAG), sink("b_s", "W", side=TAG)
A_OUT, B_OUT = source("a_m", "W", side=TAG), source("b_m", "W", side=TAG)
DATA, ACK, NAK, CREDIT = range(4)
COUNTS = ("tx_frames", "tx_replays", "tx_timeouts", "tx_credit_stalls", "rx_frames",
          "rx_crc_errors", "rx_discards")


def frame_crc(words: list[int], width: int) -> int:
    """zlib's CRC-32 of the words' bytes, each word little-endian."""
    return zlib.crc32(b"".join(w.to_bytes(width // 8, "little") for w in words))


def header(word: int) -> dict[str, int]:
    return {"type": word & 3, "last": (word >> 2) & 1, "seq": (word >> 8) & 0xFF,
            "len": (word >> 16) & 0xFFFF, "top": word >> 32}


class FrameWatch:
    """Splits the words on a link stream into frames and checks them against the format."""

    def __init__(self, dut, prefix: str, width: int, *, has_ready: bool = True) -> None:
        self.data = getattr(dut, f"{prefix}_data")
        self.last = getattr(dut, f"{prefix}_last")
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready") if has_ready else None
        self.width = width
        self.words: list[int] = []
        self.total = 0   # words that crossed, of every frame
        self.good: list[dict[str, int]] = []   # headers of good frames, with "payload"
        self.bad = 0
        self.done = True

    def drive(self) -> None:
        pass

    def observe(self) -> None:
        if not self.valid.value or (self.ready is not None and not self.ready.value):
            return
        self.words.append(int(self.data.value))
        self.total += 1
        if not self.last.value:
            return
        *body, trailer = self.words
        self.words = []
        if body and trailer == frame_crc(body, self.width):
            h = header(body[0])
            h["payload"] = len(body) - 1
            self.good.append(h)
            self.on_good(h)
        else:
            self.bad += 1

    def on_good(self, h: dict[str, int]) -> None:
        pass


class ReceiverModel(FrameWatch):
    """What B's buffer holds by the rule of the protocol: every good data frame with the
    next sequence number is kept; the reader takes words out."""

    def __init__(self, dut, width: int, limit: int) -> None:
        super().__init__(dut, "ab_rx", width, has_ready=False)
        self.dut, self.limit = dut, limit
        self.expected = 0
        self.held = self.most = 0

    def observe(self) -> None:
        super().observe()
        if self.dut.b_m_valid.value and self.dut.b_m_ready.value:
            self.held -= 1
        assert self.held <= self.limit, f"B holds {self.held} words, its buffer {self.limit}"
        self.most = max(self.most, self.held)

    def on_good(self, h: dict[str, int]) -> None:
        if h["type"] == DATA and h["seq"] == self.expected:
            self.expected = (self.expected + 1) & 0xFF
            self.held += h["payload"]


def tensors(rng: random.Random, count: int, width: int, longest: int):
    """``count`` tensors of random words, and the tag of each word."""
    packets = [[rng.getrandbits(width) for _ in range(rng.randint(1, longest))]
               for _ in range(count)]
    tags = [t for k, p in enumerate(packets) for t in [(k * 37 + 5) & 0xFFFF] * len(p)]
    return packets, tags


def counts(dut, end: str) -> dict[str, int]:
    value = int(getattr(dut, f"{end}_counts").value)
    return {name: (value >> (32 * k)) & 0xFFFF_FFFF for k, name in enumerate(COUNTS)}


def faults(dut, channel: str) -> dict[str, int]:
    value = int(getattr(dut, f"{channel}_faults").value)
    return {"corrupted": value & 0xFFFF_FFFF, "dropped": value >> 32}


async def configure(dut, args: dict) -> None:
    dut.cfg_latency.value = int(args.get("latency", 20))
    dut.cfg_num.value, dut.cfg_den.value = int(args.get("num", 1)), int(args.get("den", 1))
    dut.cfg_seed.value = int(args.get("seed", 1))
    dut.cfg_ber.value = round(float(args.get("ber", 0.0)) * 2**32)
    dut.cfg_drop.value = round(float(args.get("drop", 0.0)) * 2**32)
    dut.cfg_timeout.value = int(args.get("timeout", 200))
    dut.cfg_stuck.value = int(args.get("stuck", 5000))
    dut.cfg_refresh.value = int(args.get("refresh", 400))
    dut.cfg_holdoff.value = int(args.get("holdoff", 100))
    dut.cfg_maxlen.value = int(args.get("maxlen", 0))
    for s in ("a_s", "b_s"):
        getattr(dut, f"{s}_valid").value = 0
    for m in ("a_m", "b_m"):
        getattr(dut, f"{m}_ready").value = 0
    await reset(dut)


@cocotb.test()
async def tensors_cross_a_faulty_link_exactly(dut):
    args = tb_args()
    params = args["parameters"]
    width, rxd = int(params.get("W", 64)), int(params["RXD"])
    rng = random.Random(int(args.get("seed", 1)))
    await configure(dut, args)
    count, longest = int(args.get("tensors", 12)), int(args.get("longest", 40))
    stall, idle = float(args.get("stall", 0.2)), float(args.get("idle", 0.2))
    ab, ab_tags = tensors(rng, count, width, longest)
    # one way: B sends nothing, its link carries only acknowledgements and credits
    ba, ba_tags = tensors(rng, 0 if args.get("one_way") else count, width, longest)
    sources = [PacketSource(dut, A_IN, ab, rng=rng, idle=idle, side={"tag": ab_tags}),
               PacketSource(dut, B_IN, ba, rng=rng, idle=idle, side={"tag": ba_tags})]
    sinks = [StreamSink(dut, B_OUT, rng=rng, stall=stall, expect=len(ab_tags)),
             StreamSink(dut, A_OUT, rng=rng, stall=stall, expect=len(ba_tags))]
    sent = FrameWatch(dut, "ab_tx", width)
    received = ReceiverModel(dut, width, rxd)
    words = len(ab_tags) + len(ba_tags)
    cycles = await run_streams(dut, [*sources, *sinks, sent, received],
                               max_cycles=400 * words + 20000)

    for src, snk, tags in ((sources[0], sinks[0], ab_tags), (sources[1], sinks[1], ba_tags)):
        assert snk.beats == [signed(w, width) for w in src.beats], "payload lost or changed"
        assert snk.sides["tag"] == tags, "a word arrived with another tensor's tag"
        assert {i for i, v in enumerate(snk.lasts) if v} == src.ends, "tensor ends moved"
    a, b = counts(dut, "a"), counts(dut, "b")
    fault = faults(dut, "ab")
    dut._log.info("cycles %d, A %s, B %s, channel A->B %s, channel B->A %s, B held at most %d",
                  cycles, a, b, fault, faults(dut, "ba"), received.most)
    if "report" in args:   # for bench/link_ber.py
        Path(args["report"]).write_text(json.dumps({
            "cycles": cycles, "payload_words": len(ab_tags), "link_words": sent.total,
            "a": a, "b": b, "ab": fault, "ba": faults(dut, "ba")}))
    # the framer's CRCs are zlib's, and the receiver sees what the channel did
    assert sent.bad == 0, f"{sent.bad} frames left the framer with a wrong CRC"
    # frames as long as the host allows (cfg_maxlen, 0: MAXLEN)
    longest = int(args.get("maxlen", 0)) or int(params["MAXLEN"])
    assert all(h["len"] == h["payload"] <= longest for h in sent.good)
    assert b["rx_crc_errors"] == received.bad == fault["corrupted"]
    assert a["rx_crc_errors"] == faults(dut, "ba")["corrupted"]
    data_frames = sum(h["type"] == DATA for h in sent.good)
    assert a["tx_frames"] == data_frames
    # every frame is kept once, however often it was sent
    assert b["rx_frames"] == a["tx_frames"] - a["tx_replays"]
    assert b["rx_frames"] % 256 == received.expected
    assert int(dut.a_flags.value) == 0 and int(dut.b_flags.value) == 0, "stuck or overflow"
    if float(args.get("ber", 0)) > 0:
        assert b["rx_crc_errors"] > 0 and a["tx_replays"] > 0, "no error was injected"
    else:
        assert b["rx_crc_errors"] == 0
    if float(args.get("drop", 0)) > 0:
        assert fault["dropped"] > 0 and a["tx_timeouts"] > 0, "the timeout path did not run"
    if float(args.get("ber", 0)) == 0 and float(args.get("drop", 0)) == 0:
        assert a["tx_replays"] == b["tx_replays"] == 0
        assert a["tx_frames"] == sum(-(-len(p) // longest) for p in ab)
    if stall >= 0.5:
        assert a["tx_credit_stalls"] > 0 and received.most > 0
