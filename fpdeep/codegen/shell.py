"""The vendor shell around one board top, as plain data for templates/shell.sv.j2, the IP
script and the XDC: which Xilinx IP cores it instantiates (each with the configuration its
`create_ip` script sets), the wires between them and the board top, and its pins.

The shell has a clocking wizard (PG065) making the plan's clock from the board's reference
clock, a reset synchroniser (hw/shell), one Aurora 64B/66B core (PG074) per chain neighbour
behind the board's link ports (an asynchronous AXI4-Stream FIFO, PG085, for the clock crossing,
and width converters where the link ports are wider than Aurora's user interface), and the host
bridge: XDMA (PG195) on PCIe cards, the Zynq UltraScale+ PS (PG201) with an AXI DMA (PG021) on
MPSoC boards. Every value comes from the design, the plan or the checked board file; no name
from the model reaches these files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fpdeep.codegen.board import top_ports
from fpdeep.codegen.ports import SIDES
from fpdeep.design.lower import BoardDesign, Design
from fpdeep.errors import FpdeepError
from fpdeep.hwlib.library import CSR, RESET_SYNC
from fpdeep.planning.boards import Board
from fpdeep.planning.shell import BoardShell

#: The shell's top module of board ``i``.
SHELL_PREFIX = "fpdeep_shell_"
#: Aurora's init clock (and the XDMA-free boards' free-running clock), a second MMCM output.
INIT_CLOCK_MHZ = 100.0
#: Words the asynchronous FIFO behind each Aurora receiver holds: more than the link's credits.
LINK_FIFO_DEPTH = 512
HOST_FIFO_DEPTH = 64
#: Width of the host bridges' AXI4-Lite address; the board's CSR slave takes the low bits.
BRIDGE_ADDRESS_BITS = 32
#: The AXI DMA's register space (PG021: 10 address bits).
DMA_LITE_ADDRESS_BITS = 10
#: Address bits of the PS's AXI masters (PG201) and of the PS's HP slave ports.
PS_MASTER_ADDRESS_BITS = 40
PS_SLAVE_ADDRESS_BITS = 49


@dataclass(frozen=True)
class IpCore:
    """One `create_ip`: the IP's name, the module it becomes, its product guide, its
    configuration (CONFIG.<key> -> value, in the order the script sets them)."""

    ip: str
    module: str
    guide: str
    config: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Cell:
    module: str
    name: str
    comment: str
    connections: tuple[tuple[str, str], ...]
    params: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Pin:
    """A shell port with its package pin and I/O standard ("" on a GT pin)."""

    port: str
    pin: str
    standard: str


@dataclass(frozen=True)
class Shell:
    module: str
    board_module: str
    ports: tuple[tuple[str, int, str], ...]  # (direction, width, name)
    wires: tuple[tuple[int, str], ...]
    assigns: tuple[tuple[str, str], ...]
    cells: tuple[Cell, ...]
    cores: tuple[IpCore, ...]
    pins: tuple[Pin, ...]
    clocks: tuple[tuple[str, float], ...]  # (port, period ns) of every clock input
    async_pins: tuple[str, ...]  # inputs with no timing relation to any clock
    plan_mhz: float


def _vec(width: int) -> str:
    return f"[{width - 1}:0]"


class _Builder:
    def __init__(self) -> None:
        self.ports: list[tuple[str, int, str]] = []
        self.wires: dict[str, int] = {}
        self.assigns: list[tuple[str, str]] = []
        self.cells: list[Cell] = []
        self.cores: list[IpCore] = []
        self.pins: list[Pin] = []
        self.clocks: list[tuple[str, float]] = []
        self.async_pins: list[str] = []

    def wire(self, name: str, width: int = 1) -> str:
        self.wires.setdefault(name, width)
        return name

    def port(self, direction: str, name: str, width: int = 1) -> str:
        self.ports.append((direction, width, name))
        return name

    def core(self, ip: str, module: str, guide: str, **config: object) -> None:
        self.cores.append(IpCore(ip, module, guide, tuple(
            (k, v if isinstance(v, str) else _tcl_value(v)) for k, v in config.items())))


def _tcl_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return str(value)


# AXI4-Stream and AXI4-Lite signals: (name, width, driven by the master)
def _axis(width: int, *, keep: bool) -> list[tuple[str, int, bool]]:
    sigs = [("tdata", width, True)]
    if keep:
        sigs.append(("tkeep", width // 8, True))
    return [*sigs, ("tvalid", 1, True), ("tready", 1, False), ("tlast", 1, True)]


def _axil(addr: int) -> list[tuple[str, int, bool]]:
    return [("awaddr", addr, True), ("awprot", 3, True), ("awvalid", 1, True),
            ("awready", 1, False), ("wdata", 32, True), ("wstrb", 4, True),
            ("wvalid", 1, True), ("wready", 1, False), ("bresp", 2, False),
            ("bvalid", 1, False), ("bready", 1, True), ("araddr", addr, True),
            ("arprot", 3, True), ("arvalid", 1, True), ("arready", 1, False),
            ("rdata", 32, False), ("rresp", 2, False), ("rvalid", 1, False),
            ("rready", 1, True)]


def _axi4(addr: int, data: int, ident: int, *, read: bool = True,
          write: bool = True) -> list[tuple[str, int, bool]]:
    """AXI4 with ``ident``-bit IDs (0: none)."""
    def channel(prefix: str) -> list[tuple[str, int, bool]]:
        sigs = [(f"{prefix}id", ident, True)] if ident else []
        return [*sigs, (f"{prefix}addr", addr, True), (f"{prefix}len", 8, True),
                (f"{prefix}size", 3, True), (f"{prefix}burst", 2, True),
                (f"{prefix}lock", 1, True), (f"{prefix}cache", 4, True),
                (f"{prefix}prot", 3, True), (f"{prefix}valid", 1, True),
                (f"{prefix}ready", 1, False)]
    ids = [("bid", ident, False)] if ident else []
    rids = [("rid", ident, False)] if ident else []
    sigs: list[tuple[str, int, bool]] = []
    if write:
        sigs += [*channel("aw"), ("wdata", data, True), ("wstrb", data // 8, True),
                 ("wlast", 1, True), ("wvalid", 1, True), ("wready", 1, False), *ids,
                 ("bresp", 2, False), ("bvalid", 1, False), ("bready", 1, True)]
    if read:
        sigs += [*channel("ar"), *rids, ("rdata", data, False), ("rresp", 2, False),
                 ("rlast", 1, False), ("rvalid", 1, False), ("rready", 1, True)]
    return sigs


def _bundle(b: _Builder, wire: str, sigs: list[tuple[str, int, bool]]) -> dict[str, str]:
    return {s: b.wire(f"{wire}_{s}", w) for s, w, _ in sigs}


def _open(b: _Builder, cell: str, ports: list[tuple[str, int]]) -> list[tuple[str, str]]:
    """Outputs of ``cell`` that nothing reads, each on its own wire: every port is named in
    the instance, and the wires' names mark them unused for lint."""
    return [(port, b.wire(f"{cell}_unused_{port}", width)) for port, width in ports]


def _zero(ports: list[str]) -> list[tuple[str, str]]:
    """Optional inputs the shell does not use (QoS, user, region), held at zero."""
    return [(port, "'0") for port in ports]


def _attach(names: dict[str, str], fmt: str, only: set[str] | None = None
            ) -> list[tuple[str, str]]:
    """Connections of a bundle's wires to an instance's ports named ``fmt.format(signal)``."""
    return [(fmt.format(s), w) for s, w in names.items() if only is None or s in only]


def width_steps(src: int, dst: int) -> list[int]:
    """Widths a stream passes through from ``src`` to ``dst`` bits: the AXI4-Stream width
    converter takes whole ratios, so an odd pair goes up to their least common multiple first."""
    if src == dst:
        return [src]
    if max(src, dst) % min(src, dst) == 0:
        return [src, dst]
    return [src, math.lcm(src, dst), dst]


def _converters(b: _Builder, name: str, widths: list[int], src: dict[str, str], *,
                clock: str, reset_n: str) -> dict[str, str]:
    """Width converters from bundle ``src`` through ``widths``; the last bundle."""
    for k, (w_in, w_out) in enumerate(zip(widths, widths[1:], strict=False)):
        module = f"fpdeep_axis_{w_in}_to_{w_out}"
        if not any(c.module == module for c in b.cores):
            b.core("axis_dwidth_converter", module, "PG085", S_TDATA_NUM_BYTES=w_in // 8,
                   M_TDATA_NUM_BYTES=w_out // 8, HAS_TKEEP=1, HAS_TLAST=1)
        out = _bundle(b, f"{name}_w{k}", _axis(w_out, keep=True))
        b.cells.append(Cell(module, f"u_{name}_w{k}", f"{w_in} to {w_out} bits", (
            ("aclk", clock), ("aresetn", reset_n), *_attach(src, "s_axis_{}"),
            *_attach(out, "m_axis_{}"))))
        src = out
    return src


def _async_fifo(b: _Builder, module: str, cell: str, width: int, depth: int, *, keep: bool,
                src: dict[str, str], dst: dict[str, str], s_clock: str, m_clock: str,
                reset_n: str) -> None:
    if not any(c.module == module for c in b.cores):
        b.core("axis_data_fifo", module, "PG085", TDATA_NUM_BYTES=width // 8,
               FIFO_DEPTH=depth, IS_ACLK_ASYNC=1, HAS_TKEEP=int(keep), HAS_TLAST=1)
    b.cells.append(Cell(module, cell, "clock crossing", (
        ("s_axis_aresetn", reset_n), ("s_axis_aclk", s_clock), ("m_axis_aclk", m_clock),
        *_attach(src, "s_axis_{}"), *_attach(dst, "m_axis_{}"))))


def _links(b: _Builder, d: Design, board: Board, shell: BoardShell, sides: list[str],
           top: dict[str, str]) -> None:
    lanes = board.lanes_per_neighbour
    user = 64 * lanes
    for side in SIDES:
        m = {s: f"m_axis_{side}_{s}" for s, _, _ in _axis(d.link_bits, keep=True)}
        s_ = {s: f"s_axis_{side}_{s}" for s, _, _ in _axis(d.link_bits, keep=True)}
        if side not in sides:  # no neighbour there: nothing arrives, nothing is taken
            top.update({f"s_axis_{side}_{k}": "'0" for k in s_ if k != "tready"})
            top[f"m_axis_{side}_tready"] = "1'b0"
            top.update({f"m_axis_{side}_{k}": b.wire(f"unused_{side}_{k}", w)
                        for k, w, _ in _axis(d.link_bits, keep=True) if k != "tready"})
            top[f"s_axis_{side}_tready"] = b.wire(f"unused_{side}_tready")
            continue
        gt = shell.gt[side]
        module = f"fpdeep_aurora_{side}"
        b.core("aurora_64b66b", module, "PG074", C_AURORA_LANES=lanes,
               C_LINE_RATE=board.lane_gbps, C_REFCLK_FREQUENCY=gt.refclk.mhz,
               C_INIT_CLK=INIT_CLOCK_MHZ, interface_mode="Framing", flow_mode="None",
               SupportLevel=1, drp_mode="Disabled", C_START_QUAD=f"Quad_{gt.quad}",
               C_START_LANE=gt.first_lane,
               C_REFCLK_SOURCE=f"{gt.refclk_input} of Quad {gt.quad}")
        user_clk = b.wire(f"{side}_user_clk")
        user_rst = b.wire(f"{side}_user_rst")
        user_rst_n = b.wire(f"{side}_user_rst_n")
        b.assigns.append((user_rst_n, f"~{user_rst}"))
        for name in (f"{side}_gt_refclk_p", f"{side}_gt_refclk_n"):
            b.port("input", name)
        b.pins += [Pin(f"{side}_gt_refclk_p", gt.refclk.p, ""),
                   Pin(f"{side}_gt_refclk_n", gt.refclk.n, "")]
        b.clocks.append((f"{side}_gt_refclk_p", gt.refclk.period_ns))
        for name in ("rxp", "rxn"):
            b.port("input", f"{side}_{name}", lanes)
        for name in ("txp", "txn"):
            b.port("output", f"{side}_{name}", lanes)
        # towards the neighbour: board port -> width -> clock crossing -> Aurora
        tx_top = {k: top.setdefault(m[k], b.wire(f"b_{m[k]}", w))
                  for k, w, _ in _axis(d.link_bits, keep=True)}
        tx = _converters(b, f"{side}_tx", width_steps(d.link_bits, user), tx_top,
                         clock="clk", reset_n="rst_n")
        tx_user = _bundle(b, f"{side}_tx_user", _axis(user, keep=True))
        _async_fifo(b, f"fpdeep_link_fifo_{user}", f"u_{side}_tx_fifo", user, LINK_FIFO_DEPTH,
                    keep=True, src=tx, dst=tx_user, s_clock="clk", m_clock=user_clk,
                    reset_n="rst_n")
        rx_user = _bundle(b, f"{side}_rx_user", _axis(user, keep=True))
        # Aurora's receiver cannot wait: the link's credits (#10) keep the FIFO from filling,
        # so nothing reads its tready
        b.wires.pop(rx_user.pop("tready"))
        rx_user_ready = b.wire(f"u_{side}_rx_fifo_unused_s_axis_tready")
        rx = _bundle(b, f"{side}_rx", _axis(user, keep=True))
        _async_fifo(b, f"fpdeep_link_fifo_{user}", f"u_{side}_rx_fifo", user, LINK_FIFO_DEPTH,
                    keep=True, src={**rx_user, "tready": rx_user_ready}, dst=rx,
                    s_clock=user_clk, m_clock="clk", reset_n=user_rst_n)
        rx_top = _converters(b, f"{side}_rx", width_steps(user, d.link_bits), rx,
                             clock="clk", reset_n="rst_n")
        for k in s_:
            top[f"s_axis_{side}_{k}"] = rx_top[k]
        b.cells.append(Cell(module, f"u_aurora_{side}",
                            f"{lanes} lane(s) at {board.lane_gbps:g} Gb/s to the {side}", (
            *_attach(tx_user, "s_axi_tx_{}"),
            *_attach(rx_user, "m_axi_rx_{}"),
            ("rxp", f"{side}_rxp"), ("rxn", f"{side}_rxn"),
            ("txp", f"{side}_txp"), ("txn", f"{side}_txn"),
            ("gt_refclk1_p", f"{side}_gt_refclk_p"), ("gt_refclk1_n", f"{side}_gt_refclk_n"),
            ("init_clk", "init_clk"), ("reset_pb", "shell_reset"),
            ("pma_init", "shell_reset"), ("power_down", "1'b0"), ("loopback", "3'b000"),
            ("gt_rxcdrovrden_in", "1'b0"),
            ("user_clk_out", user_clk), ("sys_reset_out", user_rst),
            *_open(b, f"u_aurora_{side}", [
                ("channel_up", 1), ("lane_up", lanes), ("hard_err", 1), ("soft_err", 1),
                ("gt_reset_out", 1), ("gt_pll_lock", 1), ("mmcm_not_locked_out", 1),
                ("link_reset_out", 1)]))))


def _xdma(b: _Builder, shell: BoardShell, top: dict[str, str]) -> None:
    pcie = shell.pcie
    assert pcie is not None
    b.core("xdma", "fpdeep_xdma", "PG195", functional_mode="DMA", mode_selection="Advanced",
           pl_link_cap_max_link_width=f"X{pcie.lanes}",
           pl_link_cap_max_link_speed={1: "2.5_GT/s", 2: "5.0_GT/s", 3: "8.0_GT/s"}[pcie.gen],
           axi_data_width="64_bit", axisten_freq=250, xdma_axi_intf_mm="AXI_Stream",
           axilite_master_en=True, axilite_master_size=4, xdma_rnum_chnl=1,
           xdma_wnum_chnl=1, select_quad=pcie.quad, sys_reset_polarity="ACTIVE_LOW")
    for name in ("pcie_refclk_p", "pcie_refclk_n"):
        b.port("input", name)
    b.port("input", "pcie_perst_n")
    for name in ("pcie_rxp", "pcie_rxn"):
        b.port("input", name, pcie.lanes)
    for name in ("pcie_txp", "pcie_txn"):
        b.port("output", name, pcie.lanes)
    b.pins += [Pin("pcie_refclk_p", pcie.refclk.p, ""), Pin("pcie_refclk_n", pcie.refclk.n, ""),
               Pin("pcie_perst_n", pcie.perst.pin, pcie.perst.standard)]
    b.clocks.append(("pcie_refclk_p", pcie.refclk.period_ns))
    b.async_pins.append("pcie_perst_n")
    b.cells.append(Cell("IBUFDS_GTE4", "u_pcie_refclk", "PCIe reference clock buffer (UG576)", (
        ("I", "pcie_refclk_p"), ("IB", "pcie_refclk_n"), ("CEB", "1'b0"),
        ("O", b.wire("pcie_sys_clk_gt")), ("ODIV2", b.wire("pcie_sys_clk")))))
    h2c = _bundle(b, "h2c", _axis(64, keep=False))
    c2h = _bundle(b, "c2h", _axis(64, keep=True))
    axil = _bundle(b, "xdma_axil", _axil(BRIDGE_ADDRESS_BITS))
    aclk, aresetn = b.wire("xdma_aclk"), b.wire("xdma_aresetn")
    b.cells.append(Cell("fpdeep_xdma", "u_xdma", "PCIe host bridge", (
        ("sys_clk", "pcie_sys_clk"), ("sys_clk_gt", "pcie_sys_clk_gt"),
        ("sys_rst_n", "pcie_perst_n"),
        ("pci_exp_rxp", "pcie_rxp"), ("pci_exp_rxn", "pcie_rxn"),
        ("pci_exp_txp", "pcie_txp"), ("pci_exp_txn", "pcie_txn"),
        ("axi_aclk", aclk), ("axi_aresetn", aresetn), ("usr_irq_req", "1'b0"),
        *_attach(h2c, "m_axis_h2c_{}_0"), *_attach(c2h, "s_axis_c2h_{}_0"),
        # the host sends whole 64-bit words: tkeep carries nothing the board needs
        *_open(b, "u_xdma", [("m_axis_h2c_tkeep_0", 8)]),
        *_attach(axil, "m_axil_{}"),
        *_open(b, "u_xdma", [("user_lnk_up", 1), ("usr_irq_ack", 1), ("msi_enable", 1),
                             ("msi_vector_width", 3)]))))
    _host_streams(b, top, h2c, c2h, clock=aclk, reset_n=aresetn)
    b.core("axi_clock_converter", "fpdeep_csr_cdc", "PG059", PROTOCOL="AXI4LITE",
           ADDR_WIDTH=BRIDGE_ADDRESS_BITS, DATA_WIDTH=32, ACLK_ASYNC=1)
    _csr(b, top, axil, "fpdeep_csr_cdc", "u_csr_cdc", (
        ("s_axi_aclk", aclk), ("s_axi_aresetn", aresetn), ("m_axi_aclk", "clk"),
        ("m_axi_aresetn", "rst_n")), address_bits=BRIDGE_ADDRESS_BITS)


def _host_streams(b: _Builder, top: dict[str, str], h2c: dict[str, str],
                  c2h: dict[str, str], *, clock: str, reset_n: str) -> None:
    """The host bridge's 64-bit streams to the board's host ports, across clocks."""
    h2c_clk = _bundle(b, "host_in", _axis(64, keep=False))
    c2h_clk = _bundle(b, "host_out", _axis(64, keep=False))
    _async_fifo(b, "fpdeep_host_fifo", "u_host_in_fifo", 64, HOST_FIFO_DEPTH, keep=False,
                src=h2c, dst=h2c_clk,
                s_clock=clock, m_clock="clk", reset_n=reset_n)
    _async_fifo(b, "fpdeep_host_fifo", "u_host_out_fifo", 64, HOST_FIFO_DEPTH, keep=False,
                src=c2h_clk, dst={k: v for k, v in c2h.items() if k != "tkeep"},
                s_clock="clk", m_clock=clock, reset_n="rst_n")
    b.assigns.append((c2h["tkeep"], "8'hff"))  # the board sends whole 64-bit words
    for k, w in h2c_clk.items():
        top[f"s_axis_host_{k}"] = w
    for k, w in c2h_clk.items():
        top[f"m_axis_host_{k}"] = w


def _csr(b: _Builder, top: dict[str, str], master: dict[str, str], module: str, cell: str,
         clocks: tuple[tuple[str, str], ...], *, address_bits: int,
         extra: tuple[tuple[str, str], ...] = ()) -> None:
    """An AXI4-Lite master through ``module`` (a clock or protocol converter with
    ``address_bits`` address bits on both sides) to the CSR."""
    csr = _bundle(b, "csr", _axil(address_bits))
    b.cells.append(Cell(module, cell, "to the board's CSR slave", (
        *clocks, *_attach(master, "s_axi_{}"), *extra, *_attach(csr, "m_axi_{}"))))
    for s, _, _ in _axil(address_bits):
        top[f"s_axil_{s}"] = (_low(b, csr[s], CSR.params["ADDR_W"]) if s.endswith("addr")
                              else csr[s])


def _low(b: _Builder, wire: str, bits: int) -> str:
    """The low ``bits`` of ``wire``; the slave there decodes no more (its window holds only
    it), so the bits above go to a wire marked unused."""
    width = b.wires[wire]
    if width > bits:
        b.assigns.append((b.wire(f"{wire}_unused_high", width - bits),
                          f"{wire}[{width - 1}:{bits}]"))
    return f"{wire}[{bits - 1}:0]"


def _zynq(b: _Builder, top: dict[str, str]) -> None:
    """The PS's AXI ports run on the plan's clock: no crossing between PS and board."""
    b.core("zynq_ultra_ps_e", "fpdeep_zynq_ps", "PG201", PSU__USE__M_AXI_GP0=1,
           PSU__MAXIGP0__DATA_WIDTH=32, PSU__USE__M_AXI_GP2=1, PSU__MAXIGP2__DATA_WIDTH=32,
           PSU__USE__S_AXI_GP2=1, PSU__SAXIGP2__DATA_WIDTH=64, PSU__USE__S_AXI_GP3=1,
           PSU__SAXIGP3__DATA_WIDTH=64, PSU__FPGA_PL0_ENABLE=0)
    b.core("axi_dma", "fpdeep_host_dma", "PG021", c_include_sg=0, c_sg_include_stscntrl_strm=0,
           c_m_axi_mm2s_data_width=64, c_m_axis_mm2s_tdata_width=64,
           c_m_axi_s2mm_data_width=64, c_s_axis_s2mm_tdata_width=64, c_addr_width=64,
           c_sg_length_width=26)
    b.core("axi_protocol_converter", "fpdeep_axi_to_lite", "PG101", SI_PROTOCOL="AXI4",
           MI_PROTOCOL="AXI4LITE", ADDR_WIDTH=PS_MASTER_ADDRESS_BITS, DATA_WIDTH=32,
           ID_WIDTH=16, TRANSLATION_MODE=2)
    hpm_csr = _bundle(b, "hpm0_lpd", _axi4(PS_MASTER_ADDRESS_BITS, 32, 16))
    hpm_dma = _bundle(b, "hpm0_fpd", _axi4(PS_MASTER_ADDRESS_BITS, 32, 16))
    hp_rd = _bundle(b, "hp0", _axi4(PS_SLAVE_ADDRESS_BITS, 64, 6, write=False))
    hp_wr = _bundle(b, "hp1", _axi4(PS_SLAVE_ADDRESS_BITS, 64, 6, read=False))
    # the DMA issues one ID only, so the response IDs carry nothing
    del hp_rd["rid"], hp_wr["bid"]
    b.wires.pop("hp0_rid")
    b.wires.pop("hp1_bid")
    mm2s = _bundle(b, "dma_mm2s", _axi4(64, 64, 0, write=False))
    s2mm = _bundle(b, "dma_s2mm", _axi4(64, 64, 0, read=False))
    dma_lite = _bundle(b, "dma_lite", _axil(PS_MASTER_ADDRESS_BITS))
    for s in ("awprot", "arprot", "wstrb"):  # PG021: the DMA's register slave has none
        b.wires.pop(dma_lite.pop(s))
    # HP0 only reads and HP1 only writes: the other channel of each is idle, its inputs at
    # zero and its outputs open
    idle_wr = _axi4(PS_SLAVE_ADDRESS_BITS, 64, 6, read=False)
    idle_rd = _axi4(PS_SLAVE_ADDRESS_BITS, 64, 6, write=False)
    idle = [(f"saxigp2_{s}", "'0") for s, _, m in idle_wr if m]
    idle += [(f"saxigp3_{s}", "'0") for s, _, m in idle_rd if m]
    idle += _open(b, "u_ps", [(f"saxigp2_{s}", w) for s, w, m in idle_wr if not m])
    idle += _open(b, "u_ps", [(f"saxigp3_{s}", w) for s, w, m in idle_rd if not m])
    b.cells.append(Cell("fpdeep_zynq_ps", "u_ps", "Zynq UltraScale+ PS: host bridge", (
        ("maxihpm0_lpd_aclk", "clk"), ("maxihpm0_fpd_aclk", "clk"),
        ("saxihp0_fpd_aclk", "clk"), ("saxihp1_fpd_aclk", "clk"),
        *_attach(hpm_csr, "maxigp2_{}"), *_attach(hpm_dma, "maxigp0_{}"),
        *_attach(hp_rd, "saxigp2_{}"), *_attach(hp_wr, "saxigp3_{}"), *idle,
        *_open(b, "u_ps", [("saxigp2_rid", 6), ("saxigp3_bid", 6)]),
        *_zero([f"saxigp{n}_{s}" for n in (2, 3)
                for s in ("awuser", "aruser", "awqos", "arqos")]),
        *_open(b, "u_ps", [(f"maxigp{n}_{s}", w) for n in (0, 2)
                           for s, w in (("awuser", 16), ("aruser", 16), ("awqos", 4),
                                        ("arqos", 4))]),
        *_open(b, "u_ps", [(f"saxigp{n}_{s}", w) for n in (2, 3)
                           for s, w in (("rcount", 8), ("wcount", 8), ("racount", 4),
                                        ("wacount", 4))]))))
    # the DMA's masters carry no IDs (the HP port sees ID 0) and fewer address bits are
    # decoded by the PS than the DMA drives
    for hp, dma in ((hp_rd, mm2s), (hp_wr, s2mm)):
        for s, _, from_master in _axi4(PS_SLAVE_ADDRESS_BITS, 64, 6):
            if s not in hp or s in ("rid", "bid"):
                continue
            if s in ("arid", "awid"):
                b.assigns.append((hp[s], "'0"))
            elif s.endswith("addr"):
                b.assigns.append((hp[s], _low(b, dma[s], PS_SLAVE_ADDRESS_BITS)))
            elif from_master:
                b.assigns.append((hp[s], dma[s]))
            else:
                b.assigns.append((dma[s], hp[s]))
    b.cells.append(Cell("fpdeep_axi_to_lite", "u_dma_ctl", "to the DMA's control registers", (
        ("aclk", "clk"), ("aresetn", "rst_n"), *_attach(hpm_dma, "s_axi_{}"),
        *_zero(["s_axi_awregion", "s_axi_arregion", "s_axi_awqos", "s_axi_arqos"]),
        *_attach(dma_lite, "m_axi_{}"),
        *_open(b, "u_dma_ctl", [("m_axi_awprot", 3), ("m_axi_arprot", 3), ("m_axi_wstrb", 4)]))))
    mm2s_s = _bundle(b, "mm2s", _axis(64, keep=False))
    s2mm_s = _bundle(b, "s2mm", _axis(64, keep=True))
    # PG021: the DMA's register slave has neither prot nor wstrb (its registers are whole
    # words); its masters have no lock
    b.cells.append(Cell("fpdeep_host_dma", "u_dma", "host streams to and from PS memory", (
        ("s_axi_lite_aclk", "clk"), ("m_axi_mm2s_aclk", "clk"), ("m_axi_s2mm_aclk", "clk"),
        ("axi_resetn", "rst_n"),
        *[(f"s_axi_lite_{k}", _low(b, v, DMA_LITE_ADDRESS_BITS) if k.endswith("addr") else v)
          for k, v in dma_lite.items()],
        *_attach({k: v for k, v in mm2s.items() if k not in ("arlock",)}, "m_axi_mm2s_{}"),
        *_attach({k: v for k, v in s2mm.items() if k not in ("awlock",)}, "m_axi_s2mm_{}"),
        *_attach(mm2s_s, "m_axis_mm2s_{}"), *_attach(s2mm_s, "s_axis_s2mm_{}"),
        *_open(b, "u_dma", [("m_axis_mm2s_tkeep", 8)]),  # whole 64-bit words
        *_open(b, "u_dma", [("m_axi_mm2s_aruser", 4), ("m_axi_s2mm_awuser", 4),
                            ("mm2s_prmry_reset_out_n", 1), ("s2mm_prmry_reset_out_n", 1),
                            ("mm2s_introut", 1), ("s2mm_introut", 1)]))))
    b.assigns += [(mm2s["arlock"], "1'b0"), (s2mm["awlock"], "1'b0"),
                  (s2mm_s["tkeep"], "8'hff")]
    for k in ("tdata", "tvalid", "tlast"):
        top[f"s_axis_host_{k}"] = mm2s_s[k]
        top[f"m_axis_host_{k}"] = s2mm_s[k]
    top["s_axis_host_tready"] = mm2s_s["tready"]
    top["m_axis_host_tready"] = s2mm_s["tready"]
    # the AXI4 side has IDs and bursts; the converter maps it to single AXI4-Lite beats
    _csr(b, top, hpm_csr, "fpdeep_axi_to_lite", "u_csr_ctl",
         (("aclk", "clk"), ("aresetn", "rst_n")), address_bits=PS_MASTER_ADDRESS_BITS,
         extra=tuple(_zero(["s_axi_awregion", "s_axi_arregion", "s_axi_awqos",
                            "s_axi_arqos"])))


def shell_design(d: Design, bd: BoardDesign, board: Board, *, sides: list[str],
                 clock_mhz: float) -> Shell:
    """The shell of board ``bd`` (a ``board``, neighbours towards ``sides``) at the plan's
    ``clock_mhz``; FpdeepError saying why when the board file lacks what it needs (the
    caller names the board)."""
    shell = board.shell
    if board.shell_note or shell is None:
        raise FpdeepError(board.shell_note)
    if len(sides) == 2 and shell.gt["east"].refclk == shell.gt["west"].refclk:
        raise FpdeepError(
            "not yet supported: both neighbours' Aurora "
            f"cores on GT quad {shell.gt['east'].quad} share one reference clock "
            f"({shell.gt['east'].refclk.p}/{shell.gt['east'].refclk.n}); a chain of two "
            "boards, or a board file with separate reference clocks, builds")
    if bd.dram_bits:
        raise FpdeepError("not yet supported: a shell for a board that keeps tensors off chip "
                          "(its memory controller)")
    b = _Builder()
    b.port("input", "clk_ref_p")
    b.port("input", "clk_ref_n")
    b.port("input", "reset_button")
    b.pins += [Pin("clk_ref_p", shell.clock.p, shell.clock.standard),
               Pin("clk_ref_n", shell.clock.n, shell.clock.standard),
               Pin("reset_button", shell.reset.pin, shell.reset.standard)]
    b.clocks.append(("clk_ref_p", shell.clock.period_ns))
    b.async_pins.append("reset_button")
    b.core("clk_wiz", "fpdeep_clocking", "PG065", PRIM_IN_FREQ=shell.clock.mhz,
           PRIM_SOURCE="Differential_clock_capable_pin", CLKOUT1_REQUESTED_OUT_FREQ=clock_mhz,
           CLKOUT2_USED=True, CLKOUT2_REQUESTED_OUT_FREQ=INIT_CLOCK_MHZ, USE_LOCKED=True,
           USE_RESET=True, RESET_TYPE="ACTIVE_HIGH")
    for name in ("clk", "rst_n", "init_clk", "locked", "button", "shell_reset"):
        b.wire(name)
    b.assigns += [("button", "reset_button" if shell.reset.active_high else "~reset_button"),
                  ("shell_reset", "button | ~locked")]
    b.cells.append(Cell("fpdeep_clocking", "u_clocking",
                        f"{shell.clock.mhz:g} MHz reference to the plan's {clock_mhz:g} MHz", (
        ("clk_in1_p", "clk_ref_p"), ("clk_in1_n", "clk_ref_n"), ("reset", "button"),
        ("clk_out1", "clk"), ("clk_out2", "init_clk"), ("locked", "locked"))))
    b.cells.append(Cell(RESET_SYNC.name, "u_reset", "the board's reset, released with clk", (
        ("clk", "clk"), ("arst", "shell_reset"), ("rst_n", "rst_n"))))
    top: dict[str, str] = {"clk": "clk", "rst_n": "rst_n"}
    if shell.host == "xdma":
        _xdma(b, shell, top)
    else:
        _zynq(b, top)
    _links(b, d, board, shell, sides, top)
    ports = top_ports(d, bd)
    missing = [p.name for p in ports if p.name not in top]
    if missing:
        raise ValueError(f"shell of board {bd.index}: board top ports left unconnected: "
                         f"{', '.join(missing)}")
    b.cells.append(Cell(bd.module, "u_board", "the accelerator",
                        tuple((p.name, top[p.name]) for p in ports)))
    return Shell(
        module=f"{SHELL_PREFIX}{bd.index}", board_module=bd.module, ports=tuple(b.ports),
        wires=tuple((w, n) for n, w in b.wires.items()), assigns=tuple(b.assigns),
        cells=tuple(b.cells), cores=tuple(b.cores), pins=tuple(b.pins),
        clocks=tuple(b.clocks), async_pins=tuple(b.async_pins), plan_mhz=clock_mhz)


def neighbour_sides(index: int, count: int) -> list[str]:
    """The sides of board ``index`` of a chain of ``count`` that have a neighbour."""
    return [s for s, there in (("east", index + 1 < count), ("west", index > 0)) if there]
