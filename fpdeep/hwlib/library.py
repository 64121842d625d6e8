"""Every module of ``hw/``: its component folder, what it instantiates, and its interface.

These are the RTL's facts written once. `fpdeep build` copies the modules from their folders,
the file lists follow `compile_order`, codegen makes the board ports and instances from the
interfaces, the testbenches drive the declared streams, and hw/README.md lists them
(``python -m fpdeep.hwlib``). ``tests/hw/test_hw_interfaces.py`` compares every declaration
with the module's ports as Verilator reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from fpdeep.errors import FpdeepError
from fpdeep.hwlib.signature import (
    CLOCK,
    CLOCKED,
    CONTROL,
    DATA,
    IN,
    OUT,
    READY,
    VALID,
    Module,
    Signal,
    Width,
    axi_lite_slave,
    axi_master,
    axi_stream,
    config,
    sink,
    source,
)
from fpdeep.numerics import ACC_WIDTH

#: Requantisation shifts are 7-bit two's complement everywhere: the SW parameter of the
#: modules that have one, and the width of the shift fields of those that do not.
SHIFT_WIDTH = 7

#: The component folders of hw/, in the order the docs list them.
FOLDERS: Mapping[str, str] = MappingProxyType({
    "common": "stream plumbing, memories, the requantiser and the loop nest, shared by all",
    "engine": "the Conv/FC loop-nest engine and its MAC array and tensor walkers",
    "pool": "the pooling engine",
    "eltwise": "element-wise units: ReLU, Dropout, BatchNormalization (frozen and training), "
               "per-channel Scale and Bias, LRN, format conversion (Concat), residual add, "
               "error fan-out, partial sums",
    "loss": "the loss-gradient unit",
    "sgd": "the weight update",
    "link": "framing between neighbouring boards",
    "board": "the board's controller, tensor store, movers (to the store and to off-chip "
             "memory) and host interface",
    "csr": "the control and status registers on AXI4-Lite, generated from fpdeep_csr.rdl",
    "shell": "the vendor shell around a board top on a real board (reset synchroniser)",
    "sim_models": "simulation-only models (never part of a board)",
})


def _in(name: str, width: Width = 1, role: str = CONTROL) -> Signal:
    return Signal(name, IN, width, role)


def _out(name: str, width: Width = 1, role: str = CONTROL) -> Signal:
    return Signal(name, OUT, width, role)


SKID_BUFFER = Module(
    "fpdeep_skid_buffer", "common", "2-entry register slice cutting valid and ready paths",
    {"WIDTH": 16}, (*CLOCKED, sink("s", "WIDTH"), source("m", "WIDTH")))

STREAM_FIFO = Module(
    "fpdeep_stream_fifo", "common", "FIFO, any depth, first-word fall-through",
    {"WIDTH": 16, "DEPTH": 4},
    (*CLOCKED, sink("s", "WIDTH"), source("m", "WIDTH"),
     _out("count", "clog2(DEPTH+1)", DATA)))

SDP_RAM = Module(
    "fpdeep_sdp_ram", "common",
    "simple dual-port RAM, `RAM_STYLE` block/ultra/distributed/auto, optional output register",
    {"WIDTH": 16, "DEPTH": 1024, "RAM_STYLE": "auto", "OUT_REG": 0},
    (Signal("clk", IN, 1, CLOCK), _in("wr_en"), _in("wr_addr", "clog2(DEPTH)", DATA),
     _in("wr_data", "WIDTH", DATA), _in("rd_en"), _in("rd_addr", "clog2(DEPTH)", DATA),
     _out("rd_data", "WIDTH", DATA)))

REQUANT = Module(
    "fpdeep_requant", "common", "round half up, arithmetic shift (signed amount), saturate",
    {"IW": ACC_WIDTH, "OW": 16, "SW": SHIFT_WIDTH},
    (_in("x", "IW", DATA), _in("shift", "SW", DATA), _out("y", "OW", DATA)))

LOOP_NEST = Module(
    "fpdeep_loop_nest", "common",
    "nested counters plus affine quantities updated by adders only (host-computed jumps)",
    {"NL": 6, "NQ": 7, "CW": 16, "AW": 32},
    (*CLOCKED, _in("start"), _in("bound", "NL*CW", DATA), _in("init", "NQ*AW", DATA),
     _in("jump", "NQ*NL*AW", DATA), _out("active"), _out("last"), _out("q", "NQ*AW", DATA),
     _out("idx_o", "NL*CW", DATA)))

TENSOR_WALKER = Module(
    "fpdeep_tensor_walker", "engine",
    "C-order walk of a lane-banked tensor (bank, address) without dividers",
    {"CW": 16, "ADDR_W": 16},
    (*CLOCKED, _in("restart"), _in("step"), *(_in(n, "CW", DATA) for n in ("n1", "t1", "n2", "t2")),
     _in("p", "ADDR_W", DATA), _out("l1", "CW", DATA), _out("l2", "CW", DATA),
     _out("addr", "ADDR_W", DATA), _out("last")))

MAC_ARRAY = Module(
    "fpdeep_mac_array", "engine",
    "TM x TN signed multipliers (one DSP48E2 each) with row, column or no reduction, "
    "latency 3",
    {"TM": 2, "TN": 2, "DW": 16, "ACCW": ACC_WIDTH},
    (*CLOCKED, _in("in_valid"), _in("reduce", 2, DATA), _in("a", "TM*TN*DW", DATA),
     _in("b", "TM*TN*DW", DATA), _out("out_valid"), _out("sum", "TM*TN*ACCW", DATA)))

RESULT_LANE = Module(
    "fpdeep_result_lane", "engine",
    "one MAC lane's two result-bank halves: accumulate (with forwarding) and drain-and-clear",
    {"ACCW": ACC_WIDTH, "RD": 64, "RAW": 6, "BANKS": 1, "HALVES": 2, "RAM_STYLE": "auto"},
    (_in("clk", role=CLOCK), _in("asel"), _in("dsel"), _in("draining"), _in("drain_rd"),
     _in("drain_here"), _in("dla", "RAW", DATA), _in("rd6"), _in("ra6", "RAW", DATA),
     _in("wr7"), _in("ra7", "RAW", DATA), _in("sum7", "ACCW", DATA), _out("q0", "ACCW", DATA),
     _out("q1", "ACCW", DATA)),
    uses=("fpdeep_sdp_ram",))

ENGINE = Module(
    "fpdeep_engine", "engine",
    "unified Conv/FC loop-nest engine: FP / BP / WG, bias, bias gradient, mini-batch "
    "accumulation",
    {"TM": 2, "TN": 2, "DW": 16, "ACCW": ACC_WIDTH, "CW": 16, "AW": 32, "XD": 64, "WD": 64,
     "YD": 64, "RD": 64, "BD": 4, "MODE": 3, "HALVES": 2, "URAM": 0},
    (*CLOCKED,
     config("cfg_mode", 2), config("cfg_co", "CW"), config("cfg_ci", "CW"),
     config("cfg_h", "CW"), config("cfg_w", "CW"), config("cfg_bound", "7*CW"),
     config("cfg_init", "8*AW"), config("cfg_jump", "8*7*AW"),
     config("cfg_shift", SHIFT_WIDTH), config("cfg_raw", 1), config("cfg_hold", 1),
     config("cfg_bias", 1), config("cfg_bias_shift", 6),
     *(config(f"cfg_{w}", "5*CW") for w in ("ld_x", "ld_w", "ld_dy", "ld_b", "drain",
                                            "drain_b")),
     *(sink(f"s_{operand}", "DW") for operand in ("x", "w", "dy", "b")),
     _in("start"), _in("flush"), _out("busy"), _out("done"), _out("err_frame"),
     source("m", "ACCW")),
    uses=("fpdeep_sdp_ram", "fpdeep_tensor_walker", "fpdeep_loop_nest", "fpdeep_mac_array",
          "fpdeep_result_lane", "fpdeep_requant"))

POOL = Module(
    "fpdeep_pool", "pool", "MaxPool (argmax) / AveragePool / GAP, forward and backward",
    # KB: tap-index / count bits (Kh*Kw < 2^KB); MB: reciprocal-table entry bits
    {"DW": 16, "ACCW": ACC_WIDTH, "CW": 16, "AW": 32, "KB": 8, "MB": 24, "XD": 256, "YD": 64},
    (*CLOCKED,
     config("cfg_mode", 2), config("cfg_bound", "5*CW"), config("cfg_init", "5*AW"),
     config("cfg_jump", "5*5*AW"),
     *(config(f"cfg_{n}", "CW") for n in ("h", "w", "kh", "kw", "rlo", "rhi", "clo", "chi")),
     config("cfg_shift", SHIFT_WIDTH), config("cfg_in_count", "AW"),
     config("cfg_out_count", "AW"),
     sink("s_m", "MB", last=None), sink("s_x", "DW", side=(("arg", "KB"),)),
     _in("start"), _out("busy"), _out("done"), _out("err_frame"),
     source("m", "DW", side=(("arg", "KB"),))),
    uses=("fpdeep_sdp_ram", "fpdeep_loop_nest", "fpdeep_requant"))

RELU = Module(
    "fpdeep_relu", "eltwise", "ReLU forward and backward mask", {"DW": 16, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_bwd", 1), config("cfg_shift", "SW"), sink("s_x", "DW"),
     sink("s_e", "DW"), source("m", "DW")),
    uses=("fpdeep_requant",))

CONVERT = Module(
    "fpdeep_convert", "eltwise", "a stream converted to another format (Concat's passes)",
    {"DW": 16, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_shift", "SW"), sink("s", "DW"), source("m", "DW")),
    uses=("fpdeep_requant",))

DROPOUT = Module(
    "fpdeep_dropout", "eltwise",
    "Dropout: the golden model's LFSR keep mask, scaled by 1/(1 - p); forward, backward, off",
    {"DW": 16, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_mult", 17), config("cfg_shift", "SW"), config("cfg_thresh", 17),
     config("cfg_seed_layer", 32), config("cfg_seed_image", 32), _in("seed_step", 32),
     sink("s_x", "DW"), source("m", "DW")),
    uses=("fpdeep_requant",))

CHANNEL_WORDS = Module(
    "fpdeep_channel_words", "eltwise",
    "the counters of per-channel words streamed ahead of each channel's elements",
    {"AW": 32, "KW": 3},
    (*CLOCKED, config("cfg_words", "KW"), config("cfg_plane", "AW"), _in("s_p_valid"),
     _out("s_p_ready"), _in("fire"), _out("loading"), _out("take"), _out("index", "KW", DATA),
     _out("ends")))

BN_FROZEN = Module(
    "fpdeep_bn_frozen", "eltwise",
    "frozen BatchNormalization: the per-channel affine of the running statistics, forward and "
    "backward, its constants streamed ahead of each channel",
    # PW: constant-word bits (a store word)
    {"DW": 16, "PW": ACC_WIDTH, "AW": 32, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_bwd", 1), config("cfg_plane", "AW"), config("cfg_yshift", "SW"),
     sink("s_p", "PW", last=None), sink("s_x", "DW"), source("m", "DW")),
    uses=("fpdeep_channel_words", "fpdeep_requant"))

BN_TRAIN = Module(
    "fpdeep_bn_train", "eltwise",
    "BatchNormalization in training mode: batch statistics and reciprocal square root, the "
    "running statistics' update, forward, gradient sums and input error, in passes over the "
    "batch with per-channel state kept between them",
    # CD: channels the per-channel memories hold; RW: bits of the r_* shifts; EW: epsilon bits
    {"DW": 16, "ACCW": ACC_WIDTH, "AW": 32, "SW": SHIFT_WIDTH, "CD": 64, "RW": 7, "EW": 32},
    (*CLOCKED, config("cfg_pass", 3), config("cfg_images", "AW"), config("cfg_channels", "AW"),
     config("cfg_plane", "AW"), config("cfg_mm", 17), config("cfg_rm", "RW"),
     config("cfg_mu", 17), config("cfg_ru", "RW"), config("cfg_mc", 17), config("cfg_rc", "RW"),
     config("cfg_eps", "EW"), config("cfg_yshift", "SW"), config("cfg_eshift", "SW"),
     sink("s_p", "ACCW", last=None), sink("s_x", "DW"), sink("s_e", "DW"), source("m", "DW"),
     source("m_g", "ACCW")),
    uses=("fpdeep_requant",))

AFFINE = Module(
    "fpdeep_affine", "eltwise",
    "trained per-channel Scale and Bias: forward, backward and the per-channel gradient sums, "
    "each channel's parameter (or accumulator) streamed ahead of it",
    # LW: the Bias forward's left shifts 0 .. 2^LW - 1
    {"DW": 16, "ACCW": ACC_WIDTH, "AW": 32, "SW": SHIFT_WIDTH, "LW": 5},
    (*CLOCKED, config("cfg_bias", 1), config("cfg_pass", 2), config("cfg_plane", "AW"),
     config("cfg_lx", "LW"), config("cfg_lp", "LW"), config("cfg_shift", "SW"),
     sink("s_p", "ACCW", last=None), sink("s_x", "DW"), sink("s_y", "DW"), source("m", "DW"),
     source("m_g", "ACCW")),
    uses=("fpdeep_channel_words", "fpdeep_requant"))

LRN_TABLE = Module(
    "fpdeep_lrn_table", "eltwise",
    "the LRN unit's log2 (EXP=0) and 2^u (EXP=1) tables, interpolated, generated from the "
    "golden model's (`python -m fpdeep.codegen.lrn_tables`)",
    {"EXP": 0},
    (_in("f", 16, DATA), _out("v", 17, DATA)))

LRN = Module(
    "fpdeep_lrn", "eltwise",
    "LRN across channels, forward and backward (the forward input streamed again), over rings "
    "of the last n planes",
    # NMAX: largest size (ring planes); PD: largest plane; CW: channel and plane counters;
    # KW: bits of K
    {"DW": 16, "NMAX": 5, "PD": 64, "CW": 16, "KW": 64, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_bwd", 1), config("cfg_channels", "CW"), config("cfg_plane", "CW"),
     config("cfg_size", 8), config("cfg_k", "KW"), config("cfg_ma", 17), config("cfg_dfrac", 8),
     config("cfg_mb", 17), config("cfg_rb", 6), config("cfg_mb1", 17), config("cfg_rb1", 6),
     config("cfg_mg", 17), config("cfg_rg", 8), config("cfg_xfrac2", 6),
     config("cfg_yshift", "SW"), config("cfg_dxshift", "SW"),
     sink("s_x", "DW"), sink("s_e", "DW"), source("m", "DW")),
    uses=("fpdeep_lrn_table", "fpdeep_requant"))

ADD = Module(
    "fpdeep_add", "eltwise", "residual add (aligned, one requantisation) and error fan-in",
    # LW: left shifts 0 .. 2^LW - 1
    {"DW": 16, "SW": SHIFT_WIDTH, "LW": 5},
    (*CLOCKED, config("cfg_la", "LW"), config("cfg_lb", "LW"), config("cfg_shift", "SW"),
     sink("s_a", "DW"), sink("s_b", "DW"), source("m", "DW")),
    uses=("fpdeep_requant",))

FANOUT = Module(
    "fpdeep_fanout", "eltwise", "error fan-out to two readers, each converted",
    {"DW": 16, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_shift_a", "SW"), config("cfg_shift_b", "SW"), sink("s", "DW"),
     source("m_a", "DW"), source("m_b", "DW")),
    uses=("fpdeep_requant",))

PSUM = Module(
    "fpdeep_psum", "eltwise",
    "sum of a split layer's raw partial input errors; the final pass requantises",
    {"DW": 16, "ACCW": ACC_WIDTH, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_final", 1), config("cfg_shift", "SW"), sink("s_a", "ACCW"),
     sink("s_b", "ACCW"), source("m", "ACCW")),
    uses=("fpdeep_requant",))

LOSS = Module(
    "fpdeep_loss", "loss",
    "loss gradient: fixed-point softmax cross-entropy and MSE; exp table streamed on `s_t`",
    # NMAX classes; LW label bits; DIVW divider width (one quotient bit per cycle)
    {"DW": 16, "NMAX": 16, "LW": 8, "DIVW": 48},
    (*CLOCKED, config("cfg_kind", 1), config("cfg_n", "LW"),
     config("cfg_ushift", SHIFT_WIDTH), config("cfg_fe", 6), config("cfg_fz", 6),
     config("cfg_mse_m", 17), config("cfg_mse_shift", SHIFT_WIDTH),
     sink("s_t", 17, last=None), sink("s_z", "DW", side=(("label", "LW"),)),
     source("m", "DW")),
    uses=("fpdeep_requant",))

SGD = Module(
    "fpdeep_sgd", "sgd", "batch mean of a gradient accumulator and the SGD step",
    # MW: mantissa bits of the 1/B and learning-rate constants
    {"DW": 16, "ACCW": ACC_WIDTH, "MW": 17, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_mb", "MW"), config("cfg_sb", "SW"), config("cfg_mlr", "MW"),
     config("cfg_slr", "SW"), sink("s_g", "ACCW"), sink("s_w", "DW"), source("m", "DW")),
    uses=("fpdeep_requant",))

SGD_MOMENTUM = Module(
    "fpdeep_sgd_momentum", "sgd",
    "batch mean of a gradient accumulator and the SGD step with momentum and weight decay, "
    "the velocity streamed in and out",
    # VW: velocity bits (the `vel` format); MW: mantissa bits of the scaling constants
    {"DW": 16, "ACCW": ACC_WIDTH, "VW": 24, "MW": 17, "SW": SHIFT_WIDTH},
    (*CLOCKED, config("cfg_mb", "MW"), config("cfg_sb", "SW"), config("cfg_sgv", "SW"),
     config("cfg_mwd", "MW"), config("cfg_swd", "SW"), config("cfg_mmu", "MW"),
     config("cfg_smu", "SW"), config("cfg_mlr", "MW"), config("cfg_slr", "SW"),
     sink("s_g", "ACCW"), sink("s_w", "DW"), sink("s_v", "VW"), source("m", "DW"),
     source("m_v", "VW")),
    uses=("fpdeep_requant",))

#: Channel-number bits of a link word, as fpdeep_link_tx/_rx compute their CHW.
_CHW = {"CHW": "max(clog2(NCH), 1)"}

LINK_TX = Module(
    "fpdeep_link_tx", "link",
    "packet framing of NCH streams over one link word `{channel, last, data}`",
    {"DW": 16, "NCH": 2},
    (*CLOCKED, sink("s", "NCH*DW", last="NCH", lanes="NCH"),
     source("m", "CHW+DW+1", last=None)),
    derived=_CHW)

LINK_RX = Module(
    "fpdeep_link_rx", "link", "the link word back into NCH streams (one data bus for all)",
    {"DW": 16, "NCH": 2},
    (sink("s", "CHW+DW+1", last=None), source("m", "DW", lanes="NCH")),
    derived=_CHW)

#: A link port beat's keep flags: one per byte of the beat.
_BEAT_SIDE = (("keep", "TW//8"),)

LINK_PACK = Module(
    "fpdeep_link_pack", "link",
    "gearbox: link words packed into the link port's beats, a partial beat at a packet's end",
    {"WW": 18, "TW": 128},
    (*CLOCKED, sink("s", "WW"), source("m", "TW", side=_BEAT_SIDE)),
    derived={"N": "TW//WW", "CW": "clog2(N+1)"})

LINK_UNPACK = Module(
    "fpdeep_link_unpack", "link", "gearbox: the link port's beats back into link words",
    {"WW": 18, "TW": 128},
    (*CLOCKED, sink("s", "TW", side=_BEAT_SIDE), source("m", "WW")),
    derived={"N": "TW//WW", "CW": "clog2(N+1)"})

LINK_KEEP = Module(
    "fpdeep_link_keep", "link",
    "a link port beat's keep flags from the last flags of its link words",
    {"WW": 18, "TW": 128, "LAST": 16},
    (_in("data", "TW", DATA), _out("keep", "TW//8", DATA)),
    derived={"N": "TW//WW"})

CRC32 = Module(
    "fpdeep_crc32", "link",
    "CRC-32 (IEEE 802.3, zlib's) register after one W-bit word, bytes little-endian",
    {"W": 64}, (_in("crc_in", 32, DATA), _in("data", "W", DATA), _out("crc_out", 32, DATA)))

#: The reliable link's parameters: link word, tag, sequence number bits, 2^FW frames in
#: flight, payload words a frame, replay and receive buffer words.
_RELIABLE = {"W": 64, "TAGW": 16, "SEQW": 8, "FW": 4, "MAXLEN": 64, "RD": 1024, "RXD": 1024}
_TIMERS = (config("cfg_timeout", 32), config("cfg_stuck", 32), config("cfg_refresh", 32))
_TAGGED = (("tag", "TAGW"),)


def _acknowledgements(port) -> tuple[Signal, ...]:
    """Between a link end's deframer and framer (``port``: _out on the deframer, _in on the
    framer): the peer's good control frame, and what to tell the peer."""
    return (port("peer_valid"), port("peer_nak"), port("peer_seq", "SEQW", DATA),
            port("peer_credit", 32, DATA), port("adv_ack"), port("adv_nak"),
            port("adv_seq", "SEQW", DATA), port("adv_credit", 32, DATA))


def _counters(*names: str) -> tuple[Signal, ...]:
    return tuple(_out(n, 32, DATA) for n in names)


LINK_FRAMER = Module(
    "fpdeep_link_framer", "link",
    "reliable link, sending: frames with sequence number and CRC-32, credits, go-back-N replay",
    {k: v for k, v in _RELIABLE.items() if k != "RXD"},
    (*CLOCKED, *_TIMERS, config("cfg_maxlen", 16), sink("s", "W", side=_TAGGED),
     source("m", "W"), *_acknowledgements(_in),
     *_counters("frames", "replays", "timeouts", "credit_stalls"), _out("stuck")),
    uses=("fpdeep_sdp_ram", "fpdeep_crc32"))

LINK_DEFRAMER = Module(
    "fpdeep_link_deframer", "link",
    "reliable link, receiving: CRC check, in-order frames kept, ACK / NAK / credit asked for",
    {k: v for k, v in _RELIABLE.items() if k not in ("FW", "RD")},
    (*CLOCKED, config("cfg_holdoff", 32), sink("s", "W"), source("m", "W", side=_TAGGED),
     *_acknowledgements(_out),
     *_counters("frames", "crc_errors", "discards"), _out("overflow")),
    uses=("fpdeep_sdp_ram", "fpdeep_crc32"))

LINK_END = Module(
    "fpdeep_link_end", "link",
    "one board's side of a reliable link: framer out on `tx`, deframer in on `rx`, counters",
    _RELIABLE,
    (*CLOCKED, *_TIMERS, config("cfg_holdoff", 32), config("cfg_maxlen", 16),
     sink("s", "W", side=_TAGGED), source("m", "W", side=_TAGGED), source("tx", "W"),
     sink("rx", "W"),
     *_counters("tx_frames", "tx_replays", "tx_timeouts", "tx_credit_stalls", "rx_frames",
                "rx_crc_errors", "rx_discards"), _out("stuck"), _out("overflow")),
    uses=("fpdeep_link_framer", "fpdeep_link_deframer"))

LINK_MODEL = Module(
    "fpdeep_link_model", "sim_models", "link latency and bandwidth (token bucket)",
    {"W": 18, "DEPTH": 256, "CW": 16},
    (*CLOCKED, config("cfg_latency", "CW"), config("cfg_num", "CW"), config("cfg_den", "CW"),
     sink("s", "W", last=None), source("m", "W", last=None)),
    sim_only=True)

MEM_MODEL = Module(
    "fpdeep_mem_model", "sim_models",
    "off-chip memory: an AXI4 slave with the board file's latency and bandwidth",
    {"DW": 64, "IDW": 1, "AWD": 64, "BYTES": 4096, "LATENCY": 25, "NUM": 1, "DEN": 1, "QD": 16},
    (*CLOCKED, *axi_master("s_axi", "DW", "AWD", "IDW", slave=True)),
    sim_only=True)

LINK_CHANNEL = Module(
    "fpdeep_link_channel", "sim_models",
    "a framed link with seeded bit errors and frame drops over `fpdeep_link_model`",
    {"W": 64, "DEPTH": 256, "CW": 16},
    (*CLOCKED, config("cfg_latency", "CW"), config("cfg_num", "CW"), config("cfg_den", "CW"),
     config("cfg_seed", 32), config("cfg_ber", 32), config("cfg_drop", 32),
     sink("s", "W"), source("m", "W"), *_counters("corrupted", "dropped")),
    uses=("fpdeep_link_model",), sim_only=True)

#: The active-low synchronous reset of the modules on a board top's ports.
_CLOCKED_N = (Signal("clk", IN, 1, CLOCK), Signal("rst_n", IN, 1, CLOCK))

AXIL_SLAVE = Module(
    "fpdeep_axil_slave", "csr",
    "AXI4-Lite slave handshake in front of a register file: one write and one read at a time",
    {"ADDR_W": 12},
    (*_CLOCKED_N, *axi_lite_slave("s_axil", "ADDR_W"),
     _out("wr_en"), _out("wr_word", "ADDR_W-2", DATA), _out("wr_data", 32, DATA),
     _out("wr_strb", 4, DATA), _in("wr_err"), _out("rd_word", "ADDR_W-2", DATA),
     _in("rd_data", 32, DATA), _in("rd_err")))

# Generated from hw/csr/fpdeep_csr.rdl by fpdeep.codegen.csr; its register-side ports are the
# ones the register map names (tests/hw/csr checks both this and the RTL against the map).
CSR = Module(
    "fpdeep_csr", "csr",
    "control and status registers (generated from fpdeep_csr.rdl): start, soft reset, mode, "
    "batch, Dropout's step, the links' frame length; status, step, cycle, busy, stall and "
    "window counters, stalled unit, the links' counters and flags",
    # N: counted engines and units; ADDR_W: byte address bits (the map needs 12)
    {"N": 1, "DESIGN_HASH": 0, "ADDR_W": 12},
    (*_CLOCKED_N, *axi_lite_slave("s_axil", "ADDR_W"),
     _out("start"), _out("soft_reset"), _out("mode"), _out("batch", 16, DATA),
     _in("state", 2, DATA), _in("error_code", 8, DATA), _in("step_count", 32, DATA),
     _in("cycle_count", 64, DATA), _in("stalled_unit", 16, DATA), _out("draw_step", 32, DATA),
     _out("link_frame", 16, DATA),
     *(_in(f"{side}_{name}", 32, DATA) for side in ("east", "west")
       for name in ("tx_frames", "tx_replays", "tx_timeouts", "tx_credit_stalls", "rx_frames",
                    "rx_crc_errors")),
     *(_in(f"{side}_{name}") for side in ("east", "west") for name in ("stuck", "overflow")),
     _in("busy_count", "N*32", DATA), _in("stall_count", "N*32", DATA),
     _in("window_count", "N*32", DATA)),
    uses=("fpdeep_axil_slave",))


# ---- the board's controller, tensor store, movers and host interface (hw/board/) ----------
#: Store-client and mover command fields: bank number, address in a bank, words (as
#: fpdeep.hwlib.protocol's instruction fields).
_STORE = {"WIDTH": 48, "BW": 8, "AW": 20}
_MOVE = {**_STORE, "LW": 24, "PW": 16}


def _read_client(prefix: str = "rd", into: str = IN) -> tuple[Signal, ...]:
    back = OUT if into == IN else IN
    return (Signal(f"{prefix}_req", back), Signal(f"{prefix}_bank", back, "BW", DATA),
            Signal(f"{prefix}_addr", back, "AW", DATA), Signal(f"{prefix}_gnt", into),
            Signal(f"{prefix}_valid", into), Signal(f"{prefix}_data", into, "WIDTH", DATA))


def _write_client(prefix: str = "wr") -> tuple[Signal, ...]:
    return (_out(f"{prefix}_req"), _out(f"{prefix}_bank", "BW", DATA),
            _out(f"{prefix}_addr", "AW", DATA), _out(f"{prefix}_data", "WIDTH", DATA),
            _in(f"{prefix}_gnt"))


STORE = Module(
    "fpdeep_store", "board",
    "the on-chip tensor store: NB banks of simple dual-port RAM, each as wide as what it "
    "holds, shared by NR read and NW write clients, round robin per bank",
    {"NB": 1, "NR": 1, "NW": 1, **_STORE, "DEPTHS": 1024, "WIDTHS": 48, "READS": 1},
    (*CLOCKED, _in("rd_req", "NR", DATA), _in("rd_bank", "NR*BW", DATA),
     _in("rd_addr", "NR*AW", DATA), _out("rd_gnt", "NR", DATA), _out("rd_valid", "NR", DATA),
     _out("rd_data", "NR*WIDTH", DATA), _in("wr_req", "NW", DATA),
     _in("wr_bank", "NW*BW", DATA), _in("wr_addr", "NW*AW", DATA),
     _in("wr_data", "NW*WIDTH", DATA), _out("wr_gnt", "NW", DATA)),
    uses=("fpdeep_sdp_ram",))

_COMMAND = (_in("cmd_valid"), _in("cmd_bank", "BW", DATA), _in("cmd_addr", "AW", DATA),
            _in("cmd_len", "LW", DATA))

MOVER_RD = Module(
    "fpdeep_mover_rd", "board", "store words out as a stream (a word as 1-3 beats for links)",
    _MOVE,
    (*CLOCKED, *_COMMAND, _in("cmd_hold"), _in("cmd_parts", 2, DATA), _in("cmd_chain"),
     _out("busy"), *(Signal(s.name, s.direction, s.width, s.role) for s in _read_client()),
     source("m", "WIDTH"), _out("moved")),
    uses=("fpdeep_stream_fifo",))

MOVER_WR = Module(
    "fpdeep_mover_wr", "board", "a stream into store words (1-3 beats joined into a word)",
    _MOVE,
    (*CLOCKED, *_COMMAND, _in("cmd_parts", 2, DATA), _out("busy"), _out("err_last"),
     *_write_client(), sink("s", "WIDTH"), _out("moved")))

#: Off-chip tensors: a word's slot in memory (2^slot bytes), AXI data and address bits, and
#: the most beats of a burst.
_DRAM = {"WIDTH": 48, "LW": 24, "PW": 16, "DW": 64, "AWD": 64, "BURST": 16}
_DRAM_COMMAND = (_in("cmd_valid"), _in("cmd_addr", "AWD", DATA), _in("cmd_slot", 2, DATA),
                 _in("cmd_len", "LW", DATA), _in("cmd_parts", 2, DATA))
_DRAM_READ = (("ar_valid", True, 1, VALID), ("ar_ready", False, 1, READY),
              ("ar_addr", True, "AWD", DATA), ("ar_len", True, 8, DATA),
              ("r_valid", False, 1, VALID), ("r_ready", True, 1, READY),
              ("r_data", False, "DW", DATA), ("r_resp", False, 2, DATA),
              ("r_last", False, 1, DATA))
_DRAM_WRITE = (("aw_valid", True, 1, VALID), ("aw_ready", False, 1, READY),
               ("aw_addr", True, "AWD", DATA), ("aw_len", True, 8, DATA),
               ("w_valid", True, 1, VALID), ("w_ready", False, 1, READY),
               ("w_data", True, "DW", DATA), ("w_strb", True, "DW//8", DATA),
               ("w_last", True, 1, DATA), ("b_valid", False, 1, VALID),
               ("b_ready", True, 1, READY), ("b_resp", False, 2, DATA))


def _dram_client(channels, clients: str | None = None) -> tuple[Signal, ...]:
    """A memory client's AXI4 channels (no ID, size or burst type): on the client, or with
    ``clients`` (``"NR"``) on the port, flattened as many times."""
    out = []
    for name, to_memory, width, role in channels:
        if clients is not None:
            width = clients if width == 1 else f"{clients}*{width}"
        out.append(Signal(name, OUT if to_memory == (clients is None) else IN, width, role))
    return tuple(out)


DRAM_RD = Module(
    "fpdeep_dram_rd", "board",
    "off-chip memory words out as a stream (a word as 1-3 beats), AXI4 bursts with room kept "
    "for all their beats", _DRAM,
    (*CLOCKED, *_DRAM_COMMAND, _in("cmd_chain"), _out("busy"), _out("err"),
     *_dram_client(_DRAM_READ), source("m", "WIDTH"), _out("moved")),
    uses=("fpdeep_stream_fifo",))

DRAM_WR = Module(
    "fpdeep_dram_wr", "board",
    "a stream into off-chip memory words (1-3 beats joined into a word), AXI4 bursts with "
    "byte strobes, each buffered before its address", _DRAM,
    (*CLOCKED, *_DRAM_COMMAND, _out("busy"), _out("err_last"), _out("err"),
     *_dram_client(_DRAM_WRITE), sink("s", "WIDTH"), _out("moved")),
    uses=("fpdeep_stream_fifo",))

DRAM_PORT = Module(
    "fpdeep_dram_port", "board",
    "NR off-chip readers and NW writers on one AXI4 master: ID per client, round robin per "
    "burst, W in AW order, skid buffers",
    {"NR": 1, "NW": 1, "DW": 64, "AWD": 64, "IDW": 1},
    (*CLOCKED, *_dram_client(_DRAM_READ, "NR"), *_dram_client(_DRAM_WRITE, "NW"),
     *axi_master("m_axi", "DW", "AWD", "IDW")),
    uses=("fpdeep_skid_buffer", "fpdeep_stream_fifo"))

SEQUENCER = Module(
    "fpdeep_sequencer", "board",
    "one resource's controller: runs its instruction stream (wait, movers, configuration, go)",
    {"NIN": 1, "NOUT": 1, "NCFG": 1, "CFGW": 48, "NRES": 1, "RW": 8, "CW": 32, "PD": 64,
     "FWD": 32, "BW": 8, "AW": 20, "LW": 24},
    (*CLOCKED, _in("go"), _in("mode"), _in("cancel"), _in("prog_we"),
     _in("prog_addr", "clog2(PD)", DATA), _in("prog_data", 64, DATA),
     _in("ended_all", "NRES*CW", DATA), _out("ended", "CW", DATA), _out("finished"),
     _out("waiting"), _out("running"), _out("in_cmd", "NIN", DATA),
     _out("out_cmd", "NOUT", DATA), _out("cmd_bank", "BW", DATA), _out("cmd_addr", "AW", DATA),
     _out("cmd_len", "LW", DATA), _out("cmd_hold"), _out("cmd_parts", 2, DATA),
     _out("cmd_chain"), _out("cmd_maddr", 48, DATA), _out("cmd_mslot", 2, DATA),
     _in("in_busy", "NIN", DATA), _in("out_busy", "NOUT", DATA),
     _out("cfg", "NCFG*CFGW", DATA), _out("start"), _out("flush"), _in("done")))

HOST = Module(
    "fpdeep_host", "board",
    "host packets: store writes and read-back, instruction loads, status responses, faults",
    {"NB": 1, "NRES": 1, "PD": 64, **_STORE, "LW": 24, "DEPTHS": 1024, "PDS": 64, "DRAM": 0},
    (*CLOCKED, *axi_stream("s_axis", 64, sink=True), *axi_stream("m_axis", 64, sink=False),
     *_write_client(), *_read_client(), _out("mem_rd_cmd"), _out("mem_wr_cmd"),
     _out("mem_addr", 48, DATA), _out("mem_slot", 2, DATA), _out("mem_len", "LW", DATA),
     _in("mem_wr_busy"), sink("mem_rd", "WIDTH"), source("mem_wr", "WIDTH"),
     _out("prog_we"), _out("prog_res", 8, DATA), _out("prog_addr", "clog2(PD)", DATA),
     _out("prog_data", 64, DATA), _out("written", "NB", DATA), _out("programmed", "NRES", DATA),
     _out("fault"), _out("fault_code", 8, DATA)),
    uses=("fpdeep_mover_rd",))

BOARD_CTL = Module(
    "fpdeep_board_ctl", "board",
    "step control: start checks, step end, counters, watchdog and error codes",
    {"NRES": 1, "NB": 1, "REQUIRED": 0, "WATCHDOG": 1 << 20},
    (*CLOCKED, _in("start"), _in("mode_in"), _out("go"), _out("mode"), _out("cancel"),
     _in("written", "NB", DATA), _in("programmed", "NRES", DATA),
     _in("finished", "NRES", DATA), _in("waiting", "NRES", DATA), _in("running", "NRES", DATA),
     _in("active", "NRES", DATA), _in("progress"), _in("frame_error"), _in("link_fault"),
     _in("memory_fault"),
     _in("host_fault"),
     _in("host_code", 8, DATA),
     _out("state", 2, DATA), _out("error_code", 8, DATA), _out("step_count", 32, DATA),
     _out("cycle_count", 64, DATA), _out("stalled_unit", 16, DATA),
     _out("busy_count", "NRES*32", DATA), _out("stall_count", "NRES*32", DATA),
     _out("window_count", "NRES*32", DATA)))

RESET_SYNC = Module(
    "fpdeep_reset_sync", "shell",
    "asynchronous reset request to an active-low reset released in step with the clock",
    {"STAGES": 4}, (_in("clk", role=CLOCK), _in("arst", role=CLOCK), _out("rst_n", role=CLOCK)))

#: Every module of hw/ by name, in the order the docs list them.
MODULES: Mapping[str, Module] = MappingProxyType({m.name: m for m in (
    SKID_BUFFER, STREAM_FIFO, SDP_RAM, REQUANT, LOOP_NEST, TENSOR_WALKER, MAC_ARRAY,
    RESULT_LANE, ENGINE,
    POOL, RELU, DROPOUT, CHANNEL_WORDS, BN_FROZEN, BN_TRAIN, AFFINE, LRN_TABLE, LRN, CONVERT,
    ADD, FANOUT, PSUM, LOSS, SGD, SGD_MOMENTUM,
    LINK_TX, LINK_RX, LINK_PACK, LINK_UNPACK, LINK_KEEP, CRC32, LINK_FRAMER, LINK_DEFRAMER,
    LINK_END, AXIL_SLAVE, CSR,
    STORE, MOVER_RD, MOVER_WR, DRAM_RD, DRAM_WR, DRAM_PORT, SEQUENCER, HOST, BOARD_CTL,
    RESET_SYNC, LINK_MODEL, LINK_CHANNEL, MEM_MODEL)})


def module(name: str) -> Module:
    """The declaration of hw module ``name``; FpdeepError listing the known ones."""
    found = MODULES.get(name)
    if found is None:
        raise FpdeepError(f"hw module {name!r} does not exist; known modules: "
                          f"{', '.join(sorted(MODULES))}.")
    return found


def compile_order(names: Iterable[str]) -> tuple[Module, ...]:
    """The modules ``names`` and everything they instantiate, each once, every module after
    the ones it uses (and otherwise in the order given)."""
    order: dict[str, Module] = {}

    def visit(name: str) -> None:
        if name not in order:
            m = module(name)
            for used in m.uses:
                visit(used)
            order[name] = m

    for name in names:
        visit(name)
    return tuple(order.values())
