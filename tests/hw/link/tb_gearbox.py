"""A Python model of the link port's beat format, written from the gearboxes' contract (not
from their RTL): word j of a beat in bits [j*WW +: WW], as many words as fit, keep flags on
the bytes the beat's words occupy, last on a packet's final beat. tb_pack and tb_unpack
check fpdeep_link_pack and fpdeep_link_unpack against it."""

from __future__ import annotations

import random

from fpdeep_tb import tb_args


def widths() -> tuple[int, int]:
    params = tb_args()["parameters"]
    return int(params["WW"]), int(params["TW"])


def random_packets(rng: random.Random, count: int, ww: int, per_beat: int) -> list[list[int]]:
    """``count`` packets of 1 to 3 beats' worth of random ``ww``-bit words."""
    return [[rng.getrandbits(ww) for _ in range(rng.randint(1, 3 * per_beat))]
            for _ in range(count)]


def beats_of(packets: list[list[int]], ww: int, tw: int) -> list[tuple[int, int, int]]:
    """(data, keep, last) of every beat the packets become."""
    per_beat = tw // ww
    out = []
    for packet in packets:
        for start in range(0, len(packet), per_beat):
            words = packet[start:start + per_beat]
            data = sum(w << (j * ww) for j, w in enumerate(words))
            keep = (1 << -(-len(words) * ww // 8)) - 1
            out.append((data, keep, int(start + per_beat >= len(packet))))
    return out


