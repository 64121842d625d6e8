"""Off-chip memory (issue 14): which items a board keeps in DRAM and where, the instructions
that reach them, the cycles the model gives them, and the refusals of bad options and board
files. The bit-exact runs are in tests/test_cosim.py."""

from __future__ import annotations

import pytest

import fpdeep
from fpdeep.cli import main
from fpdeep.codegen.layout import DRAM_IMAGE_ALIGN, DRAM_ITEM_ALIGN, TaskWork, board_layouts
from fpdeep.codegen.program import bursts, compile_step, instruction_cycles, memory_cycles
from fpdeep.design.lower import lower
from fpdeep.errors import FpdeepError
from fpdeep.hwlib.protocol import DRAM_BANK, INSTRUCTIONS, OPS, op_mem
from fpdeep.planning.boards import load_board_file, parse_board
from fpdeep.planning.store import OFF_CHIP
from fpdeep.resources import PACKAGE_DIR
from fpdeep.schedule.tasks import schedule

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
ZCU102 = PACKAGE_DIR / "planning" / "boards" / "zcu102.toml"


def _design(kinds, boards: int = 1, board="zcu102"):
    network = fpdeep.load_onnx(DIGITS)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board=board, boards=boards), batch=2)
    return network, lower(network, plan, off_chip=kinds)


def test_the_kinds_asked_for_go_off_chip_and_held_words_stay():
    network, d = _design(("weights", "grads", "stash"))
    (layout,) = board_layouts(d, network, batch=2)
    prefixes = tuple(p for kind in OFF_CHIP.values() for p in kind)
    assert set(layout.dram) == {k for k in layout.dram if k.startswith(prefixes)}
    assert {"w:conv1_c0_4", "acc:fc_c0_10", "act:conv1", "err:logits"} <= set(layout.dram)
    # the zero word and the labels are read as one word again and again: on chip, as the
    # loss unit's exp table
    on_chip = {bank.item for bank in layout.banks}
    assert {"zero", "label", "exp"} <= on_chip and not on_chip & set(layout.dram)
    # 16-bit data in 2-byte words, 48-bit sums in 8-byte words
    assert layout.dram["act:conv1"].slot == 1 and layout.dram["acc:fc_c0_10"].slot == 3
    regions = sorted(layout.dram.values(), key=lambda r: r.base)
    for r, after in zip(regions, regions[1:], strict=False):
        assert r.base % DRAM_ITEM_ALIGN == 0 and r.stride % DRAM_IMAGE_ALIGN == 0
        assert r.end(layout.batch) <= after.base
        assert r.stride >= r.words << r.slot
    assert layout.dram_bytes == regions[-1].end(2) and layout.store.off_chip_bits > 0
    assert layout.dram_movers  # every engine's weight mover at least


def test_only_weights_leave_with_off_chip_weights():
    network, d = _design(("weights",))
    (layout,) = board_layouts(d, network, batch=2)
    assert set(layout.dram) == {k for k in layout.dram if k.startswith(("w:", "b:"))}
    assert any(k.startswith("act:") for k in layout.regions)
    assert d.boards[0].dram_bits == 256  # 4.8 GB/s at 250 MHz: 19.2 bytes a cycle
    assert (d.boards[0].dram_num, d.boards[0].dram_den) == (3, 5)  # 0.6 beats a cycle
    assert d.boards[0].dram_latency == 25  # 100 ns at 250 MHz


def test_every_off_chip_move_is_told_its_place_by_a_mem_word():
    network, d = _design(("weights", "grads", "stash"))
    layouts = board_layouts(d, network, batch=2)
    program = compile_step(d, network, layouts, batch=2, lr=0.1)
    mem, move = INSTRUCTIONS["MEM"], INSTRUCTIONS["IN"]
    seen = 0
    for words in program.boards[0]:
        for before, w in zip(words, words[1:], strict=False):
            if INSTRUCTIONS["IN"]["op"].take(w) in (OPS["IN"], OPS["OUT"]) \
                    and move["bank"].take(w) == DRAM_BANK:
                assert mem["op"].take(before) == OPS["MEM"]
                assert move["address"].take(w) == 0
                seen += 1
    assert seen > 0
    assert op_mem(3, 0x1234) == (OPS["MEM"] << 60) | (3 << 54) | 0x1234


def test_the_model_counts_the_mem_words_and_the_memory_latency():
    network, on = _design(())
    _, off = _design(("weights",))
    tasks = schedule(off, network, batch=1).tasks
    layouts = board_layouts(off, network, batch=1)
    loads = [k for k, t in enumerate(tasks) if t.what == "load"]
    words_on = instruction_cycles(on, network)(tasks)
    words_off = instruction_cycles(off, network, layouts)(tasks)
    waits = memory_cycles(off, network, layouts)(tasks)
    latency = off.boards[0].dram_latency
    rules = TaskWork(off, network)
    for k in loads:  # the weights (and bias) of an engine: one MEM word each, one latency
        (work,) = rules.work(tasks[k], 0, layouts[0])
        assert {a.key[:2] for a in work.accesses} <= {"w:", "b:"}
        assert words_off[k] == words_on[k] + len(work.accesses)
        assert latency < waits[k] < latency + 20
    assert sum(memory_cycles(on, network)(tasks)) == 0


def test_bursts_stop_at_the_burst_length_and_at_4k_pages():
    assert bursts(0, 20 * 32, 32) == [8, 8, 4]
    assert bursts(4096 - 64, 8 * 32, 32) == [2, 6]  # two beats up to the page, then six
    assert bursts(5, 2, 32) == [1]  # within one beat
    assert bursts(30, 4, 32) == [2]  # across two beats


def test_bad_off_chip_options_and_board_files_are_refused(tmp_path, capsys):
    out = tmp_path / "b"
    code = main(["build", str(DIGITS), "--board", "zcu102", "--boards", "1",
                 "--off-chip", "weights,cache", "-o", str(out)])
    assert code == 2 and not out.exists()
    assert "--off-chip cache is not known; valid" in capsys.readouterr().err
    text = ZCU102.read_text()
    no_latency = tmp_path / "nolat.toml"
    no_latency.write_text("\n".join(line for line in text.splitlines()
                                    if not line.startswith("latency")))
    code = main(["build", str(DIGITS), "--board-file", str(no_latency), "--boards", "1",
                 "--off-chip", "stash", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "gives no [memory] latency_ns" in err and not out.exists()
    no_memory = tmp_path / "nomem.toml"
    no_memory.write_text(text.replace("gbytes = 0.5", "gbytes = 0").replace(
        "gbytes_per_s = 4.8", "gbytes_per_s = 0"))
    code = main(["build", str(DIGITS), "--board-file", str(no_memory), "--boards", "1",
                 "--off-chip", "weights", "-o", str(out)])
    assert code == 2 and "has no off-chip memory" in capsys.readouterr().err


def test_a_board_file_gives_its_memory_latency_with_a_source():
    board = load_board_file(ZCU102)
    assert board.memory_latency_ns == 100
    text = ZCU102.read_text()
    with pytest.raises(FpdeepError, match=r"line \d+: \[memory\] latency_ns must be a number"):
        parse_board(text.replace("latency_ns = 100", "latency_ns = -1"), "x.toml")
    unsourced = "\n".join(line for line in text.splitlines()
                          if not line.startswith("latency_source"))
    with pytest.raises(FpdeepError, match="latency_ns needs a latency_source"):
        parse_board(unsourced, "x.toml")


def test_a_tensor_longer_than_a_packet_is_written_in_pieces(digits_one_board, monkeypatch):
    """The host's WRITEs of an item split where the header's length field ends (a fully
    connected layer's weights may pass 2^24 words): the pieces are the one WRITE's words, each
    at its place."""
    from fpdeep.cosim import session as host
    from fpdeep.cosim.run import initial_weights, load_build, make_batch
    from fpdeep.hwlib.protocol import HEADER, HOST_OPCODES

    build = load_build(digits_one_board)
    x, y = make_batch(build.network, batch=2, seed=3, data=None)
    weights = initial_weights(build.network, seed=3)

    def writes():
        s = host.build_session(build, x=x, y=y, weights=weights, steps=1, lr=0.05,
                               max_cycles=1000)
        out = []  # (bank, address, words) of every WRITE, in order
        for op in s.ops:
            h = op.args[0] if op.name == "EXCHANGE" else 0
            if op.name == "EXCHANGE" and HEADER["opcode"].take(h) == HOST_OPCODES["WRITE"]:
                assert len(op.args) == 1 + HEADER["length"].take(h)
                out.append((HEADER["target"].take(h), HEADER["address"].take(h), op.args[1:]))
        return out

    whole = writes()
    monkeypatch.setattr(host, "LENGTH_BITS", 5)  # at most 31 words a packet
    pieces = writes()
    assert any(len(w) > 31 for _, _, w in whole)  # something was long enough to split
    assert len(pieces) > len(whole) and all(len(w) <= 31 for _, _, w in pieces)
    for bank, address, words in whole:  # each WRITE is its pieces, in order, end to end
        at = address
        while words:
            b, a, part = pieces.pop(0)
            assert (b, a) == (bank, at) and part == words[:len(part)]
            at, words = at + len(part), words[len(part):]
    assert not pieces


def test_more_banks_than_a_bank_number_names_are_refused(monkeypatch):
    """Bank DRAM_BANK means off-chip memory, so a store has at most DRAM_BANK banks; more
    are refused naming the board and what would help (not an item sent off chip by mistake)."""
    from fpdeep.codegen import layout as store_layout

    network, design = _design(())
    banks = len(board_layouts(design, network, batch=2)[0].banks)
    monkeypatch.setattr(store_layout, "DRAM_BANK", banks - 1)
    with pytest.raises(FpdeepError, match=rf"board 0: its tensor store needs {banks} banks, "
                                          rf"more than the {banks - 1} an instruction's bank "
                                          r"number tells apart; keep data off chip \(--off-chip "
                                          r"weights,grads,stash\) or use more boards"):
        board_layouts(design, network, batch=2)
    monkeypatch.setattr(store_layout, "DRAM_BANK", banks)
    assert len(board_layouts(design, network, batch=2)[0].banks) == banks
