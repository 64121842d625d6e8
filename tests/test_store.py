"""The tensor store's sizing rules and the planner's placement of a store (fpdeep.planning.store,
fpdeep.planning.planner.with_stores)."""

from __future__ import annotations

import math

import pytest

import fpdeep
from fpdeep.planning.planner import DoesNotFit, with_stores
from fpdeep.planning.store import (
    URAM_SHAPES,
    BoardStore,
    StoreBank,
    blocks,
    place,
    read_copies,
    signed_bits,
)
from fpdeep.resources import PACKAGE_DIR

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"


@pytest.mark.parametrize(("depth", "width", "expected"), [
    (512, 72, 1),      # UG573's widest shape
    (32768, 1, 1),     # and its deepest
    (32769, 1, 2),
    (1024, 48, 2),     # 2 x 512x72 (or 2 x 1Kx36)
    (256, 16, 1),      # a small bank still takes a whole block
    (4096, 9, 1),
    (1290, 48, 3),     # 3 x 512x72 deep
    (2, 1, 1),
])
def test_bram36_blocks_follow_ug573(depth, width, expected):
    assert blocks(depth, width) == expected


def test_uram_blocks_are_4k_by_72():
    assert blocks(4096, 72, URAM_SHAPES) == 1
    assert blocks(8192, 16, URAM_SHAPES) == 2
    assert blocks(100, 73, URAM_SHAPES) == 2


@pytest.mark.parametrize(("values", "bits"), [
    ([0], 1), ([-1], 1), ([1], 2), ([32767, -32768], 16), ([32768], 17), ([32768, 65536], 18),
    ([2**47 - 1, -(2**47)], 48),
])
def test_signed_bits_hold_the_values_as_twos_complement(values, bits):
    assert signed_bits(values) == bits
    for v in values:  # an independent check: the value survives bits-bit wrapping
        wrapped = v & ((1 << bits) - 1)
        assert (wrapped - (1 << bits) if wrapped >> (bits - 1) else wrapped) == v


def test_a_copy_per_reader_up_to_three():
    assert [read_copies(n) for n in range(6)] == [1, 1, 2, 3, 3, 3]


def test_a_bank_counts_its_copies():
    bank = StoreBank("w:x", 1024, 16, 3)
    assert bank.bits == 1024 * 16 * 3
    assert bank.bram_blocks == 3  # 1Kx18 per copy


def test_banks_move_to_uram_only_when_bram_is_short():
    store = BoardStore(0, 1, (StoreBank("a", 8192, 16), StoreBank("b", 512, 16)))
    assert store.bram_blocks == 4 + 1
    fits = place(store, bram_blocks=5, uram_blocks=0)
    assert fits is not None and [b.item for b in fits.bram] == ["a", "b"] and not fits.uram
    moved = place(store, bram_blocks=2, uram_blocks=2)
    assert moved is not None
    assert [b.item for b in moved.bram] == ["b"] and [b.item for b in moved.uram] == ["a"]
    assert (moved.bram_blocks, moved.uram_blocks) == (1, 2)
    assert place(store, bram_blocks=2, uram_blocks=1) is None


def test_the_plan_takes_the_stores_bits_and_blocks():
    network = fpdeep.load_onnx(DIGITS)
    planned = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=2), batch=4)
    stores = [BoardStore(b, 4, (StoreBank("act:x", 1024 * 4, 16, 2),
                                StoreBank("acc:y", 100, 48))) for b in range(2)]
    placed = with_stores(planned, stores)
    for bp in placed.boards:
        assert bp.store == stores[bp.index]
        assert bp.memory.bram_bits == 1024 * 4 * 16 * 2 + 100 * 48
        assert bp.memory.bram_blocks == 2 * 2 + 1  # 4Kx9 twice per copy, one 512x72
        assert bp.memory.uram_bits == bp.memory.spilled_bits == 0
        assert bp.storage.total == bp.memory.bram_bits
        assert (bp.storage.stash, bp.storage.grads) == (1024 * 4 * 16 * 2, 100 * 48)


def test_a_store_too_big_for_the_board_names_it():
    network = fpdeep.load_onnx(DIGITS)
    planned = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=2), batch=4)
    small = StoreBank("w:x", 16, 16)
    huge = StoreBank("act:x", 1 << 20, 48, 3)  # per copy 3 x 512 of 2Kx18: 1,536 blocks
    stores = [BoardStore(0, 4, (small,)), BoardStore(1, 4, (huge,))]
    with pytest.raises(DoesNotFit, match=r"board 1 \(zcu102\): its tensor store for 4 "
                                         r"image\(s\) takes 4,608 BRAM36 blocks \(18.87 MB "
                                         r"in 1 bank\(s\)\), more than its 775 BRAM36 and 0 "
                                         r"URAM blocks within the 85% utilisation cap"):
        with_stores(planned, stores)
    with pytest.raises(fpdeep.FpdeepError, match=r"the stores are of boards \[0\]; the plan has "
                                                 r"boards \[0, 1\]"):
        with_stores(planned, stores[:1])


def test_engines_too_big_for_the_board_are_named_largest_first():
    """Units alone beyond the board's block RAM: the message says so and names the largest
    instances, with the BRAM36 blocks the resource tables give each."""
    from fpdeep.planning.resources import unit_resources

    network = fpdeep.load_onnx(DIGITS)
    planned = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=4)
    engine = {"TM": 4, "TN": 4, "XD": 1 << 13, "WD": 64, "YD": 1 << 13, "RD": 1 << 13,
              "BD": 16}
    big = {**engine, "YD": 3 << 12}
    blocks = [math.ceil(unit_resources("fpdeep_engine", p, "xcup").bram36) for p in (engine, big)]
    assert sum(blocks) > 775 > max(blocks)  # neither alone, both together beyond the cap
    units = [[("fpdeep_engine", engine, "u_small"), ("fpdeep_engine", big, "u_big")]]
    with pytest.raises(DoesNotFit, match=rf"board 0 \(zcu102\): its engines and units alone "
                                         rf"take {sum(blocks):,} BRAM36 blocks, more than the "
                                         rf"775 it has within the 85% utilisation cap \(largest: "
                                         rf"u_big {blocks[1]:,}, u_small {blocks[0]:,}\)"):
        with_stores(planned, [BoardStore(0, 4, (StoreBank("w:x", 16, 16),))], units)
    # one instance beyond the board: more boards help only by splitting its layer
    huge = {**engine, "XD": 1 << 15, "YD": 1 << 15, "RD": 1 << 15}
    with pytest.raises(DoesNotFit, match=r"u_huge alone takes more than the board has \(more "
                                         r"boards help only as far as they share out its "
                                         r"layer's output channels\): use a smaller input"):
        with_stores(planned, [BoardStore(0, 4, (StoreBank("w:x", 16, 16),))],
                    [[("fpdeep_engine", huge, "u_huge")]])


def test_a_refusal_lists_every_board_whose_units_take_too_much(tmp_path):
    """Where several boards' engines and units do not fit, the refusal explains the first and
    lists every one with the blocks it takes: how far each is tells how many boards more."""
    from fpdeep.flow import lower
    from fpdeep.planning.planner import UnitsTooLarge

    state, config = _lane_heavy(tmp_path, dsp=1200, bram=20, boards=2)
    with pytest.raises(UnitsTooLarge) as info:
        lower(state, config)
    over = info.value.over
    assert sorted(over) == [0, 1]
    assert str(info.value).startswith("board 0 (zcu102): its engines and units alone take")
    assert (f"; 2 of the 2 boards take too much, board 0 {over[0][0]:,}, board 1 "
            f"{over[1][0]:,}") in str(info.value)


def _lane_heavy(tmp_path, *, dsp: int, bram: int, boards: int = 1):
    """Two 64-channel 3x3 convs on 4x4 (shallow per-lane banks, many lanes) planned on one
    ZCU102 cut to ``dsp`` DSPs and ``bram`` block RAMs, everything off chip: the flow's
    state after planning, and its configuration."""
    import re

    from golden_nets import OnnxNet

    from fpdeep.flow import BuildConfig, FlowState, load, plan

    net = OnnxNet((16, 4, 4), seed=3)
    net.conv(64, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.conv(64, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.flatten()
    net.fc(10)
    net.load(tmp_path / "lanes.onnx")
    text = (PACKAGE_DIR / "planning" / "boards" / "zcu102.toml").read_text()
    text = re.sub(r"\ndsp = \d+", f"\ndsp = {dsp}", text)
    board = tmp_path / "board.toml"
    board.write_text(re.sub(r"\nbram_blocks = \d+", f"\nbram_blocks = {bram}", text))
    config = BuildConfig(model=tmp_path / "lanes.onnx", board=board, boards=boards, batch=2,
                         off_chip=("weights", "grads", "stash"))
    return plan(load(FlowState(), config), config), config


def test_a_board_whose_lanes_take_too_much_block_ram_gets_fewer_lanes(tmp_path):
    """Each MAC lane has banks of its own, and a shallow one still takes a whole block RAM, so
    the planner's DSP-filling lanes can need more block RAM than the board has. Lowering
    finds that and plans the same partition again with that board's DSPs held down until its
    engines fit; the plan says so, and keeps the cap in its JSON."""
    from fpdeep.codegen.build import board_units
    from fpdeep.codegen.layout import board_layouts
    from fpdeep.design.lower import lower as lower_plan
    from fpdeep.flow import lower
    from fpdeep.planning.planner import Plan, UnitsTooLarge
    from fpdeep.report.plan import plan_json, plan_text

    state, config = _lane_heavy(tmp_path, dsp=1200, bram=600)
    asked = state.plan
    assert asked.cluster.dsp_caps == ()
    # the plan as asked for does not fit: its engines and units alone take too much
    design = lower_plan(state.network, asked, off_chip=config.off_chip)
    layouts = board_layouts(design, state.network, batch=2)
    with pytest.raises(UnitsTooLarge) as info:
        with_stores(asked, [la.store for la in layouts],
                    board_units(design, state.network, batch=2, layouts=layouts))
    taken, have = info.value.over[0]
    assert taken > have == math.floor(600 * 0.85)
    fitted = lower(state, config).plan
    cap = fitted.cluster.dsp_caps[0]
    assert fitted.boards[0].dsp_used <= cap < asked.boards[0].dsp_used
    assert fitted.cuts == asked.cuts
    assert fitted.boards[0].resources.bram36 <= have
    assert f"(DSPs of board 0 to {cap:,}: fewer MAC lanes" in plan_text(fitted)
    assert plan_json(fitted)["cluster"]["dsp_caps"] == [cap]
    assert Plan.from_json(fitted.to_json()).cluster.dsp_caps == (cap,)


def test_fewer_lanes_that_do_not_help_leave_the_first_reason(tmp_path):
    """A board far too small: fewer lanes do not make its engines fit, and the error gives
    what the plan as asked for takes, and says fewer lanes were tried."""
    from fpdeep.flow import lower
    from fpdeep.planning.planner import UnitsTooLarge

    state, config = _lane_heavy(tmp_path, dsp=1200, bram=20)
    with pytest.raises(UnitsTooLarge, match=r"^board 0 \(zcu102\): its engines and units "
                                            r"alone take [\d,]+ BRAM36 blocks, more than the "
                                            r"17 it has .*\(fewer MAC lanes did not make it fit "
                                            r"either\)$"):
        lower(state, config)


def test_engine_banks_move_to_ultraram_where_block_ram_is_short(tmp_path):
    """A 16-channel 3x3 conv on 32 x 32, pooled to 8 x 8, then an FC: its engines' banks take
    more block RAM than a board cut to 220 BRAM36 has, and fewer lanes do not shrink them
    (the same bits in fewer, deeper banks). With 16 UltraRAMs lowering builds the banks that
    free the most block RAM per UltraRAM block as UltraRAM (the engine's URAM parameter),
    every lane kept; the board's resources count them."""
    import re

    from golden_nets import OnnxNet

    from fpdeep.codegen.build import board_units
    from fpdeep.codegen.layout import board_layouts
    from fpdeep.design.lower import lower as lower_plan
    from fpdeep.flow import BuildConfig, FlowState, load, lower, plan
    from fpdeep.planning.planner import UnitsTooLarge, engine_banks_in_uram
    from fpdeep.planning.resources import board_resources, unit_resources

    net = OnnxNet((16, 32, 32), seed=5)
    net.conv(16, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.maxpool(4, 4)
    net.flatten()
    net.fc(10)
    net.load(tmp_path / "deep.onnx")
    text = (PACKAGE_DIR / "planning" / "boards" / "zcu102.toml").read_text()
    text = re.sub(r"\nbram_blocks = \d+", "\nbram_blocks = 220", text)

    def planned(uram: int):
        board = tmp_path / f"board{uram}.toml"
        board.write_text(re.sub(r"\nuram_blocks = \d+\nuram_block_bits = \d+",
                                f"\nuram_blocks = {uram}\nuram_block_bits = 294912", text))
        config = BuildConfig(model=tmp_path / "deep.onnx", board=board, boards=1, batch=2,
                             off_chip=("weights", "grads", "stash"))
        return plan(load(FlowState(), config), config), config

    state, config = planned(0)
    with pytest.raises(UnitsTooLarge, match="fewer MAC lanes did not make it fit either"):
        lower(state, config)
    state, config = planned(16)
    asked = state.plan
    # as asked for, in block RAM only, the units take too much
    design = lower_plan(state.network, asked, off_chip=config.off_chip)
    layouts = board_layouts(design, state.network, batch=2)
    units = board_units(design, state.network, batch=2, layouts=layouts)
    bram, uram = math.floor(220 * 0.85), math.floor(16 * 0.85)
    assert board_resources([u for u in units[0] if u[0] != "fpdeep_store"], (),
                           "xcup").bram36 > bram
    chosen, = engine_banks_in_uram(asked, units, [la.store for la in layouts])
    lowered = lower(state, config)
    engines = [e for s in lowered.design.boards[0].slices for e in s.engines.values()]
    assert {e.ident: e.params.uram for e in engines if e.params.uram} == {
        name.removeprefix("u_"): bits for name, bits in chosen.items()} != {}
    assert lowered.plan.cluster.dsp_caps == ()  # every lane kept
    assert lowered.plan.boards[0].dsp_used == asked.boards[0].dsp_used
    engine_uram = sum(unit_resources(m, {**p, "URAM": chosen.get(n, 0)}, "xcup").uram
                      for m, p, n in units[0] if m == "fpdeep_engine")
    resources = lowered.plan.boards[0].resources
    assert engine_uram > 0
    assert resources.uram == engine_uram + lowered.plan.boards[0].memory.uram_blocks <= uram
    assert resources.bram36 <= bram


def _engine_unit(name: str, **params):
    return ("fpdeep_engine", {"TM": 2, "TN": 2, "XD": 2, "WD": 2, "YD": 2, "RD": 2, "BD": 2,
                              "MODE": 2, "HALVES": 1, **params}, name)


@pytest.mark.parametrize(("bram", "uram", "chosen"), [
    (200, 16, {}),  # everything fits in block RAM: nothing moves
    # results 4 x 4096 x 48 free 24 blocks for 4 UltraRAMs, before X 2 x 4096 x 16 (4 for 2)
    (20, 16, {"u_a": 8}),
    (3, 16, {"u_a": 8, "u_b": 1}),  # then the X banks too
    (20, 3, {"u_b": 1}),  # too little UltraRAM for the results: the X banks alone
])
def test_engine_banks_move_by_block_ram_freed_per_ultraram_block(bram, uram, chosen):
    """The banks that free the most block RAM per UltraRAM block move first, only while the
    units (and the store beside them) do not fit, and only as far as the UltraRAM goes."""
    from types import SimpleNamespace

    from fpdeep.planning.planner import engine_banks_in_uram

    units = [_engine_unit("u_a", RD=4096), _engine_unit("u_b", XD=2048, MODE=0, HALVES=2)]
    part = SimpleNamespace(part="xcvu9p-flga2104-2L-e", bram_blocks=bram, uram_blocks=uram)
    plan = SimpleNamespace(cluster=SimpleNamespace(util_cap=1.0, boards=[part]),
                           boards=[SimpleNamespace(index=0)])
    store = BoardStore(0, 1, ())
    assert engine_banks_in_uram(plan, [units], [store]) == [chosen]


def test_engine_banks_move_until_the_store_fits_beside_them_too():
    """Moving the result banks makes the units fit, but leaves the store (6 BRAM36 or 3
    URAM) room in neither: the X banks move too, and the store takes the block RAM."""
    from types import SimpleNamespace

    from fpdeep.planning.planner import engine_banks_in_uram

    units = [_engine_unit("u_a", RD=4096), _engine_unit("u_b", XD=2048, MODE=0, HALVES=2)]
    part = SimpleNamespace(part="xcvu9p-flga2104-2L-e", bram_blocks=8, uram_blocks=6)
    plan = SimpleNamespace(cluster=SimpleNamespace(util_cap=1.0, boards=[part]),
                           boards=[SimpleNamespace(index=0)])
    store = BoardStore(0, 1, (StoreBank("act:x", 12288, 16),))
    assert (store.bram_blocks, store.banks[0].uram_blocks) == (6, 3)
    assert engine_banks_in_uram(plan, [units], [store]) == [{"u_a": 8, "u_b": 1}]
    assert engine_banks_in_uram(plan, [units], [BoardStore(0, 1, ())]) == [{"u_a": 8}]


@pytest.mark.parametrize(("over", "used", "before", "may"), [
    ((4016, 1249), 2979, None, True),  # the first cut is always tried
    # ResNet-20 on a VC709: 2,979 -> 831 DSPs saved 195 blocks, so 3,746 stay at no lanes
    ((3821, 1249), 831, (4016, 2979), False),
    # a SqueezeNet board: 5,748 -> 2,433 DSPs saved 1,844, so about 700 stay: cut again
    ((2051, 1836), 2433, (3895, 5748), True),
    ((2051, 1836), 2433, (2051, 5748), False),  # the cut saved nothing
])
def test_fewer_lanes_are_tried_while_what_stays_without_them_fits(over, used, before, may):
    from fpdeep.flow import _lanes_may_fit

    assert _lanes_may_fit(over, used, before) is may


def test_build_cuts_the_boards_again_where_the_engine_banks_of_least_ii_do_not_fit(tmp_path):
    """A 3x3 conv of 16 channels on 8 x 8, then FCs of 1,024 -> 128 -> 10, on two ZCU102s cut
    to 64 DSPs and 350 BRAM36: the cuts of least II give board 1 most of the FC, whose banks
    take more block RAM than it has, with fewer lanes too. Build then cuts the boards where
    each one's banks, as the search counts them scaled by what the first lowering took, stay
    within 80 % of its RAM: a higher II, and every board fits."""
    import re

    from golden_nets import OnnxNet

    from fpdeep.flow import BuildConfig, FlowState, _lowered_as_planned, load, lower, plan
    from fpdeep.planning.partition import chain_model
    from fpdeep.planning.planner import Plan, UnitsTooLarge, bank_bits
    from fpdeep.report.plan import plan_json, plan_text

    net = OnnxNet((16, 8, 8), seed=5)
    net.conv(16, 3, pads=(1, 1, 1, 1))
    net.relu()
    net.flatten()
    net.fc(128)
    net.relu()
    net.fc(10)
    net.load(tmp_path / "fc.onnx")
    text = (PACKAGE_DIR / "planning" / "boards" / "zcu102.toml").read_text()
    text = re.sub(r"\ndsp = \d+", "\ndsp = 64", text)
    (tmp_path / "board.toml").write_text(re.sub(r"\nbram_blocks = \d+", "\nbram_blocks = 350",
                                                text))
    config = BuildConfig(model=tmp_path / "fc.onnx", board=tmp_path / "board.toml", boards=2,
                         batch=2, partition="optimal", off_chip=("weights", "grads", "stash"))
    state = plan(load(FlowState(), config), config)
    asked = state.plan
    with pytest.raises(UnitsTooLarge, match="fewer MAC lanes did not make it fit either"):
        _lowered_as_planned(state.network, asked, numerics=None, loss="softmax_ce",
                            off_chip=config.off_chip)
    lowered = lower(state, config).plan
    cluster = lowered.cluster
    assert cluster.bank_share == 0.8 and {name for name, _ in cluster.bank_scale} == {
        layer.name for layer in state.network.compute_layers}
    assert lowered.cuts != asked.cuts
    assert lowered.totals.ii_cycles > asked.totals.ii_cycles
    chain = chain_model(state.network, precision=16, pipelining="image", batch=2)
    room = cluster.boards[0].bram_bits * cluster.util_cap
    for board in lowered.boards:
        assert bank_bits(chain, cluster, board) <= 0.8 * room
        assert board.resources.bram36 <= math.floor(350 * 0.85)
    assert plan_json(lowered)["cluster"]["bank_share"] == 0.8
    assert Plan.from_json(lowered.to_json()).cluster == cluster
    assert "engine banks take at most 80% of its RAM" in plan_text(lowered)
