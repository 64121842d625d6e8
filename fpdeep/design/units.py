"""The RTL units of a board as values: which unit serves each element-wise layer, with its
configuration constants (ReLU, pooling, residual add, fan-in, partial sums, loss, SGD), and the
simulation link models between boards."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from fpdeep.design.mapping import RTL_MAPPING, Rtl
from fpdeep.design.pool import PoolShape, band_channels, pool_config
from fpdeep.errors import FpdeepError
from fpdeep.golden import batchnorm as golden_bn
from fpdeep.golden import dropout, shuffle
from fpdeep.golden import lrn as golden_lrn
from fpdeep.golden.loss import LOSSES
from fpdeep.hwlib import (
    ADD,
    AFFINE,
    BN_FROZEN,
    BN_TRAIN,
    CONVERT,
    DROPOUT,
    FANOUT,
    LOSS,
    LRN,
    PSUM,
    RELU,
)
from fpdeep.ir import Layer, LRNAttrs, Network, Op
from fpdeep.numerics import Format, Numerics, scale_constant
from fpdeep.ops import pool_window
from fpdeep.planning import perf


@dataclass(frozen=True)
class UnitDesign:
    """One RTL unit on a board: a ReLU or pooling layer, or the board's SGD unit."""

    kind: str  # relu, pool, sgd
    layer: str  # "" for the SGD unit
    ident: str
    board: int
    params: dict[str, int] = field(default_factory=dict)
    forward: dict[str, int] = field(default_factory=dict)  # cfg port -> value
    backward: dict[str, int] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # what the controller needs to drive it


def _pow2(n: int) -> int:
    return max(2, 1 << (n - 1).bit_length())


def _owner(network: Network, tensor: str) -> str:
    producer = network.tensors[tensor].producer
    return tensor if producer is None else producer


def layer_unit(network: Network, layer: Layer, *, ident: str, board: int,
               numerics: Numerics) -> UnitDesign | None:
    """The RTL unit of a non-compute layer, or None when the controller does it (a view) or
    none exists (``check_buildable`` refuses those)."""
    rtl = RTL_MAPPING.get(layer.op)
    make = None if rtl is None else _UNIT_MAKERS.get(rtl.kind)
    if make is None or (rtl.kind == "add" and len(layer.inputs) != 2):
        return None
    return make(network, layer, rtl, ident=ident, board=board, numerics=numerics)


def _fracs(network: Network, layer: Layer, numerics: Numerics) -> tuple[int, int, int, int]:
    """Fractional bits of (activation in, activation out, error in, error out) of ``layer``."""
    src = _owner(network, layer.inputs[0])
    return (numerics.fmt("act", src).frac, numerics.fmt("act", layer.name).frac,
            numerics.fmt("err", src).frac, numerics.fmt("err", layer.name).frac)


def _relu_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
               numerics: Numerics) -> UnitDesign:
    act_in, act_out, err_in, err_out = _fracs(network, layer, numerics)
    return UnitDesign("relu", layer.name, ident, board, {},
                      {"cfg_shift": RELU.encode("cfg_shift", act_in - act_out)},
                      {"cfg_shift": RELU.encode("cfg_shift", err_out - err_in)},
                      {"elements": math.prod(layer.in_shape)})


def _pool_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
               numerics: Numerics) -> UnitDesign:
    act_in, act_out, err_in, err_out = _fracs(network, layer, numerics)
    c, h, w = layer.in_shape
    window = pool_window(layer)
    # one run per band of channels (`band_channels`), each configured alike
    out_hw = PoolShape.of(window, c=1, in_hw=(h, w)).out_hw
    band = band_channels(c, (h, w), out_hw)
    shape = PoolShape.of(window, c=band, in_hw=(h, w))
    avg = rtl.mode == "avg"
    fwd = pool_config(shape, mode="avg_fwd" if avg else "max_fwd", in_frac=act_in,
                      out_frac=act_out)
    bwd = pool_config(shape, mode="avg_bwd" if avg else "max_bwd", in_frac=err_out,
                      out_frac=err_in)
    n_in, n_out = band * h * w, band * shape.out_hw[0] * shape.out_hw[1]
    # in, out, cycles: of one band's run
    return UnitDesign("pool", layer.name, ident, board,
                      {"XD": _pow2(n_in), "YD": _pow2(n_out)}, dict(fwd.ports), dict(bwd.ports),
                      {"avg": avg, "in": n_in, "out": n_out, "cycles": shape.cycles(),
                       "bands": c // band,
                       "table_fwd": list(fwd.table), "table_bwd": list(bwd.table)})


def _add_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
              numerics: Numerics) -> UnitDesign:
    """Residual Add forward (fpdeep_add, §8) and its error fan-out (fpdeep_fanout)."""
    acts = [numerics.fmt("act", _owner(network, t)).frac for t in layer.inputs]
    errs = [numerics.fmt("err", _owner(network, t)).frac for t in layer.inputs]
    top = max(acts)
    fy, fe = numerics.fmt("act", layer.name).frac, numerics.fmt("err", layer.name).frac
    lefts = [top - f for f in acts]
    if max(lefts) > ADD.mask("cfg_la"):
        raise FpdeepError(f"layer {layer.name!r}: Add inputs differ by {max(lefts)} fractional "
                          f"bits; the add unit aligns at most {ADD.mask('cfg_la')}")
    return UnitDesign("add", layer.name, ident, board, {},
                      {"cfg_la": lefts[0], "cfg_lb": lefts[1],
                       "cfg_shift": ADD.encode("cfg_shift", top - fy)},
                      {"cfg_shift_a": FANOUT.encode("cfg_shift_a", fe - errs[0]),
                       "cfg_shift_b": FANOUT.encode("cfg_shift_b", fe - errs[1])},
                      {"elements": math.prod(layer.out_shape)})


def _dropout_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
                  numerics: Numerics) -> UnitDesign:
    """The mask's layer term is a constant; the controller sets the rest per pass (info
    ``passes``: forward, backward and the forward-only pass's identity) and per image."""
    act_in, act_out, err_in, err_out = _fracs(network, layer, numerics)
    ratio = layer.attrs.ratio
    index = [lay.name for lay in network.layers if lay.op is Op.DROPOUT].index(layer.name)
    mult, r = dropout.scale(ratio)
    threshold = dropout.threshold(ratio)
    passes = {"fp": (mult, act_in + r - act_out, threshold),
              "bp": (mult, err_out + r - err_in, threshold),
              "off": (1, act_in - act_out, 0)}
    return UnitDesign("dropout", layer.name, ident, board, {},
                      {"cfg_seed_layer": (dropout.SEED_LAYER * (index + 1)) & dropout.MASK32},
                      {},
                      {"elements": math.prod(layer.in_shape),
                       "passes": {what: {"cfg_mult": m, "cfg_thresh": t,
                                         "cfg_shift": DROPOUT.encode("cfg_shift", shift)}
                                  for what, (m, shift, t) in passes.items()}})


def _converter_part(network: Network, layer: Layer, numerics: Numerics, tensor: str, *,
                    start: int, offset: int, words: int) -> dict[str, Any]:
    """A converter pass: ``words`` words of ``tensor`` from word ``start`` to word ``offset``
    of the layer's output (backward the other way), with its forward and backward shifts."""
    owner = _owner(network, tensor)
    fp = numerics.fmt("act", owner).frac - numerics.fmt("act", layer.name).frac
    bp = numerics.fmt("err", layer.name).frac - numerics.fmt("err", owner).frac
    return {"tensor": tensor, "from": start, "offset": offset, "words": words,
            "fp": CONVERT.encode("cfg_shift", fp), "bp": CONVERT.encode("cfg_shift", bp)}


def _concat_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
                 numerics: Numerics) -> UnitDesign:
    """Concat as passes of a converter (docs/numerics.md §19): forward, each input into its
    place in the output; backward, each place of the output's error to its input."""
    parts, offset = [], 0
    for tensor in layer.inputs:
        size = math.prod(network.tensors[tensor].shape)
        parts.append(_converter_part(network, layer, numerics, tensor, start=0, offset=offset,
                                     words=size))
        offset += size
    return UnitDesign("concat", layer.name, ident, board, {}, {}, {},
                      {"elements": offset, "parts": parts})


def _shuffle_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
                  numerics: Numerics) -> UnitDesign:
    """Channel shuffle as a converter pass per channel plane (docs/numerics.md §20): output
    channel c is input channel perm[c]; backward the other way."""
    channels = layer.out_shape[0]
    plane = math.prod(layer.out_shape[1:])
    perm = shuffle.permutation(channels, layer.attrs.groups)
    parts = [_converter_part(network, layer, numerics, layer.inputs[0], start=int(src) * plane,
                             offset=c * plane, words=plane) for c, src in enumerate(perm)]
    return UnitDesign("shuffle", layer.name, ident, board, {}, {}, {},
                      {"elements": channels * plane, "parts": parts})


def dropout_image_seed(image: int) -> int:
    """The image's term of a Dropout mask's seed (docs/numerics.md §21)."""
    return (dropout.SEED_IMAGE * (image + 1)) & dropout.MASK32


#: The unit design of each unit kind the RTL mapping names (engines, views and the loss are
#: not layer units).
#: The per-channel constants a frozen BatchNormalization's unit takes ahead of each channel,
#: in its order (hw/eltwise/fpdeep_bn_frozen.sv), per pass; each a signed word of at most
#: BN_TABLE_BITS bits.
BN_TABLE = {"fp": ("mean", "z", "xshift", "gamma", "beta"), "bp": ("factor", "eshift")}
BN_TABLE_BITS = 32


def _bn_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
             numerics: Numerics) -> UnitDesign:
    """A frozen BatchNormalization: the output shift is a constant; the per-channel
    constants come from the running statistics the host loads (`bn_table`). One in training
    mode: `_bn_train_unit`."""
    if not getattr(layer.attrs, "frozen", False):
        return _bn_train_unit(network, layer, ident=ident, board=board, numerics=numerics)
    c = layer.in_shape[0]
    shift = (numerics.fmt("weight", layer.name).frac + golden_bn.XHAT.frac
             - numerics.fmt("act", layer.name).frac)
    low, high = BN_FROZEN.signed_range("cfg_yshift")
    if not low <= shift <= high:
        raise FpdeepError(f"layer {layer.name!r}: the BatchNormalization's output shift {shift} "
                          f"is outside the unit's {low}..{high}; choose closer formats")
    values = {"cfg_plane": math.prod(layer.in_shape[1:]),
              "cfg_yshift": BN_FROZEN.encode("cfg_yshift", shift)}
    return UnitDesign("bn", layer.name, ident, board, {}, values, values,
                      {"elements": math.prod(layer.in_shape), "channels": c})


#: The passes of a BatchNormalization trained on batch statistics (fpdeep_bn_train's
#: cfg_pass): the batch's sums of x, its centred squares (and the running statistics' update),
#: an image's normalise and affine, the batch's gradient sums, an image's input error.
BN_PASSES = {"mean": 0, "var": 1, "fp": 2, "grad": 3, "bp": 4}


def _bn_train_unit(network: Network, layer: Layer, *, ident: str, board: int,
                   numerics: Numerics) -> UnitDesign:
    """A BatchNormalization trained on batch statistics (fpdeep_bn_train, docs/numerics.md
    §16): its formats' shifts and epsilon are constants; the passes' counts of the batch
    (``bn_pass_config``) are set by the controller per pass."""
    c, plane = layer.in_shape[0], math.prod(layer.in_shape[1:])
    x_fmt = numerics.fmt("act", _owner(network, layer.inputs[0]))
    fw = numerics.fmt("weight", layer.name).frac
    h = golden_bn.XHAT.frac
    shifts = {"cfg_yshift": fw + h - numerics.fmt("act", layer.name).frac,
              # the unit adds each channel's k (golden error_factor)
              "cfg_eshift": (numerics.fmt("err", layer.name).frac + h + fw
                             + golden_bn.RSQRT_FRAC - x_fmt.frac - golden_bn.FACTOR_SHIFT
                             - numerics.fmt("err", _owner(network, layer.inputs[0])).frac)}
    for name, shift in shifts.items():
        low, high = BN_TRAIN.signed_range(name)
        if not low <= shift <= high:
            raise FpdeepError(f"layer {layer.name!r}: the BatchNormalization's "
                              f"{'output' if name == 'cfg_yshift' else 'error'} shift {shift} "
                              f"is outside the unit's {low}..{high}; choose closer formats")
    values = {"cfg_channels": c, "cfg_plane": plane,
              "cfg_eps": golden_bn.epsilon_fixed(layer.attrs.epsilon, x_fmt),
              **{name: BN_TRAIN.encode(name, v) for name, v in shifts.items()}}
    m_c, r_c = golden_bn.momentum_constant(layer.attrs.momentum)
    return UnitDesign("bn_train", layer.name, ident, board, {"CD": _pow2(c)}, values, values,
                      {"elements": c * plane, "channels": c, "plane": plane,
                       "momentum": (m_c, r_c)})


#: The configuration fields of fpdeep_bn_train the controller sets per pass.
BN_TRAIN_RUNTIME = ("cfg_pass", "cfg_images", "cfg_mm", "cfg_rm", "cfg_mu", "cfg_ru", "cfg_mc",
                    "cfg_rc")


def bn_pass_config(u: UnitDesign, what: str, images: int) -> tuple[tuple[str, int], ...]:
    """The runtime configuration of pass ``what`` (`BN_PASSES`, or ``var_off``: the variance
    of an inference pass, which leaves the running statistics as they are) of a trained
    BatchNormalization's unit over a batch of ``images``."""
    m_m, r_m, m_u, r_u = golden_bn.count_constants(images * u.info["plane"])
    m_c, r_c = (0, 0) if what == "var_off" else u.info["momentum"]
    return (("cfg_pass", BN_PASSES[what.removesuffix("_off")]), ("cfg_images", images),
            ("cfg_mm", m_m), ("cfg_rm", r_m), ("cfg_mu", m_u), ("cfg_ru", r_u),
            ("cfg_mc", m_c), ("cfg_rc", r_c))


def bn_table(layer: str, constants: dict[str, Any], what: str) -> list[int]:
    """The words of a frozen BatchNormalization's table for pass ``what`` (fp, bp): per
    channel its constants in `BN_TABLE` order; FpdeepError naming ``layer`` when one does not
    fit the unit."""
    names = BN_TABLE[what]
    low, high = BN_FROZEN.signed_range("cfg_yshift")
    for name in names:
        values = [int(v) for v in constants[name]]
        limit = (low, high) if name.endswith("shift") else \
            (-(1 << (BN_TABLE_BITS - 1)), (1 << (BN_TABLE_BITS - 1)) - 1)
        if values and not (limit[0] <= min(values) and max(values) <= limit[1]):
            raise FpdeepError(f"layer {layer!r}: the frozen BatchNormalization's {name} "
                              f"ranges over {min(values)}..{max(values)}, outside the unit's "
                              f"{limit[0]}..{limit[1]} (a running variance far from the "
                              f"activations' scale); choose other formats")
    return [int(constants[name][ch]) for ch in range(len(constants[names[0]]))
            for name in names]


#: How an LRN configuration field is named in messages (others by their own name).
LRN_FIELDS = {"cfg_k": "K = bias * 2^F", "cfg_dfrac": "F (fractional bits of d)",
              "cfg_rg": "shift of 2 alpha beta / size", "cfg_xfrac2": "2 fx"}


def lrn_config(layer: str, attrs: LRNAttrs, *, shape: Sequence[int], x_fmt: Format,
               y_fmt: Format, e_fmt: Format, dx_fmt: Format) -> dict[str, int]:
    """Every configuration value of fpdeep_lrn but the direction, from the golden model's
    constants (§22); FpdeepError naming ``layer`` when one does not fit the unit."""
    k, m_a, d_frac = golden_lrn.normaliser(attrs, x_fmt)
    p = golden_lrn.powers(attrs)
    c, plane = shape[0], math.prod(shape[1:])
    signed = {"cfg_dfrac": d_frac, "cfg_rg": p["gain"][1] - 16, "cfg_xfrac2": 2 * x_fmt.frac,
              "cfg_yshift": golden_lrn.forward_shift(x_fmt, y_fmt),
              "cfg_dxshift": golden_lrn.backward_shift(e_fmt, dx_fmt)}
    unsigned = {"cfg_channels": c, "cfg_plane": plane, "cfg_size": attrs.size, "cfg_k": k,
                "cfg_ma": m_a, "cfg_mb": p["beta"][0], "cfg_rb": p["beta"][1],
                "cfg_mb1": p["beta1"][0], "cfg_rb1": p["beta1"][1], "cfg_mg": p["gain"][0]}
    ranges = {name: (1, LRN.mask(name)) for name in ("cfg_rb", "cfg_rb1", "cfg_k")}
    ranges["cfg_xfrac2"] = (0, LRN.mask("cfg_xfrac2"))
    for name, value in {**signed, **unsigned}.items():
        low, high = ranges.get(name, LRN.signed_range(name) if name in signed
                               else (0, LRN.mask(name)))
        if not low <= value <= high:
            what = LRN_FIELDS.get(name, name.removeprefix("cfg_"))
            raise FpdeepError(f"layer {layer!r} (LRN): its {what} is {value}, outside the LRN "
                              f"unit's {low}..{high} (size {attrs.size}, alpha {attrs.alpha}, "
                              f"beta {attrs.beta}, bias {attrs.bias}, shape {tuple(shape)}); "
                              "choose other formats")
    return {**{name: LRN.encode(name, v) for name, v in signed.items()}, **unsigned}


def _lrn_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
              numerics: Numerics) -> UnitDesign:
    """LRN: its constants (`lrn_config`); the rings as deep as the window and the plane."""
    assert isinstance(layer.attrs, LRNAttrs)
    src = _owner(network, layer.inputs[0])
    values = lrn_config(layer.name, layer.attrs, shape=layer.in_shape,
                        x_fmt=numerics.fmt("act", src), y_fmt=numerics.fmt("act", layer.name),
                        e_fmt=numerics.fmt("err", layer.name), dx_fmt=numerics.fmt("err", src))
    c, plane, n = layer.in_shape[0], math.prod(layer.in_shape[1:]), layer.attrs.size
    return UnitDesign("lrn", layer.name, ident, board, {"NMAX": n, "PD": plane}, values, values,
                      {"elements": c * plane, "plane": plane,
                       "flush": {"fp": golden_lrn.window(n)[1], "bp": n - 1}})
def _affine_unit(network: Network, layer: Layer, rtl: Rtl, *, ident: str, board: int,
                 numerics: Numerics) -> UnitDesign:
    """A trained per-channel Scale or Bias (fpdeep_affine): the parameter's channels (one for a
    single value) each cover ``plane`` elements; the controller sets each pass's shift."""
    act_in, act_out, err_in, err_out = _fracs(network, layer, numerics)
    fp = numerics.fmt("weight", layer.name).frac
    bias = layer.op is Op.BIAS
    ref = layer.weight("bias" if bias else "scale")
    assert ref is not None
    channels = math.prod(ref.shape)
    top = max(act_in, fp)
    lefts = {"cfg_lx": top - act_in, "cfg_lp": top - fp} if bias else {"cfg_lx": 0, "cfg_lp": 0}
    shifts = ({"fp": top - act_out, "bp": err_out - err_in} if bias
              else {"fp": act_in + fp - act_out, "bp": err_out + fp - err_in})
    if max(lefts.values()) > AFFINE.mask("cfg_lx"):
        raise FpdeepError(f"layer {layer.name!r}: the Bias's input and value differ by "
                          f"{max(lefts.values())} fractional bits; the unit aligns at most "
                          f"{AFFINE.mask('cfg_lx')}")
    values = {"cfg_bias": int(bias), "cfg_plane": math.prod(layer.in_shape) // channels,
              **lefts}
    low, high = AFFINE.signed_range("cfg_shift")
    for what, shift in shifts.items():
        if not low <= shift <= high:
            raise FpdeepError(f"layer {layer.name!r}: the {layer.op}'s {what} shift {shift} is "
                              f"outside the unit's {low}..{high}; choose closer formats")
    passes = {what: AFFINE.encode("cfg_shift", v) for what, v in shifts.items()}
    return UnitDesign("affine", layer.name, ident, board, {}, values, values,
                      {"elements": math.prod(layer.in_shape), "channels": channels,
                       "role": ref.role, "shift": passes})


_UNIT_MAKERS = {"relu": _relu_unit, "pool": _pool_unit, "add": _add_unit,
                "dropout": _dropout_unit, "concat": _concat_unit, "shuffle": _shuffle_unit,
                "bn": _bn_unit, "lrn": _lrn_unit, "affine": _affine_unit}


def fan_in_unit(tensor: str, shape: Sequence[int], *, readers: int, ident: str,
                board: int) -> UnitDesign:
    """The exact sum of the ``readers`` error contributions to ``tensor``, saturated once
    (§8): two in one pass of the Add unit (fpdeep_add); more in one pass per further
    contribution of the partial-sum unit (fpdeep_psum), which keeps the running sum exact in
    the tensor's error item and saturates on its last pass."""
    info = {"elements": math.prod(shape), "tensor": tensor, "readers": readers}
    if readers == 2:
        return UnitDesign("fanin", tensor, ident, board, {},
                          {"cfg_la": 0, "cfg_lb": 0, "cfg_shift": 0}, {}, info)
    return UnitDesign("fanin", tensor, ident, board, {},
                      {"cfg_shift": PSUM.encode("cfg_shift", 0)}, {}, info)


#: The loss unit takes fewer classes than this: the host writes each label into the store as
#: one signed 16-bit data word.
LOSS_CLASS_LIMIT = 1 << 15


def loss_label_bits(classes: int) -> int:
    """Bits of the loss unit's label sideband and class count (cfg_n holds ``classes``)."""
    return max(LOSS.params["LW"], classes.bit_length())


def loss_unit(network: Network, logits: str, *, classes: int, ident: str, board: int,
              numerics: Numerics, loss: str = "softmax_ce") -> UnitDesign:
    """The error at the logits (fpdeep_loss): softmax cross-entropy (numerics §10.1) or MSE
    (the difference times the 16-bit constant of 2/N)."""
    if loss not in LOSSES:
        raise FpdeepError(f"loss {loss!r} is not supported; choose one of {', '.join(LOSSES)}")
    if classes >= LOSS_CLASS_LIMIT:
        raise FpdeepError(f"the loss unit takes fewer than {LOSS_CLASS_LIMIT} classes, "
                          f"the network has {classes}")
    owner = _owner(network, logits)
    fz, fe = numerics.fmt("act", owner).frac, numerics.fmt("err", owner).frac
    mse_m, mse_r = scale_constant(2 / classes) if loss == "mse" else (0, 0)
    mse_shift = LOSS.encode("cfg_mse_shift", fz + mse_r - fe) if loss == "mse" else 0
    return UnitDesign("loss", logits, ident, board,
                      {"NMAX": _pow2(classes), "LW": loss_label_bits(classes)},
                      {"cfg_kind": int(loss == "mse"), "cfg_n": classes,
                       "cfg_ushift": LOSS.encode("cfg_ushift", fz + 15 - 16), "cfg_fe": fe,
                       "cfg_fz": fz, "cfg_mse_m": mse_m, "cfg_mse_shift": mse_shift},
                      {}, {"elements": classes, "loss": loss})


def psum_unit(layer: str, *, shift: int, slices: int, elements: int, ident: str,
              board: int) -> UnitDesign:
    """The reduction of a split layer's raw partial input errors (fpdeep_psum)."""
    return UnitDesign("psum", layer, ident, board, {},
                      {"cfg_shift": PSUM.encode("cfg_shift", shift)}, {},
                      {"elements": elements, "slices": slices})


def sgd_unit(board: int, *, vel_width: int = 0) -> UnitDesign:
    """The board's weight update: plain SGD (fpdeep_sgd), or with ``vel_width``-bit velocities
    for momentum and weight decay (fpdeep_sgd_momentum)."""
    if vel_width:
        return UnitDesign("sgd", "", "sgd", board, {"VW": vel_width}, info={"velocity": True})
    return UnitDesign("sgd", "", "sgd", board)


@dataclass(frozen=True)
class LinkModel:
    """The link between board ``west`` and board ``west + 1`` (both directions): its ports
    carry ``words_per_beat`` link words a beat, the simulation link model passes ``num``
    beats per ``den`` cycles after ``latency`` cycles, and a hop moves ``word_num`` words per
    ``word_den`` cycles, bounded by ``bound`` (one of `fpdeep.planning.perf.LINK_BOUNDS`)."""

    west: int
    latency: int
    num: int
    den: int
    words_per_beat: int = 1
    word_num: int = 1
    word_den: int = 1
    bound: str = "source"
    frame_beats: int = perf.LINK_FRAME_BEATS  # payload beats of a data frame, at most


#: Finest link rate the simulation link model is given: num/den beats per cycle, den <= this.
LINK_RATE_DENOMINATOR = 1 << 10


def model_rate(beats: Fraction) -> Fraction:
    """``beats`` per cycle as a simulation model's token bucket takes it (a link channel's,
    the memory model's): at most 1, with a denominator of at most `LINK_RATE_DENOMINATOR`."""
    return min(Fraction(1), beats).limit_denominator(LINK_RATE_DENOMINATOR)


def link_model(west: int, *, rate: perf.LinkRate, gbps: float, latency: int) -> LinkModel:
    """The link between boards ``west`` and ``west + 1`` at ``rate`` (``gbps`` line rate): the
    line's beats per cycle as a fraction of at most 1 (the ports take a beat a cycle), and what
    a hop moves."""
    beats = Fraction(rate.line_words_per_cycle / rate.words_per_beat)
    if beats < Fraction(1, LINK_RATE_DENOMINATOR):
        least = gbps / float(beats) / LINK_RATE_DENOMINATOR
        raise FpdeepError(
            f"the link between boards {west} and {west + 1} carries {float(beats):.3g} beats "
            f"of {rate.port_bits} bits per cycle; the generated link model needs at least "
            f"1/{LINK_RATE_DENOMINATOR} (--link-gbps {least:.3g} or more at this clock)")
    beat_rate = model_rate(beats)
    limits = {"source": Fraction(rate.source_words_per_cycle).limit_denominator(),
              "port": Fraction(rate.words_per_beat), "line rate": beat_rate * rate.words_per_beat}
    words = min(limits.values())
    bound = next(k for k in perf.LINK_BOUNDS if limits[k] == words)
    return LinkModel(west, latency, beat_rate.numerator, beat_rate.denominator,
                     rate.words_per_beat, words.numerator, words.denominator, bound)
