"""cocotb test of the stuck-link error through the harness fpdeep_link_pair.sv: B's reader
never takes a word, so once A has filled B's buffer no credit returns and A must raise
`stuck`, not wait for ever; B's buffer is full but never overflows."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from fpdeep_tb import tb_args
from tb_link import PacketSource
from tb_reliable import A_IN, ReceiverModel, configure, counts


@cocotb.test()
async def a_peer_that_returns_no_credit_is_reported(dut):
    args = tb_args()
    params = args["parameters"]
    width, rxd = int(params.get("W", 64)), int(params["RXD"])
    stuck_after = 600
    await configure(dut, {**args, "stuck": stuck_after})
    rng = random.Random(2)
    # B's reader never takes a word, so after RXD words no credit comes back
    packets = [[rng.getrandbits(width) for _ in range(3 * rxd)]]
    tags = [9] * len(packets[0])
    src = PacketSource(dut, A_IN, packets, rng=rng, idle=0.0, side={"tag": tags})
    received = ReceiverModel(dut, width, rxd)
    rose = None
    for cycle in range(4 * stuck_after + 2000):
        await RisingEdge(dut.clk)
        src.drive()
        await ReadOnly()
        src.observe()
        received.observe()
        if int(dut.a_flags.value) & 1:
            rose = cycle
            break
    assert rose is not None, "A never reported the stuck link"
    assert rose >= stuck_after, f"stuck after {rose} cycles, before {stuck_after} quiet ones"
    assert received.held == rxd, "B's buffer should be full: the credit was all used"
    assert counts(dut, "a")["tx_credit_stalls"] > 0
    assert int(dut.b_flags.value) == 0, "B should neither overflow nor be stuck"
