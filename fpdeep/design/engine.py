"""Programming the hand-written loop-nest engine (`hw/fpdeep_engine.sv`) for one Conv/FC slice.

The engine is generic: it runs seven nested counters (grp, cob, cib, kh, kw, ho, wo) and keeps
eight affine quantities (first output channel, first input channel, input row, input column,
the three operand addresses and the bias address) up to date with adders. A grouped conv runs
its groups on the outer level, each block of lanes inside one group (the lanes divide the
group sizes), so the banks keep the layout of an ungrouped conv. Everything that depends on
the layer is a constant computed here once: loop bounds, per-level address jumps, and the
walkers that fill the operand banks and drain the result banks. One engine build therefore
serves every shape that fits its bank depths, which is what lets the simulation suite reuse a
single build.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from fpdeep.errors import FpdeepError, require_non_negative_int, require_positive_int
from fpdeep.hwlib import ENGINE
from fpdeep.ir import ConvAttrs, Layer
from fpdeep.numerics import ACC_WIDTH
from fpdeep.ops import loop_nest
from fpdeep.planning.allocate import EngineShape

#: Mode names and their `cfg_mode` encodings.
MODES: Mapping[str, int] = MappingProxyType({"fp": 0, "bp": 1, "wg": 2})
#: The engine's MODE parameter of an engine built for every mode.
ANY_MODE = 3
#: Widths of the engine's counter and affine-quantity registers (its RTL parameters CW, AW).
COUNT_BITS, AFFINE_BITS = ENGINE.params["CW"], ENGINE.params["AW"]
#: Accumulator width (the DSP48 P register) and the requantisation shifts the RTL takes
#: (negative: the output has more fractional bits than the accumulator; clamp, then shift left).
ACC_BITS = ACC_WIDTH
MIN_SHIFT, MAX_SHIFT = -32, 47
#: Loop levels, outermost first, and the affine quantities in `cfg_init`/`cfg_jump` order.
LEVELS = ("grp", "cob", "cib", "kh", "kw", "ho", "wo")
QUANTITIES = ("co0", "ci0", "hi", "wi", "x_addr", "w_addr", "dy_addr", "b_addr")


@dataclass(frozen=True)
class LoopShape:
    """The loop nest of one Conv/FC slice as the engine sees it (FC: all spatial sizes 1).

    ``ci`` counts every input channel of the layer (the X bank holds them all); a grouped
    conv's slice runs ``groups`` of the layer's ``layer_groups`` groups (0: as many), from group
    ``group_lo``: its ``co`` output channels read only those groups' input channels.
    """

    co: int
    ci: int
    h: int
    w: int
    kh: int = 1
    kw: int = 1
    sh: int = 1
    sw: int = 1
    pt: int = 0
    pl: int = 0
    ho: int = 1
    wo: int = 1
    groups: int = 1
    group_lo: int = 0
    layer_groups: int = 0

    def __post_init__(self) -> None:
        for name in ("co", "ci", "h", "w", "kh", "kw", "sh", "sw", "ho", "wo", "groups"):
            require_positive_int(f"LoopShape.{name}", getattr(self, name))
        for name in ("pt", "pl", "group_lo", "layer_groups"):
            require_non_negative_int(f"LoopShape.{name}", getattr(self, name))
        if self.co % self.groups or self.ci % self.all_groups:
            raise FpdeepError(
                f"LoopShape groups={self.groups} must divide co={self.co} and "
                f"{self.all_groups} groups ci={self.ci}"
            )
        if self.group_lo + self.groups > self.all_groups:
            raise FpdeepError(
                f"LoopShape groups {self.group_lo}..{self.group_lo + self.groups - 1} are not "
                f"among the layer's {self.all_groups}"
            )
        # The last window must start inside the padded input, else the shape is inconsistent.
        last_row = (self.ho - 1) * self.sh - self.pt
        last_col = (self.wo - 1) * self.sw - self.pl
        if last_row >= self.h or last_col >= self.w:
            raise FpdeepError(
                f"LoopShape output {self.ho}x{self.wo} does not fit input {self.h}x{self.w} with "
                f"stride ({self.sh}, {self.sw}) and pads ({self.pt}, {self.pl})"
            )

    @classmethod
    def conv(cls, attrs: ConvAttrs, *, ci: int, co: int, in_hw: tuple[int, int],
             out_hw: tuple[int, int]) -> LoopShape:
        """Shape of a Conv; ``ci`` and ``co`` count every channel of its groups."""
        (kh, kw), (sh, sw), (pt, pl, _, _) = attrs.kernel, attrs.stride, attrs.pads
        return cls(co=co, ci=ci, h=in_hw[0], w=in_hw[1], kh=kh, kw=kw, sh=sh, sw=sw,
                   pt=pt, pl=pl, ho=out_hw[0], wo=out_hw[1], groups=attrs.groups)

    @classmethod
    def fc(cls, *, in_features: int, out_features: int) -> LoopShape:
        return cls(co=out_features, ci=in_features, h=1, w=1)

    @classmethod
    def of_layer(cls, layer: Layer, *, co: int | None = None, lo: int = 0) -> LoopShape:
        """Shape of a Conv/FC IR layer; `co` narrows it to the slice of output channels from
        `lo` (of a grouped conv: whole groups)."""
        nest = loop_nest(layer)
        (ci, h, w), (c_out, ho, wo) = nest.in_shape, nest.out_shape
        shape = cls.conv(nest.attrs, ci=ci, co=c_out, in_hw=(h, w), out_hw=(ho, wo))
        co = co or c_out
        if shape.groups == 1:
            return replace(shape, co=co)
        try:
            return shape.slice(lo, lo + co)
        except FpdeepError as exc:
            raise FpdeepError(f"layer {layer.name!r}: {exc}") from exc

    def slice(self, lo: int, hi: int) -> LoopShape:
        """This grouped conv's slice of output channels lo..hi-1, which must be whole groups."""
        per = self.co_group
        if lo % per or hi % per or not 0 <= lo < hi <= self.co:
            raise FpdeepError(
                f"the slice of output channels {lo}..{hi - 1} does not hold whole groups of "
                f"{per} channels (groups={self.groups})"
            )
        return replace(self, co=hi - lo, groups=(hi - lo) // per, group_lo=lo // per,
                       layer_groups=self.groups)

    @property
    def all_groups(self) -> int:
        """The layer's groups (a slice may run only some of them)."""
        return self.layer_groups or self.groups

    @property
    def co_group(self) -> int:
        return self.co // self.groups

    @property
    def ci_group(self) -> int:
        return self.ci // self.all_groups

    def blocks(self, tm: int, tn: int) -> tuple[int, int]:
        """(ceil(co/g/tm), ceil(ci/g/tn)): channel blocks of one group in the lane split."""
        return -(-self.co_group // tm), -(-self.ci_group // tn)

    def check_lanes(self, tm: int, tn: int) -> None:
        """A grouped nest needs lanes that divide the group sizes: no block straddles groups."""
        if self.groups > 1 and (self.co_group % tm or self.ci_group % tn):
            raise FpdeepError(
                f"a conv with groups={self.groups} ({self.co_group} output and {self.ci_group} "
                f"input channels per group) needs tm dividing {self.co_group} and tn dividing "
                f"{self.ci_group}, got tm={tm}, tn={tn}"
            )

    @property
    def nest(self) -> EngineShape:
        """The loop nest the planner costs (the same loops, without the geometry)."""
        return EngineShape(self.co, self.ci_group, self.kh, self.kw, self.ho, self.wo,
                           groups=self.groups)

    def iterations(self, tm: int, tn: int) -> int:
        """Loop-nest iterations, one per cycle: the engine's cycles less its pipeline latency."""
        return self.nest.cycles(tm, tn, latency=0)


def _check_lanes(tm: object, tn: object) -> None:
    for name, value in (("tm", tm), ("tn", tn)):
        require_positive_int(f"engine {name} (MAC lanes)", value)


@dataclass(frozen=True)
class EngineParams:
    """Build-time parameters of `fpdeep_engine`: lanes and per-bank depths (in words)."""

    tm: int
    tn: int
    x_depth: int
    w_depth: int
    dy_depth: int
    res_depth: int
    bias_depth: int
    mode: int = ANY_MODE  # the one mode the engine runs (`MODES`), or any
    halves: int = 2  # result halves per lane: 1 for an engine whose runs all hold (WG)
    # the banks built as UltraRAM, a bit each (`fpdeep.planning.resources.ENGINE_URAM_BANKS`)
    uram: int = 0

    def as_parameters(self) -> dict[str, int]:
        return {"TM": self.tm, "TN": self.tn, "XD": self.x_depth, "WD": self.w_depth,
                "YD": self.dy_depth, "RD": self.res_depth, "BD": self.bias_depth,
                "MODE": self.mode, "HALVES": self.halves, "URAM": self.uram}


#: The banks each mode fills (x, w, dy, bias) and the operand its result is shaped like: FP
#: reads X and W and adds the bias into a Y-shaped result; BP reads dY and W into an
#: X-shaped one; WG reads X and dY into a W-shaped one and sums the bias gradient.
_MODE_BANKS = {"fp": ({"x", "w", "bias"}, "dy"), "bp": ({"w", "dy"}, "x"),
               "wg": ({"x", "dy", "bias"}, "w")}


def _depths(shape: LoopShape, tm: int, tn: int,
            mode: str | None = None) -> tuple[int, int, int, int, int]:
    """Words of the (x, w, dy, result, bias) banks: for every mode, or for ``mode`` only
    (1 for a bank it never fills)."""
    cob, cib = shape.blocks(tm, tn)
    cob = cob * shape.groups  # blocks over every group of the slice
    depth = {"x": cib * shape.all_groups * shape.h * shape.w,
             "w": cob * cib * shape.kh * shape.kw, "dy": cob * shape.ho * shape.wo,
             "bias": cob}
    if mode is None:
        return depth["x"], depth["w"], depth["dy"], max(depth["x"], depth["w"], depth["dy"]), cob
    used, result = _MODE_BANKS[mode]
    x, w, dy, bias = (depth[k] if k in used else 1 for k in ("x", "w", "dy", "bias"))
    return x, w, dy, depth[result], bias


def engine_params(shapes: Iterable[LoopShape], *, tm: int, tn: int,
                  mode: str | None = None, halves: int = 2) -> EngineParams:
    """Smallest power-of-two bank depths that hold every shape in `shapes` in every mode, or
    in ``mode`` only (an engine of a board runs one mode: the banks it never fills shrink to
    the smallest and its result banks are as deep as its own result). ``halves``: result
    halves per lane, 2 (a run overlaps the last result's drain) or 1 (an engine whose runs
    all hold, as a board's WG engine: its one drain ends the step)."""
    _check_lanes(tm, tn)
    if halves not in (1, 2):
        raise FpdeepError(f"engine result halves must be 1 or 2, got {halves!r}")
    if mode is not None and mode not in MODES:
        raise FpdeepError(f"engine mode {mode!r} is not valid; valid modes are {', '.join(MODES)}")
    need = [0] * 5
    for shape in shapes:
        shape.check_lanes(tm, tn)
        need = [max(a, b) for a, b in zip(need, _depths(shape, tm, tn, mode), strict=True)]
    if need == [0] * 5:
        raise FpdeepError("engine_params needs at least one LoopShape")
    # Power-of-two depths keep the RTL's address widths exact ($clog2) and map onto whole RAMs.
    pow2 = [max(2, 1 << (n - 1).bit_length()) for n in need]
    return EngineParams(tm, tn, *pow2, mode=ANY_MODE if mode is None else MODES[mode],
                        halves=halves)


def _coefficients(shape: LoopShape, tm: int, tn: int) -> dict[str, tuple[tuple[int, ...], int]]:
    """Each quantity as (coefficient per level, constant), levels in LEVELS order."""
    s = shape
    cob, cib = s.blocks(tm, tn)
    hw, kk, howo = s.h * s.w, s.kh * s.kw, s.ho * s.wo
    return {
        "co0": ((s.co_group, tm, 0, 0, 0, 0, 0), 0),
        "ci0": ((s.ci_group, 0, tn, 0, 0, 0, 0), s.group_lo * s.ci_group),
        "hi": ((0, 0, 0, 1, 0, s.sh, 0), -s.pt),
        "wi": ((0, 0, 0, 0, 1, 0, s.sw), -s.pl),
        "x_addr": ((cib * hw, 0, hw, s.w, 1, s.sh * s.w, s.sw),
                   s.group_lo * cib * hw - s.pt * s.w - s.pl),
        "w_addr": ((cob * cib * kk, cib * kk, kk, s.kw, 1, 0, 0), 0),
        "dy_addr": ((cob * howo, howo, 0, 0, 0, s.wo, 1), 0),
        "b_addr": ((cob, 1, 0, 0, 0, 0, 0), 0),
    }


def bounds(shape: LoopShape, tm: int, tn: int) -> tuple[int, ...]:
    cob, cib = shape.blocks(tm, tn)
    return (shape.groups, cob, cib, shape.kh, shape.kw, shape.ho, shape.wo)


def jumps(coef: tuple[int, ...], bound: tuple[int, ...]) -> tuple[int, ...]:
    """Change of an affine quantity when level L increments and all inner levels wrap to 0."""
    return tuple(
        coef[lvl] - sum(coef[j] * (bound[j] - 1) for j in range(lvl + 1, len(bound)))
        for lvl in range(len(bound))
    )


@dataclass(frozen=True)
class Walker:
    """A `fpdeep_tensor_walker` setting: n1 channels on t1 lanes, n2 on t2 lanes, p positions."""

    n1: int
    t1: int
    n2: int
    t2: int
    p: int

    def packed(self) -> int:
        return _pack((self.n1, self.t1, self.n2, self.t2, self.p), COUNT_BITS)


@dataclass(frozen=True)
class EngineConfig:
    """Values of every `cfg_*` input of `fpdeep_engine` for one slice and mode."""

    mode: str
    shape: LoopShape
    tm: int
    tn: int
    shift: int
    raw: bool
    bias: bool
    hold: bool
    ports: Mapping[str, int] = field(repr=False)

    @property
    def out_shape(self) -> tuple[int, ...]:
        """Shape of the result stream, C order: Y (co,ho,wo), dX (ci,h,w) or dW (co,ci,kh,kw)."""
        s = self.shape
        return {"fp": (s.co, s.ho, s.wo), "bp": (s.ci, s.h, s.w),
                "wg": (s.co, s.ci_group, s.kh, s.kw)}[self.mode]

    @property
    def out_count(self) -> int:
        """Beats in the result stream: the result, then (WG with bias) the Co bias gradients."""
        n = 1
        for d in self.out_shape:
            n *= d
        return n + (self.shape.co if self.mode == "wg" and self.bias else 0)


def _pack(values: Iterable[int], bits: int) -> int:
    word = 0
    for i, value in enumerate(values):
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            raise FpdeepError(f"engine configuration value {value} does not fit in {bits} bits")
        word |= (value & ((1 << bits) - 1)) << (i * bits)
    return word


def engine_config(shape: LoopShape, *, mode: str, tm: int, tn: int, shift: int = 0,
                  raw: bool = False, bias: bool = False, bias_shift: int = 0,
                  hold: bool = False, params: EngineParams | None = None) -> EngineConfig:
    """The `cfg_*` port values that make `fpdeep_engine` run `shape` in `mode`.

    `shift` is the requantisation shift of the result (docs/numerics.md §4); `raw` streams the
    48-bit accumulators instead (WG). `bias`: FP adds bias << `bias_shift` (the input's
    fractional bits, §4), WG also accumulates the bias gradient. `hold` keeps the results
    after an image (WG over a mini-batch) until a flush. With `params`, depths are checked.
    """
    if mode not in MODES:
        raise FpdeepError(f"engine mode {mode!r} is not valid; valid modes are {', '.join(MODES)}")
    _check_lanes(tm, tn)
    shape.check_lanes(tm, tn)
    if isinstance(shift, bool) or not isinstance(shift, int) or not (
            MIN_SHIFT <= shift <= MAX_SHIFT):
        raise FpdeepError(
            f"engine requantisation shift must be an integer from {MIN_SHIFT} to {MAX_SHIFT}, "
            f"got {shift!r}"
        )
    if isinstance(bias_shift, bool) or not isinstance(bias_shift, int) or not (
            0 <= bias_shift <= MAX_SHIFT):
        raise FpdeepError(
            f"engine bias_shift must be an integer from 0 to {MAX_SHIFT}, got {bias_shift!r}"
        )
    if params is not None:
        if (params.tm, params.tn) != (tm, tn):
            raise FpdeepError(
                f"engine built with tm={params.tm}, tn={params.tn} cannot run tm={tm}, tn={tn}"
            )
        if params.mode not in (ANY_MODE, MODES[mode]):
            raise FpdeepError(f"engine built for mode {params.mode} cannot run {mode!r}")
        have = (params.x_depth, params.w_depth, params.dy_depth, params.res_depth,
                params.bias_depth)
        need = _depths(shape, tm, tn, mode)
        if any(n > h for n, h in zip(need, have, strict=True)):
            raise FpdeepError(
                f"shape {shape} needs bank depths (x, w, dy, result, bias) {need} but the "
                f"engine was built with {have}; rebuild it with engine_params over this shape"
            )
    s = shape
    bound = bounds(s, tm, tn)
    coefs = _coefficients(s, tm, tn)
    init = [coefs[q][1] for q in QUANTITIES]
    jump = [j for q in QUANTITIES for j in jumps(coefs[q][0], bound)]
    drain = {
        "fp": Walker(s.co, tm, 1, 1, s.ho * s.wo),
        "bp": Walker(s.ci, tn, 1, 1, s.h * s.w),
        "wg": Walker(s.co, tm, s.ci_group, tn, s.kh * s.kw),
    }[mode]
    ports = {
        "cfg_mode": MODES[mode],
        "cfg_co": s.co,
        "cfg_ci": s.ci,
        "cfg_h": s.h,
        "cfg_w": s.w,
        "cfg_bound": _pack(bound, COUNT_BITS),
        "cfg_init": _pack(init, AFFINE_BITS),
        "cfg_jump": _pack(jump, AFFINE_BITS),
        "cfg_shift": ENGINE.encode("cfg_shift", shift),
        "cfg_raw": int(raw),
        "cfg_hold": int(hold),
        "cfg_bias": int(bias),
        "cfg_bias_shift": bias_shift,
        "cfg_ld_x": Walker(s.ci, tn, 1, 1, s.h * s.w).packed(),
        "cfg_ld_w": Walker(s.co, tm, s.ci_group, tn, s.kh * s.kw).packed(),
        "cfg_ld_dy": Walker(s.co, tm, 1, 1, s.ho * s.wo).packed(),
        "cfg_ld_b": Walker(s.co, tm, 1, 1, 1).packed(),
        "cfg_drain": drain.packed(),
        "cfg_drain_b": Walker(s.co, tm, 1, 1, 1).packed(),
    }
    return EngineConfig(mode, s, tm, tn, shift, raw, bias, hold, MappingProxyType(ports))
