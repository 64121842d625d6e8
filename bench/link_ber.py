"""Framing overhead and throughput of the reliable link (fpdeep_link_end) against the bit error
rate, measured with the unit test's harness (tests/hw/link/fpdeep_link_pair.sv) and
testbench (tb_reliable): random tensors one way from A to B at full speed, over a channel of
one 64-bit word a cycle and 20 cycles' latency each way, for two frame sizes.

    python bench/link_ber.py [--words N] [--seed S]
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
#: Frames of 16 and of 64 payload words; buffers that cover the round trip.
FRAMES = (16, 64)
BUFFERS = {"W": 64, "FW": 4, "RD": 1024, "RXD": 512}


def measure(maxlen: int, ber: float, words: int, seed: int, work: Path) -> dict:
    report = work / f"link_{maxlen}_{ber:g}.json"
    longest = 200
    run_cocotb(
        toplevel="fpdeep_link_pair",
        sources=[*hw_sources("fpdeep_link_end", "fpdeep_link_channel"),
                 TESTS / "fpdeep_link_pair.sv"],
        parameters={**BUFFERS, "MAXLEN": maxlen},
        test_module="tb_reliable",
        build_root=default_build_root(),
        test_dir=work / f"run_{maxlen}_{ber:g}",
        tb_args={"parameters": {**BUFFERS, "MAXLEN": maxlen}, "seed": seed, "ber": ber,
                 "one_way": True, "idle": 0.0, "stall": 0.0, "latency": 20,
                 "timeout": 300, "refresh": 1000,
                 "holdoff": 2 * 20 + 2 * (maxlen + 2), "stuck": 1 << 20,
                 "tensors": max(1, 2 * words // longest), "longest": longest,
                 "report": str(report)},
        test_paths=[TESTS, TESTS.parent],
    )
    return json.loads(report.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=3000, help="payload words per run")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    print(f"{'frame':>5} {'BER':>7} {'frames':>6} {'CRC err':>7} {'replays':>7} "
          f"{'timeouts':>8} {'payload/link words':>18} {'words/cycle':>11} {'vs BER 0':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for maxlen in FRAMES:
            clean = None
            for ber in RATES:
                r = measure(maxlen, ber, args.words, args.seed, Path(tmp))
                rate = r["payload_words"] / r["cycles"]
                clean = clean or rate
                print(f"{maxlen:>5} {ber:>7.0e} {r['a']['tx_frames']:>6} "
                      f"{r['b']['rx_crc_errors']:>7} {r['a']['tx_replays']:>7} "
                      f"{r['a']['tx_timeouts']:>8} "
                      f"{r['payload_words'] / r['link_words']:>18.3f} {rate:>11.3f} "
                      f"{rate / clean:>8.3f}")
    alone = ", ".join(f"{m}/{m + 2} = {m / (m + 2):.3f}" for m in FRAMES)
    print(f"framing alone, full frames: {alone} payload words per link word")


if __name__ == "__main__":
    main()
