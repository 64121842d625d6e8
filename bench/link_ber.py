"""Framing overhead and throughput of the reliable link (fpdeep_link_end) against the bit error
rate, measured with the unit test's harness (tests/hw/link/fpdeep_link_pair.sv) and
testbench (tb_reliable): random tensors one way from A to B at full speed, over a channel of
one 64-bit word a cycle and 20 cycles' latency each way (--latency), for two frame sizes
(--frames). The receive buffer (--rxd words) must cover a round trip of words, or credits
bound the rate.

    python bench/link_ber.py [--words N] [--seed S] [--latency C] [--rxd N] [--frames L ...]
        [--rates R ...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from fpdeep.cosim.simulator import default_build_root, hw_sources, run_cocotb

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "hw" / "link"
RATES = (0.0, 1e-5, 1e-4, 1e-3)
#: Frames of 16 and of 64 payload words.
FRAMES = (16, 64)


def measure(maxlen: int, ber: float, words: int, seed: int, work: Path, *, latency: int = 20,
            rxd: int = 512) -> dict:
    report = work / f"link_{maxlen}_{ber:g}.json"
    longest = 200
    buffers = {"W": 64, "FW": 4, "RD": 1024, "RXD": rxd}
    round_trip = 2 * latency + 2 * (maxlen + 2)
    run_cocotb(
        toplevel="fpdeep_link_pair",
        sources=[*hw_sources("fpdeep_link_end", "fpdeep_link_channel"),
                 TESTS / "fpdeep_link_pair.sv"],
        parameters={**buffers, "MAXLEN": maxlen},
        test_module="tb_reliable",
        build_root=default_build_root(),
        test_dir=work / f"run_{maxlen}_{ber:g}",
        tb_args={"parameters": {**buffers, "MAXLEN": maxlen}, "seed": seed, "ber": ber,
                 "one_way": True, "idle": 0.0, "stall": 0.0, "latency": latency,
                 "timeout": 2 * round_trip + 100, "refresh": 1000, "holdoff": round_trip,
                 "stuck": 1 << 20,
                 "tensors": max(1, 2 * words // longest), "longest": longest,
                 "report": str(report)},
        test_paths=[TESTS, TESTS.parent],
    )
    return json.loads(report.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=3000, help="payload words per run")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--latency", type=int, default=20, help="cycles each way")
    parser.add_argument("--rxd", type=int, default=512, help="receive buffer words")
    parser.add_argument("--frames", type=int, nargs="+", default=FRAMES,
                        help="payload words a frame")
    parser.add_argument("--rates", type=float, nargs="+", default=RATES, help="bit error rates")
    args = parser.parse_args()
    print(f"{'frame':>5} {'BER':>7} {'frames':>6} {'CRC err':>7} {'replays':>7} "
          f"{'timeouts':>8} {'payload/link words':>18} {'words/cycle':>11} {'vs BER 0':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for maxlen in args.frames:
            clean = None
            for ber in args.rates:
                r = measure(maxlen, ber, args.words, args.seed, Path(tmp),
                            latency=args.latency, rxd=args.rxd)
                rate = r["payload_words"] / r["cycles"]
                clean = clean or rate
                print(f"{maxlen:>5} {ber:>7.0e} {r['a']['tx_frames']:>6} "
                      f"{r['b']['rx_crc_errors']:>7} {r['a']['tx_replays']:>7} "
                      f"{r['a']['tx_timeouts']:>8} "
                      f"{r['payload_words'] / r['link_words']:>18.3f} {rate:>11.3f} "
                      f"{rate / clean:>8.3f}")
    alone = ", ".join(f"{m}/{m + 2} = {m / (m + 2):.3f}" for m in args.frames)
    print(f"framing alone, full frames: {alone} payload words per link word")


if __name__ == "__main__":
    main()
