"""What the board and cluster templates print for a design.

A board top has exactly the ports of `top_ports`: clock and reset, the host stream pair, the
CSR slave, the east and west link streams (as wide as the planned link rate needs, behind them
the gearboxes of hw/link) and, where the plan keeps tensors off chip, an AXI4 memory master.
Inside it every resource of its layout (`fpdeep.codegen.layout`: an engine, a unit part, a link
direction) has a sequencer and a mover per stream (and per side signal), the movers share the
tensor store, and the host interface, the step control and the CSR block sit beside them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fpdeep.codegen.layout import BoardLayout, Mover, ProgramMemory, Resource
from fpdeep.codegen.ports import (
    LINK_COUNTERS,
    LINK_FLAGS,
    LINK_MODEL_DEPTH,
    SIDES,
    Instance,
    comment_text,
    engine_instance,
    link_end_instances,
    link_instances,
    link_word_bits,
    literal,
    unit_instances,
)
from fpdeep.design.engine import ACC_BITS
from fpdeep.design.lower import BoardDesign, Design
from fpdeep.errors import FpdeepError
from fpdeep.hwlib import (
    CSR,
    DRAM_PORT,
    LINK_CHANNEL,
    LINK_PACK,
    LINK_RX,
    LINK_TX,
    LINK_UNPACK,
    MEM_MODEL,
    MODULES,
)
from fpdeep.hwlib.protocol import (
    BANK_ADDRESS_BITS,
    BANK_BITS,
    BANK_WIDTH_BITS,
    DRAM_BANK,
    DRAM_WORD_LENGTH_BITS,
    MEM_ADDRESS_BITS,
    WORD_BITS,
    WORD_LENGTH_BITS,
)
from fpdeep.hwlib.signature import (
    CLOCK,
    CONFIG,
    axi_lite_slave,
    axi_master,
    axi_stream,
    evaluate,
)

#: Host stream beats are 64 bits.
HOST_BITS = 64
#: The least watchdog limit: cycles without any beat moving (or an engine busy) after which a
#: step is a deadlock.
WATCHDOG_MIN = 1 << 16
#: The most `fpdeep_board_ctl`'s WATCHDOG parameter (an int) holds.
WATCHDOG_MAX = (1 << 31) - 1


def watchdog_limit(step_cycles: int | None) -> int:
    """The watchdog's limit for a design whose training step the build models at
    ``step_cycles``: a board idles while the rest of the chain works (the first board waits
    for its errors while every later board runs the image forward and back), up to nearly
    a step, so twice the step rounded up to a power of two, and at least WATCHDOG_MIN."""
    if not step_cycles:
        return WATCHDOG_MIN
    return min(WATCHDOG_MAX, max(WATCHDOG_MIN, 1 << (2 * step_cycles - 1).bit_length()))


@dataclass(frozen=True)
class TopPort:
    direction: str
    width: int
    name: str


#: Byte address bits of the off-chip memory master: AXI4's widest, any memory map fits.
DRAM_ADDRESS_BITS = 64
#: The off-chip memory master's ports, ``m_axi_dram_*``.
DRAM_PREFIX = "m_axi_dram"
#: The most beats of one off-chip burst (each memory reader buffers two).
DRAM_BURST_BEATS = 8
#: ID bits of the off-chip memory master: its readers and writers are told apart by ID.
DRAM_ID_BITS = 8


def link_port(side: str, direction: str, width: int) -> tuple:
    """The link stream ``m_axis_<side>`` (out) or ``s_axis_<side>`` (in) of ``width`` bits."""
    sink = direction == "s"
    return axi_stream(f"{direction}_axis_{side}", width, sink=sink, keep=width // 8)


def top_ports(d: Design, board: BoardDesign | None = None) -> list[TopPort]:
    """The ports of a board top (of ``board``, else those every board has), in order:
    exactly these and no others."""
    sigs = [*axi_stream("s_axis_host", HOST_BITS, sink=True),
            *axi_stream("m_axis_host", HOST_BITS, sink=False),
            *axi_lite_slave("s_axil", CSR.params["ADDR_W"])]
    for side in SIDES:
        sigs += [*link_port(side, "m", d.link_bits), *link_port(side, "s", d.link_bits)]
    if board is not None and board.dram_bits:
        sigs += axi_master(DRAM_PREFIX, board.dram_bits, DRAM_ADDRESS_BITS, DRAM_ID_BITS)
    widths = CSR.parameters()
    return ([TopPort("input", 1, "clk"), TopPort("input", 1, "rst_n")]
            + [TopPort(s.direction, evaluate(s.width, widths), s.name) for s in sigs])


def design_hash(d: Design) -> int:
    """32 bits of the design's SHA-256: the CSR ID register, so a host can tell whether a
    bitstream was built from this design."""
    text = json.dumps(d.to_json(), sort_keys=True).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big")


def _vec(values: list[int], bits: int) -> str:
    """A packed parameter vector, element 0 in the low bits."""
    total = 0
    for k, v in enumerate(values):
        total |= v << (k * bits)
    return f"{len(values) * bits}'h{total:x}"


def _low_bits(name: str, bits: int, width: int) -> str:
    """``name`` (``width`` bits) cut to its low ``bits``."""
    return name if bits == width else f"{name}[{bits - 1}:0]"


def board_values(d: Design, board: BoardDesign, layout: BoardLayout,
                 program_words: Sequence[ProgramMemory], *,
                 watchdog: int = WATCHDOG_MIN) -> dict[str, Any]:
    """What `templates/board.sv.j2` prints for one board; ``program_words``: per resource,
    the instruction memory of its sequencer (training, then forward-only program);
    ``watchdog``: the step control's limit (`watchdog_limit`)."""
    g = _Glue(d, board, layout, program_words, watchdog)
    ports = top_ports(d, board)
    return {"module": board.module, "index": board.index, "model": comment_text(d.model),
            "ports": ports,
            "wires": g.wires, "assigns": g.assigns,
            "instances": g.instances, "resources": layout.resources, "unread": g.unread()}


class _Glue:
    """Builds a board's wires, instances and assignments."""

    def unread(self) -> list[str]:
        """Wires nothing reads (a sequencer's start where its resource has none, bits of a
        configuration register wider than the input it drives, ...): tied into one `unused`
        wire, which Verilator's lint knows to skip."""
        word = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
        read: set[str] = set()
        for a in self.assigns:
            read |= set(word.findall(a.split("=", 1)[1]))
        for inst in self.instances:
            directions = {p.name: p.direction for p in MODULES[inst.module].signals()}
            for port, expr in inst.connections:
                if directions.get(port) == "input":
                    read |= set(word.findall(expr))
        # a reader's word and a configuration register are read only in their low bits
        partial = [name for _, name in self.wires
                   if re.fullmatch(r"r\d+_(i\d+_data|cfg)", name)]
        return [name for _, name in self.wires if name not in read] + [
            name for name in partial if name in read] + self.unread_ports

    def __init__(self, d: Design, board: BoardDesign, layout: BoardLayout,
                 memories: Sequence[ProgramMemory], watchdog: int) -> None:
        self.d, self.board, self.layout = d, board, layout
        self.watchdog = watchdog
        self.wires: list[tuple[int, str]] = []
        self.assigns: list[str] = []
        self.instances: list[Instance] = []
        self.rd_clients: list[str] = []  # prefix of each store read client
        self.wr_clients: list[str] = []
        self.moved: list[str] = []
        self.params: dict[str, dict] = {}  # instance prefix -> its parameters
        self.frame: list[str] = []
        self.busy: list[str] = []
        self.unread_ports: list[str] = []  # inputs of the board top it does not use
        self.link_faults: list[str] = []  # a link end's stuck or overflow flag
        # off-chip memory: its readers and writers (clients of the memory port), their faults
        self.memory_clients: dict[str, list[str]] = {"rd": [], "wr": []}
        self.memory_faults: list[str] = []
        self.programs = tuple(memories)  # per resource, its sequencer's instruction memory
        self.pd = tuple(m.words for m in memories)
        self.host_pd = max(self.pd)  # the host addresses the deepest
        nres = len(layout.resources)
        self.nres = nres
        self.wire(nres * 32, "ended_all")
        for k in ("finished", "waiting", "running", "active"):
            self.wire(nres, k)
        for r, res in enumerate(layout.resources):
            self.resource(r, res)
        self.host()
        self.store()
        if board.dram_bits:
            self.memory_port()
        self.control()

    def wire(self, width: int, name: str) -> str:
        self.wires.append((width, name))
        return name

    def resource(self, r: int, res: Resource) -> None:
        q = f"r{r}"
        nin, nout = max(1, len(res.ins)), max(1, len(res.outs))
        ncfg = max(1, len(res.cfg))
        for width, name in ((nin, "in_cmd"), (nout, "out_cmd"), (nin, "in_busy"),
                            (nout, "out_busy"), (ncfg * 48, "cfg"), (BANK_BITS, "bank"),
                            (BANK_ADDRESS_BITS, "addr"), (WORD_LENGTH_BITS, "len"), (1, "hold"),
                            (2, "parts"), (1, "chain"), (MEM_ADDRESS_BITS, "maddr"), (2, "mslot"),
                            (1, "start"), (1, "flush"), (1, "done"), (32, "ended")):
            self.wire(width, f"{q}_{name}")
        self.assigns.append(f"ended_all[{r * 32} +: 32] = {q}_ended")
        # what the CSR counts as active: an engine's runs (its operand sequencer only waits
        # for a free half meanwhile) and the words of its drains (its output sequencer waits
        # for results; a link's receiving side likewise), any other resource's passes
        if res.shares or res.module is LINK_RX:  # it waits for words: count the words
            active = " || ".join(f"{q}_o{k}_moved" for k in range(len(res.outs)))
        else:
            active = f"{res.name}_busy" if res.engine is not None else f"running[{r}]"
        self.assigns.append(f"active[{r}] = {active}")
        if not res.ins:
            self.assigns.append(f"{q}_in_busy = 1'b0")
        if not res.outs:
            self.assigns.append(f"{q}_out_busy = 1'b0")
        self.instances.append(Instance(
            "fpdeep_sequencer", f"u_{q}_seq", f"sequencer of {comment_text(res.name)}",
            (("NIN", nin), ("NOUT", nout), ("NCFG", ncfg), ("NRES", self.nres),
             ("PD", self.pd[r]), ("FWD", self.programs[r].forward)), (),
            (("clk", "clk"), ("rst", "rst"), ("go", "go"), ("mode", "mode"),
             ("cancel", "cancel"), ("prog_we", f"prog_we && prog_res == 8'd{r}"),
             ("prog_addr", _low_bits("prog_addr", self.pd[r].bit_length() - 1,
                                     self.host_pd.bit_length() - 1)),
             ("prog_data", "prog_data"),
             ("ended_all", "ended_all"), ("ended", f"{q}_ended"),
             ("finished", f"finished[{r}]"), ("waiting", f"waiting[{r}]"),
             ("running", f"running[{r}]"), ("in_cmd", f"{q}_in_cmd"),
             ("out_cmd", f"{q}_out_cmd"), ("cmd_bank", f"{q}_bank"), ("cmd_addr", f"{q}_addr"),
             ("cmd_len", f"{q}_len"), ("cmd_hold", f"{q}_hold"), ("cmd_parts", f"{q}_parts"),
             ("cmd_chain", f"{q}_chain"), ("cmd_maddr", f"{q}_maddr"),
             ("cmd_mslot", f"{q}_mslot"), ("in_busy", f"{q}_in_busy"),
             ("out_busy", f"{q}_out_busy"), ("cfg", f"{q}_cfg"),
             ("start", f"{q}_start"), ("flush", f"{q}_flush"), ("done", f"{q}_done"))))
        for k, m in enumerate(res.ins):
            self.reader(q, k, m, (r, False, k) in self.layout.dram_movers)
        for k, m in enumerate(res.outs):
            self.writer(q, k, m, (r, True, k) in self.layout.dram_movers)
        if res.module in (LINK_TX, LINK_RX):
            self.link(q, res)
        else:
            self.unit(q, r, res)

    @staticmethod
    def client(kind: str, c: int) -> tuple[tuple[str, str], ...]:
        """The connections of store client ``c``: a reader's (``rd``) or a writer's (``wr``)."""
        widths = {"bank": BANK_BITS, "addr": BANK_ADDRESS_BITS, "data": WORD_BITS}
        names = (("req", "bank", "addr", "gnt", "valid", "data") if kind == "rd"
                 else ("req", "bank", "addr", "data", "gnt"))
        return tuple((f"{kind}_{n}", f"st_{kind}_{n}[{c * widths[n]} +: {widths[n]}]"
                      if n in widths else f"st_{kind}_{n}[{c}]") for n in names)

    def reader(self, q: str, k: int, m: Mover, off_chip: bool) -> None:
        """Input mover ``k`` of sequencer ``q``; with ``off_chip`` a memory reader beside it
        takes the commands of bank `DRAM_BANK`, and the two share the stream."""
        p = f"{q}_i{k}"
        c = len(self.rd_clients)
        self.rd_clients.append(p)
        for width, name in ((WORD_BITS, "data"), (1, "last"), (1, "valid"), (1, "ready"),
                            (1, "moved")):
            self.wire(width, f"{p}_{name}")
        self.moved.append(f"{p}_moved")
        cmd, own = f"{q}_in_cmd[{k}]", p
        if off_chip:
            own = self.memory_mover(q, p, "rd", cmd, f"{q}_in_busy[{k}]", m)
            cmd = f"{cmd} && {q}_bank != {BANK_BITS}'d{DRAM_BANK}"
        self.instances.append(Instance(
            "fpdeep_mover_rd", f"u_{p}", f"{m.stream}{'.' + m.side if m.side else ''} in",
            (), (),
            (("clk", "clk"), ("rst", "rst"), ("cmd_valid", cmd),
             ("cmd_bank", f"{q}_bank"), ("cmd_addr", f"{q}_addr"), ("cmd_len", f"{q}_len"),
             ("cmd_hold", f"{q}_hold"), ("cmd_parts", f"{q}_parts"),
             ("cmd_chain", f"{q}_chain"),
             ("busy", f"{own}_busy" if off_chip else f"{q}_in_busy[{k}]"),
             *self.client("rd", c),
             ("m_data", f"{own}_data"), ("m_last", f"{own}_last"), ("m_valid", f"{own}_valid"),
             ("m_ready", f"{p}_ready"), ("moved", f"{own}_moved"))))

    def writer(self, q: str, k: int, m: Mover, off_chip: bool) -> None:
        """Output mover ``k`` of sequencer ``q``; with ``off_chip`` a memory writer beside
        it, as `reader`."""
        p = f"{q}_o{k}"
        c = len(self.wr_clients)
        self.wr_clients.append(p)
        for width, name in ((WORD_BITS, "data"), (1, "last"), (1, "valid"), (1, "ready"),
                            (1, "moved"), (1, "err")):
            self.wire(width, f"{p}_{name}")
        self.moved.append(f"{p}_moved")
        self.frame.append(f"{p}_err")
        cmd, own = f"{q}_out_cmd[{k}]", p
        if off_chip:
            own = self.memory_mover(q, p, "wr", cmd, f"{q}_out_busy[{k}]", m)
            cmd = f"{cmd} && {q}_bank != {BANK_BITS}'d{DRAM_BANK}"
        self.instances.append(Instance(
            "fpdeep_mover_wr", f"u_{p}", f"{m.stream}{'.' + m.side if m.side else ''} out",
            (), (),
            (("clk", "clk"), ("rst", "rst"), ("cmd_valid", cmd),
             ("cmd_bank", f"{q}_bank"), ("cmd_addr", f"{q}_addr"), ("cmd_len", f"{q}_len"),
             ("cmd_parts", f"{q}_parts"),
             ("busy", f"{own}_busy" if off_chip else f"{q}_out_busy[{k}]"),
             ("err_last", f"{own}_err"), *self.client("wr", c), ("s_data", f"{p}_data"),
             ("s_last", f"{p}_last"),
             ("s_valid", f"{p}_valid"),
             ("s_ready", f"{own}_ready"), ("moved", f"{own}_moved"))))

    def memory_mover(self, q: str, p: str, kind: str, cmd: str, busy: str, m: Mover) -> str:
        """The off-chip memory reader (``rd``) or writer (``wr``) beside mover ``p``: it takes
        the sequencer's commands of bank `DRAM_BANK` and client ``kind`` of the memory port;
        the store mover's signals are renamed ``<p>_st_*`` and the pair's joined into ``p``'s.
        Returns the store mover's prefix."""
        own, mem = f"{p}_st", f"{p}_mem"
        names = (("data", WORD_BITS), ("last", 1), ("valid", 1), ("moved", 1), ("busy", 1))
        if kind == "wr":
            names = (("ready", 1), ("moved", 1), ("busy", 1), ("err", 1))
        for name, width in names:
            self.wire(width, f"{own}_{name}")
            self.wire(width, f"{mem}_{name}")
        self.assigns.append(f"{busy} = {own}_busy || {mem}_busy")
        self.assigns.append(f"{p}_moved = {own}_moved || {mem}_moved")
        if kind == "rd":  # one of the two streams at a time: the sequencer waits for each
            self.assigns += [f"{p}_valid = {own}_valid || {mem}_valid",
                             f"{p}_data = {mem}_valid ? {mem}_data : {own}_data",
                             f"{p}_last = {mem}_valid ? {mem}_last : {own}_last"]
        else:
            self.assigns += [f"{p}_ready = {own}_ready || {mem}_ready",
                             f"{p}_err = {own}_err || {mem}_err"]
        stream = ((("m_data", f"{mem}_data"), ("m_last", f"{mem}_last"),
                   ("m_valid", f"{mem}_valid"), ("m_ready", f"{p}_ready")) if kind == "rd" else
                  (("s_data", f"{p}_data"), ("s_last", f"{p}_last"), ("s_valid", f"{p}_valid"),
                   ("s_ready", f"{mem}_ready")))
        extra = (("cmd_chain", f"{q}_chain"),) if kind == "rd" else (("err_last", f"{mem}_err"),)
        self.memory_unit(
            kind, mem, f"{m.stream}{'.' + m.side if m.side else ''} "
            f"{'in' if kind == 'rd' else 'out'}, off chip", "rst",
            (("cmd_valid", f"{cmd} && {q}_bank == {BANK_BITS}'d{DRAM_BANK}"),
             ("cmd_addr", f"{DRAM_ADDRESS_BITS}'({q}_maddr)"), ("cmd_slot", f"{q}_mslot"),
             # an off-chip command's address field holds its length's high bits
             ("cmd_len", f"{{{q}_addr, {q}_len}}"), ("cmd_parts", f"{q}_parts"), *extra,
             ("busy", f"{mem}_busy"), *stream), length_bits=DRAM_WORD_LENGTH_BITS)
        return own

    def memory_unit(self, kind: str, mem: str, comment: str, rst: str,
                    ports: tuple[tuple[str, str], ...],
                    length_bits: int = WORD_LENGTH_BITS) -> None:
        """A memory reader (``rd``) or writer (``wr``) ``u_<mem>`` with its command and stream
        ``ports``: the next client of that kind on the memory port, its fault on the board's."""
        client = len(self.memory_clients[kind])
        self.memory_clients[kind].append(mem)
        self.wire(1, f"{mem}_fault")
        self.memory_faults.append(f"{mem}_fault")
        self.instances.append(Instance(
            f"fpdeep_dram_{kind}", f"u_{mem}", comment,
            (*self.memory_parameters(), ("LW", length_bits)), (),
            (("clk", "clk"), ("rst", rst), *ports, ("err", f"{mem}_fault"),
             *self.memory_client(kind, client), ("moved", f"{mem}_moved"))))

    def unit(self, q: str, r: int, res: Resource) -> None:
        """The engine or unit part, its streams joined to the movers (an engine's output
        sequencer joins the results of the instance its first sequencer made)."""
        dw = self.d.data_width
        if res.shares:
            n = res.shares
            params = dict(self.params[n])
        else:
            if res.engine is not None:
                s = next(s for s in self.board.slices for e in s.engines.values()
                         if e.ident == res.engine.ident)
                inst = engine_instance(res.engine, s, dw)
            else:
                insts = unit_instances(res.unit, dw, ACC_BITS)
                inst = next(i for i in insts if i.name == f"u_{res.name}")
            self.instances.append(Instance(inst.module, inst.name, comment_text(inst.comment),
                                           inst.params, inst.localparams, inst.connections))
            n = res.name
            params = dict(inst.params)
            self.params[n] = params
        # the instance's board-side names are <name>_<port>; declare and drive them
        ports = {p.name: p for p in res.module.ports(**{k: v for k, v in params.items()})}
        if not res.shares:
            for port in ports.values():
                if port.role not in (CLOCK, CONFIG):
                    self.wire(port.width, f"{n}_{port.name}")
        if res.part is not None:
            for k, (field, _) in enumerate(res.cfg):
                name = res.part.inputs[field]
                width = ports[field].width
                self.wire(width, f"{n}_{name}")
                self.assigns.append(f"{n}_{name} = {q}_cfg[{k * 48} +: {width}]")
        for stream in res.module.streams:
            movers = [(k, m) for k, m in enumerate(res.outs if not stream.sink else res.ins)
                      if m.stream == stream.name]
            if not movers:  # the stream of the engine's other sequencer
                continue
            tag = "i" if stream.sink else "o"
            names = [f"{q}_{tag}{k}" for k, _ in movers]
            if stream.sink:
                every = " && ".join(f"{p}_valid" for p in names)
                self.assigns.append(f"{n}_{stream.name}_valid = {every}")
                for (_, m), p in zip(movers, names, strict=True):
                    others = [f"{o}_valid" for o in names if o != p]
                    self.assigns.append(f"{p}_ready = {n}_{stream.name}_ready"
                                        + "".join(f" && {o}" for o in others))
                    target = f"{n}_{stream.name}_{m.side or 'data'}"
                    width = ports[target[len(n) + 1:]].width
                    self.assigns.append(f"{target} = {p}_data[{width - 1}:0]")
                    if m.last:
                        self.assigns.append(f"{n}_{stream.name}_last = {p}_last")
            else:
                every = " && ".join(f"{p}_ready" for p in names)
                self.assigns.append(f"{n}_{stream.name}_ready = {every}")
                for (_, m), p in zip(movers, names, strict=True):
                    others = [f"{o}_ready" for o in names if o != p]
                    self.assigns.append(f"{p}_valid = {n}_{stream.name}_valid"
                                        + "".join(f" && {o}" for o in others))
                    src = f"{n}_{stream.name}_{m.side or 'data'}"
                    width = ports[src[len(n) + 1:]].width
                    # data sign-extended into the store word, side signals zero-extended
                    ext = (f"{WORD_BITS}'($signed({src}))" if not m.side
                           else f"{WORD_BITS}'({src})")
                    self.assigns.append(f"{p}_data = {ext}" if width < WORD_BITS
                                        else f"{p}_data = {src}")
                    last = f"{n}_{stream.name}_last" if stream.last is not None else "1'b0"
                    self.assigns.append(f"{p}_last = {last}")
        for ctl in ("start", "flush"):
            if getattr(res, ctl):
                self.assigns.append(f"{n}_{ctl} = {q}_{ctl}")
        if "seed_step" in ports:  # Dropout's masks follow the training step the host sets
            self.assigns.append(f"{n}_seed_step = csr_draw_step")
        self.assigns.append(f"{q}_done = {n}_done" if res.done else f"{q}_done = 1'b0")
        if res.shares:
            return
        if "busy" in ports:
            self.busy.append(f"{n}_busy")
        if "err_frame" in ports:
            self.frame.append(f"{n}_err_frame")

    def link(self, q: str, res: Resource) -> None:
        """Link framing towards one neighbour and the gearbox between its link words and the
        board's link port beats."""
        side = res.name.split("_")[0]
        dw = self.d.data_width
        word = link_word_bits(dw)
        gear = (("WW", word), ("TW", self.d.link_bits))
        self.assigns.append(f"{q}_done = 1'b0")
        if res.module is LINK_TX:
            p = f"{q}_i0"
            for width, name in ((dw, "s_data"), (1, "s_last"), (1, "s_valid"), (1, "s_ready"),
                                (word, "tx_data"), (1, "tx_valid"), (1, "tx_ready")):
                self.wire(width, f"{side}_{name}")
            self.assigns += [f"{side}_s_data = {p}_data[{dw - 1}:0]",
                             f"{side}_s_last = {p}_last", f"{side}_s_valid = {p}_valid",
                             f"{p}_ready = {side}_s_ready"]
            port = f"{side}_beat"
            # a link word is {channel, last, data}: its last flag ends the gearbox's packet
            self.instances.append(Instance(
                LINK_PACK.name, f"u_{side}_pack", "link words into link beats", gear, (),
                (("clk", "clk"), ("rst", "rst"), ("s_data", f"{side}_tx_data"),
                 ("s_last", f"{side}_tx_data[{dw}]"), ("s_valid", f"{side}_tx_valid"),
                 ("s_ready", f"{side}_tx_ready"), ("m_data", f"{port}_data"),
                 ("m_keep", f"{port}_keep"), ("m_last", f"{port}_last"),
                 ("m_valid", f"{port}_valid"), ("m_ready", f"{port}_ready"))))
        else:
            p = f"{q}_o0"
            for width, name in ((dw, "m_data"), (1, "m_last"), (1, "m_valid"), (1, "m_ready"),
                                (word, "rx_data"), (1, "rx_end"), (1, "rx_valid"),
                                (1, "rx_ready")):
                self.wire(width, f"{side}_{name}")
            # a link word is an element, sign-extended, or a part the mover joins into one
            self.assigns += [f"{p}_data = {WORD_BITS}'($signed({side}_m_data))",
                             f"{p}_last = {side}_m_last", f"{p}_valid = {side}_m_valid",
                             f"{side}_m_ready = {p}_ready"]
            port = f"{side}_got"
            # the framing's last flags end each packet; the gearbox's own (rx_end) is unread
            self.instances.append(Instance(
                LINK_UNPACK.name, f"u_{side}_unpack", "link beats into link words", gear, (),
                (("clk", "clk"), ("rst", "rst"), ("s_data", f"{port}_data"),
                 ("s_keep", f"{port}_keep"), ("s_last", f"{port}_last"),
                 ("s_valid", f"{port}_valid"), ("s_ready", f"{port}_ready"),
                 ("m_data", f"{side}_rx_data"), ("m_last", f"{side}_rx_end"),
                 ("m_valid", f"{side}_rx_valid"), ("m_ready", f"{side}_rx_ready"))))
        suffix = "tx" if res.module is LINK_TX else "rx"
        self.instances += [inst for inst in link_instances(side, dw)
                           if inst.name == f"u_{side}_{suffix}"]
        if res.module is LINK_RX:  # once per side: the reliable link between gearboxes and port
            self.link_end(side, word)

    def link_end(self, side: str, word: int) -> None:
        """The side's reliable link end; the link ports carry no keep (fpdeep_link_keep
        rebuilds it) and the end's tag is unused."""
        beat = self.d.link_bits
        west = self.board.index if side == "east" else self.board.index - 1
        lk = next(lk for lk in self.d.links if lk.west == west)
        for width, name in ((beat, "beat_data"), (beat // 8, "beat_keep"), (1, "beat_last"),
                            (1, "beat_valid"), (1, "beat_ready"), (beat, "got_data"),
                            (beat // 8, "got_keep"), (1, "got_tag"), (1, "got_last"),
                            (1, "got_valid"), (1, "got_ready"),
                            *((32, c) for c in LINK_COUNTERS), (32, "rx_discards"),
                            *((1, f) for f in LINK_FLAGS)):
            self.wire(width, f"{side}_{name}")
        self.assigns.append(f"m_axis_{side}_tkeep = '1")
        self.unread_ports.append(f"s_axis_{side}_tkeep")
        self.link_faults.append(f"{side}_stuck || {side}_overflow")
        self.instances += link_end_instances(side, lk, word=word, beat=beat,
                                             dw=self.d.data_width)


    def host(self) -> None:
        c, w = len(self.rd_clients), len(self.wr_clients)
        self.rd_clients.append("host")
        self.wr_clients.append("host")
        for width, name in ((1, "prog_we"), (8, "prog_res"), (self.host_pd.bit_length() - 1,
                                                             "prog_addr"),
                            (64, "prog_data"), (len(self.layout.banks), "written"),
                            (self.nres, "programmed"), (1, "host_fault"), (8, "host_code")):
            self.wire(width, name)
        self.instances.append(Instance(
            "fpdeep_host", "u_host", "host packets: store writes and reads, programs",
            (("NB", len(self.layout.banks)), ("NRES", self.nres), ("PD", self.host_pd),
             ("DEPTHS", self.depths()), ("PDS", _vec(list(self.pd), 32)),
             ("DRAM", int(bool(self.board.dram_bits)))), (),
            (("clk", "clk"), ("rst", "rst_hard"),
             *((f"s_axis_{x}", f"s_axis_host_{x}") for x in ("tdata", "tvalid", "tready",
                                                             "tlast")),
             *((f"m_axis_{x}", f"m_axis_host_{x}") for x in ("tdata", "tvalid", "tready",
                                                             "tlast")),
             *self.client("wr", w), *self.client("rd", c),
             ("prog_we", "prog_we"), ("prog_res", "prog_res"), ("prog_addr", "prog_addr"),
             ("prog_data", "prog_data"), ("written", "written"), ("programmed", "programmed"),
             ("fault", "host_fault"), ("fault_code", "host_code"),
             *((f"mem_{name}", f"host_mem_{name}") for name in (
                 "rd_cmd", "wr_cmd", "addr", "slot", "len", "wr_busy", "rd_data", "rd_last",
                 "rd_valid", "rd_ready", "wr_data", "wr_last", "wr_valid", "wr_ready")))))
        for width, name in ((1, "rd_cmd"), (1, "wr_cmd"), (MEM_ADDRESS_BITS, "addr"), (2, "slot"),
                            (WORD_LENGTH_BITS, "len"), (1, "wr_busy"), (WORD_BITS, "rd_data"),
                            (1, "rd_last"), (1, "rd_valid"), (1, "rd_ready"),
                            (WORD_BITS, "wr_data"), (1, "wr_last"), (1, "wr_valid"),
                            (1, "wr_ready")):
            self.wire(width, f"host_mem_{name}")
        if not self.board.dram_bits:
            self.assigns += [f"host_mem_{name} = '0" for name in (
                "wr_busy", "rd_data", "rd_last", "rd_valid", "wr_ready")]
            return
        for kind in ("rd", "wr"):
            mem = f"host_mem_{kind}"
            if kind == "rd":
                ports = (("cmd_chain", "1'b0"), ("busy", f"{mem}_busy"),
                         ("m_data", f"{mem}_data"), ("m_last", f"{mem}_last"),
                         ("m_valid", f"{mem}_valid"), ("m_ready", f"{mem}_ready"))
                self.wire(1, f"{mem}_busy")
            else:
                ports = (("busy", f"{mem}_busy"), ("err_last", f"{mem}_err"),
                         ("s_data", f"{mem}_data"), ("s_last", f"{mem}_last"),
                         ("s_valid", f"{mem}_valid"), ("s_ready", f"{mem}_ready"))
                self.wire(1, f"{mem}_err")
            self.wire(1, f"{mem}_moved")
            self.memory_unit(
                kind, mem, f"the host's {'reads' if kind == 'rd' else 'writes'} of off-chip "
                "memory", "rst_hard",
                (("cmd_valid", f"{mem}_cmd"), ("cmd_addr", f"{DRAM_ADDRESS_BITS}'(host_mem_addr)"),
                 ("cmd_slot", "host_mem_slot"), ("cmd_len", "host_mem_len"),
                 ("cmd_parts", "2'd0"), *ports))

    def memory_parameters(self) -> tuple[tuple[str, int], ...]:
        return (("DW", self.board.dram_bits), ("AWD", DRAM_ADDRESS_BITS),
                ("BURST", DRAM_BURST_BEATS))

    def memory_client(self, kind: str, c: int) -> tuple[tuple[str, str], ...]:
        """The connections of memory port client ``c``: a reader's (``rd``: AR and R) or a
        writer's (``wr``: AW, W and B)."""
        return tuple((name, f"mem_{name}[{c * width} +: {width}]" if width > 1
                      else f"mem_{name}[{c}]") for name, width in self.memory_signals(kind))

    def memory_signals(self, kind: str) -> list[tuple[str, int]]:
        """(name, bits) of each signal of one memory port client of ``kind``, as the port
        declares them."""
        channels = ("ar_", "r_") if kind == "rd" else ("aw_", "w_", "b_")
        ports = DRAM_PORT.ports(NR=1, NW=1, DW=self.board.dram_bits, AWD=DRAM_ADDRESS_BITS,
                                IDW=DRAM_ID_BITS)
        return [(p.name, p.width) for p in ports if p.name.startswith(channels)]

    def memory_port(self) -> None:
        """The memory port: every reader and writer of off-chip memory on the board's AXI4
        master ``m_axi_dram``."""
        dw = self.board.dram_bits
        nr, nw = len(self.memory_clients["rd"]), len(self.memory_clients["wr"])
        for kind, n in (("rd", nr), ("wr", nw)):
            for name, width in self.memory_signals(kind):
                self.wire(n * width, f"mem_{name}")
        if max(nr, nw) > 1 << DRAM_ID_BITS:
            raise FpdeepError(f"board {self.board.index}: {max(nr, nw)} off-chip memory "
                              f"movers, more than {DRAM_ID_BITS}-bit AXI IDs tell apart")
        axi = [p.name[len(DRAM_PREFIX) + 1:] for p in axi_master(DRAM_PREFIX, dw,
                                                                 DRAM_ADDRESS_BITS)]
        self.instances.append(Instance(
            "fpdeep_dram_port", "u_mem_port",
            f"off-chip memory: {nr} reader(s) and {nw} writer(s) on m_axi_dram",
            (("NR", nr), ("NW", nw), ("DW", dw), ("AWD", DRAM_ADDRESS_BITS),
             ("IDW", DRAM_ID_BITS)), (),
            (("clk", "clk"), ("rst", "rst"),
             *((name, f"mem_{name}")
               for kind in ("rd", "wr") for name, _ in self.memory_signals(kind)),
             *((f"m_axi_{name}", f"{DRAM_PREFIX}_{name}") for name in axi))))

    def depths(self) -> str:
        return _vec([bank.depth for bank in self.layout.banks], 32)

    def store(self) -> None:
        nr, nw = len(self.rd_clients), len(self.wr_clients)
        for width, name in ((nr, "st_rd_req"), (nr * BANK_BITS, "st_rd_bank"),
                            (nr * BANK_ADDRESS_BITS, "st_rd_addr"), (nr, "st_rd_gnt"),
                            (nr, "st_rd_valid"), (nr * WORD_BITS, "st_rd_data"),
                            (nw, "st_wr_req"), (nw * BANK_BITS, "st_wr_bank"),
                            (nw * BANK_ADDRESS_BITS, "st_wr_addr"), (nw * WORD_BITS, "st_wr_data"),
                            (nw, "st_wr_gnt")):
            self.wire(width, name)
        self.instances.append(Instance(
            "fpdeep_store", "u_store",
            "tensor store: " + ", ".join(
                f"bank {k} {comment_text(bank.item)} ({bank.depth} x {bank.width} bits"
                + (f", {bank.copies} read ports)" if bank.copies > 1 else ")")
                for k, bank in enumerate(self.layout.banks)),
            (("NB", len(self.layout.banks)), ("NR", nr), ("NW", nw), ("DEPTHS", self.depths()),
             ("WIDTHS", _vec([bank.width for bank in self.layout.banks], BANK_WIDTH_BITS)),
             ("READS", _vec([bank.copies for bank in self.layout.banks], 2))),
            (),
            (("clk", "clk"), ("rst", "rst"), *((s, f"st_{s}") for s in (
                "rd_req", "rd_bank", "rd_addr", "rd_gnt", "rd_valid", "rd_data", "wr_req",
                "wr_bank", "wr_addr", "wr_data", "wr_gnt")))))

    def control(self) -> None:
        nb = len(self.layout.banks)
        required = sum(1 << k for k, bank in enumerate(self.layout.banks)
                       if bank.item.startswith(("w:", "b:", "exp", "table:", "zero")))
        for width, name in ((1, "go"), (1, "mode"), (1, "cancel"), (1, "csr_start"),
                            (1, "csr_soft_reset"), (1, "csr_mode"), (16, "csr_batch"),
                            (32, "csr_draw_step"), (16, "csr_link_frame"), (2, "state"),
                            (8, "error_code"),
                            (32, "step_count"), (64, "cycle_count"), (16, "stalled_unit"),
                            (self.nres * 32, "busy_count"), (self.nres * 32, "stall_count"),
                            (self.nres * 32, "window_count"), (1, "progress"),
                            (1, "frame_error"), (1, "link_fault"), (1, "memory_fault")):
            self.wire(width, name)
        self.assigns.append("progress = " + " || ".join(self.moved + self.busy or ["1'b0"]))
        self.assigns.append("frame_error = " + " || ".join(self.frame or ["1'b0"]))
        self.assigns.append("link_fault = " + " || ".join(self.link_faults or ["1'b0"]))
        self.assigns.append("memory_fault = " + " || ".join(self.memory_faults or ["1'b0"]))
        self.instances.append(Instance(
            "fpdeep_board_ctl", "u_ctl", "step control, counters, watchdog",
            (("NRES", self.nres), ("NB", nb), ("REQUIRED", f"{nb}'h{required:x}"),
             ("WATCHDOG", self.watchdog)), (),
            (("clk", "clk"), ("rst", "rst"), ("start", "csr_start"), ("mode_in", "csr_mode"),
             ("go", "go"), ("mode", "mode"), ("cancel", "cancel"), ("written", "written"),
             ("programmed", "programmed"), ("finished", "finished"), ("waiting", "waiting"),
             ("running", "running"), ("active", "active"), ("progress", "progress"),
             ("frame_error", "frame_error"), ("link_fault", "link_fault"),
             ("memory_fault", "memory_fault"),
             ("host_fault", "host_fault"), ("host_code", "host_code"), ("state", "state"),
             ("error_code", "error_code"), ("step_count", "step_count"),
             ("cycle_count", "cycle_count"), ("stalled_unit", "stalled_unit"),
             ("busy_count", "busy_count"), ("stall_count", "stall_count"),
             ("window_count", "window_count"))))
        axil = [s.name for s in axi_lite_slave("s_axil", CSR.params["ADDR_W"])]
        self.instances.append(Instance(
            CSR.name, "u_csr", "control and status registers", (("N", self.nres),
                                                                ("DESIGN_HASH",
                                                                 f"32'h{design_hash(self.d):08x}")),
            (), (("clk", "clk"), ("rst_n", "rst_n"), *((s, s) for s in axil),
                 ("start", "csr_start"), ("soft_reset", "csr_soft_reset"), ("mode", "csr_mode"),
                 ("batch", "csr_batch"), ("draw_step", "csr_draw_step"),
                 ("link_frame", "csr_link_frame"), ("state", "state"),
                 ("error_code", "error_code"), ("step_count", "step_count"),
                 ("cycle_count", "cycle_count"), ("stalled_unit", "stalled_unit"),
                 *self.link_status(), ("busy_count", "busy_count"),
                 ("stall_count", "stall_count"), ("window_count", "window_count"))))

    def link_status(self) -> list[tuple[str, str]]:
        """The CSR's link counters and flags: a side's link end's, zero without a neighbour."""
        linked = {name.split("_")[0] for _, name in self.wires if name.endswith("_got_data")}
        return [(f"{side}_{name}", f"{side}_{name}" if side in linked else f"{width}'d0")
                for side in SIDES
                for width, name in (*((32, c) for c in LINK_COUNTERS),
                                    *((1, f) for f in LINK_FLAGS))]


def cluster_values(d: Design, memory_bytes: Sequence[int] = ()) -> dict[str, Any]:
    """What `templates/cluster_top.sv.j2` prints: every board with its top ports prefixed
    b<index>_, the link ports between neighbours wired through simulation link channels that
    carry the reliable link's words and last flags (the boards send no keep), and each
    board's off-chip memory master on a memory model of ``memory_bytes[board]`` bytes."""
    models = []
    for lk in d.links:
        for src, side, dst, other in ((lk.west, "east", lk.west + 1, "west"),
                                      (lk.west + 1, "west", lk.west, "east")):
            q = f"link_{src}_{dst}"
            values = {"cfg_latency": lk.latency, "cfg_num": lk.num, "cfg_den": lk.den}
            mports = LINK_CHANNEL.ports(W=d.link_bits, DEPTH=LINK_MODEL_DEPTH)
            consts = tuple((f"{q}_{p.name}".upper(), p.width, literal(values[p.name], p.width))
                           for p in mports if p.name in values)
            # each channel its own error sequence from the host's seed
            faults = {"cfg_seed": f"link_seed ^ 32'h{_channel_salt(len(models)):08x}",
                      "cfg_ber": "link_ber", "cfg_drop": "link_drop"}
            a, b = f"b{src}_m_axis_{side}", f"b{dst}_s_axis_{other}"
            conns = (("clk", "clk"), ("rst", "rst"),
                     *((p.name, f"{q}_{p.name}".upper()) for p in mports if p.name in values),
                     *faults.items(),
                     ("s_data", f"{a}_tdata"), ("s_last", f"{a}_tlast"),
                     ("s_valid", f"{a}_tvalid"), ("s_ready", f"{a}_tready"),
                     ("m_data", f"{b}_tdata"), ("m_last", f"{b}_tlast"),
                     ("m_valid", f"{b}_tvalid"), ("m_ready", f"{b}_tready"),
                     ("corrupted", f"{q}_corrupted"), ("dropped", f"{q}_dropped"))
            models.append({"inst": Instance(
                LINK_CHANNEL.name, f"u_{q}",
                f"link board {src} -> board {dst}: {lk.num} beat(s) of {d.link_bits} bits per "
                f"{lk.den} cycle(s), {lk.latency} cycles latency",
                (("W", d.link_bits), ("DEPTH", LINK_MODEL_DEPTH)), consts, conns), "dst": b,
                "counts": (f"{q}_corrupted", f"{q}_dropped"), "keep": f"{a}_tkeep"})
    linked = {m["dst"] for m in models}
    ports = top_ports(d)
    boards: list[dict[str, Any]] = []
    memories: list[Instance] = []
    for b in d.boards:
        own = top_ports(d, b)
        memory = [p for p in own if p.name.startswith(DRAM_PREFIX)]
        external = [p for p in own if "_axis_east" not in p.name and "_axis_west" not in p.name
                    and p.name not in ("clk", "rst_n") and p not in memory]
        links = [p for p in ports if "_axis_east" in p.name or "_axis_west" in p.name]
        boards.append({"index": b.index, "module": b.module, "external": external,
                       "links": links + memory})
        if memory:
            memories.append(_memory_model(b, memory_bytes[b.index]))
    # what the cluster leaves unread: the link outputs of the chain's ends, the channels'
    # counts of their faults (the boards' CSR counters report the link), the keep flags
    unread = [name for m in models for name in (*m["counts"], m["keep"])]
    for b in d.boards:
        for side in SIDES:
            m, s = f"b{b.index}_m_axis_{side}", f"b{b.index}_s_axis_{side}"
            if s not in linked:
                unread += [f"{m}_tdata", f"{m}_tkeep", f"{m}_tvalid", f"{m}_tlast",
                           f"{s}_tready"]
    return {"model": comment_text(d.model), "boards": boards, "models": models,
            "memories": memories, "linked": sorted(linked), "unread": unread}


def _memory_model(b: BoardDesign, size: int) -> Instance:
    """Board ``b``'s off-chip memory in simulation: ``size`` bytes (at least a burst) with the
    board file's latency and bandwidth."""
    size = max(size, DRAM_BURST_BEATS * b.dram_bits // 8)
    prefix = f"b{b.index}_{DRAM_PREFIX}"
    axi = [p.name[len(DRAM_PREFIX) + 1:] for p in axi_master(DRAM_PREFIX, b.dram_bits,
                                                             DRAM_ADDRESS_BITS)]
    return Instance(
        MEM_MODEL.name, f"u_memory_{b.index}",
        f"board {b.index}'s off-chip memory: {size:,} bytes, {b.dram_latency} cycles latency, "
        f"{b.dram_num} beat(s) of {b.dram_bits} bits per {b.dram_den} cycle(s)",
        (("DW", b.dram_bits), ("IDW", DRAM_ID_BITS), ("AWD", DRAM_ADDRESS_BITS),
         ("BYTES", size), ("LATENCY", b.dram_latency), ("NUM", b.dram_num),
         ("DEN", b.dram_den)), (),
        (("clk", "clk"), ("rst", "rst"),
         *((f"s_axi_{name}", f"{prefix}_{name}") for name in axi)))


def _channel_salt(k: int) -> int:
    """A different 32-bit constant for each link channel ``k`` (the golden ratio's bits)."""
    return (k * 0x9E3779B9) & 0xFFFFFFFF
