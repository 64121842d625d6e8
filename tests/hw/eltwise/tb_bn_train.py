"""cocotb test for the training BatchNormalization unit against fpdeep.golden.batchnorm: a
training step's passes in order (MEAN, VAR with the running statistics' update, NORM per image,
GRAD, BACK per image), each y, dx, running-statistics word and gradient sum compared bit for
bit, once with random stalls on every stream and once without, where each pass's cycles are
measured against the module's formulas."""

from __future__ import annotations

from fractions import Fraction

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge
from stream_models import StreamSink, StreamSource, begin

from fpdeep.golden import batchnorm as bn
from fpdeep.hwlib import BN_TRAIN
from fpdeep.numerics import ACC_WIDTH, Format, requantise, scale_constant

WORD = (1 << ACC_WIDTH) - 1
MEAN, VAR, NORM, GRAD, BACK = range(5)


def _cycles(images: int, c: int, plane: int) -> dict[int, int]:
    """Each pass's cycles without stalls, as the module's header gives them."""
    n, p = images * c * plane, c * plane
    return {MEAN: n + 2 * c + 1, VAR: n + 12 * c + 3, NORM: 2 * c + p + 2,
            GRAD: n + 5 * c + 2, BACK: c + p + 2}


def _activations(rng: np.random.Generator, shape, bits: int) -> np.ndarray:
    """(B, C, H, W) 16-bit values: bits = 16 puts them at the two ends of the range (the largest
    variances); else each channel spreads over 1 to ``bits`` bits around its own offset."""
    b, c, h, w = shape
    if bits == 16:
        return rng.choice([-(1 << 15), (1 << 15) - 1], size=shape)
    spread = (1 + np.arange(c) * (bits - 1) // max(c - 1, 1)).reshape(1, c, 1, 1)
    offset = rng.integers(-(1 << 14), 1 << 14, size=(1, c, 1, 1))
    x = offset + (rng.integers(-(1 << 15), 1 << 15, size=shape) >> (16 - spread))
    return np.clip(x, -(1 << 15), (1 << 15) - 1)


def _signed(rng: np.random.Generator, size, bits: int) -> np.ndarray:
    return rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), size=size)


async def _pass(dut, pyrng, which: int, streams: dict[str, list[int]], out: str | None,
                expect: int, *, stalls: bool) -> tuple[StreamSink | None, int]:
    """One pass: its streams driven, ``expect`` beats collected on ``out``; the cycles from the
    pass's first beat taken to the unit idle again (taking the next pass's first beat)."""
    idle = 0.3 if stalls else 0.0
    await RisingEdge(dut.clk)
    dut.cfg_pass.value = which
    sources = [StreamSource(dut, BN_TRAIN.stream(name), beats, rng=pyrng, idle=idle)
               for name, beats in streams.items()]
    sink = (None if out is None
            else StreamSink(dut, BN_TRAIN.stream(out), rng=pyrng, stall=idle, expect=expect))
    endpoints = [*sources, *([sink] if sink else [])]
    start = None
    for cycle in range(40 * sum(len(b) for b in streams.values()) + 1000):
        if cycle:
            await RisingEdge(dut.clk)
        for ep in endpoints:
            ep.drive()
        await ReadOnly()
        for ep in endpoints:
            ep.observe()
        if start is None and any(s.fired for s in sources):
            start = cycle
        elif start is not None and int(dut.st.value) == 0:
            assert all(ep.done for ep in endpoints), f"pass {which} ended early"
            return sink, cycle - start
    raise AssertionError(f"pass {which} did not end")


@cocotb.test()
async def bn_train_matches_golden(dut):
    args, rng, pyrng = await begin(dut, BN_TRAIN)
    for shape, fracs, bits, momentum, epsilon in args["cases"]:
        await RisingEdge(dut.clk)  # out of the last pass's read-only phase
        images, c, h, w = shape
        x_fmt, y_fmt, e_fmt, dx_fmt, w_fmt = (Format(16, f) for f in fracs)
        x = _activations(rng, (images, c, h, w), bits[0])
        e = _signed(rng, x.shape, bits[1])
        gamma, beta = _signed(rng, c, bits[2]), _signed(rng, c, bits[2])
        run_mean, run_var = _signed(rng, c, 32), _signed(rng, c, 32)
        run_mean[0], run_mean[-1] = -(1 << 31), (1 << 31) - 1  # the ends of 32 bits
        run_var[0], run_var[-1] = (1 << 31) - 1, -(1 << 31)
        m = bn.check_count(x, "bn")
        mean_fmt, var_fmt = bn.running_formats(x_fmt)

        # the golden model
        mu, var, d = bn.batch_statistics(x, x_fmt=x_fmt, acc_width=ACC_WIDTH)
        if isinstance(epsilon, float):
            eps_q = bn.epsilon_fixed(epsilon, x_fmt)
            xhat, z, k = bn.normalise(d, var, epsilon=epsilon, x_fmt=x_fmt)
        else:  # epsilon_fixed stops below 2^31: eps_q given, w shifted right in rsqrt
            eps_q = epsilon
            z, k = bn.rsqrt_fixed(var + eps_q)
            xhat = requantise(d * z.reshape(1, -1, 1, 1),
                              bn.xhat_shift(k).reshape(1, -1, 1, 1), bn.XHAT)
        y = bn.affine(xhat, gamma, beta, w_fmt=w_fmt, out_fmt=y_fmt)
        sum_ex, sum_e = bn.gradient_sums(e, xhat, acc_width=ACC_WIDTH)
        dx = bn.backward(e, xhat, gamma, z, k, x_fmt=x_fmt, e_fmt=e_fmt, w_fmt=w_fmt,
                         out_fmt=dx_fmt, acc_width=ACC_WIDTH)
        new_mean = bn.running_update(run_mean, mu, momentum=momentum, fmt=mean_fmt)
        new_var = bn.running_update(run_var, bn.unbiased(var, m), momentum=momentum,
                                    fmt=var_fmt)
        _, eshift = bn.error_factor(gamma, z, k, x_fmt=x_fmt, e_fmt=e_fmt, w_fmt=w_fmt,
                                    out_fmt=dx_fmt)
        case = f"shape {shape}, formats {fracs}, bits {bits}, momentum {momentum}, eps {epsilon}"
        dut._log.info("%s: k %s, z %s", case, k.tolist(), z.tolist())

        # the configuration
        mm, rm = scale_constant(Fraction(1, m))
        mu_m, ru = scale_constant(Fraction(m, m - 1))
        mc, rc = (0, 0) if Fraction(momentum) == 1 else scale_constant(1 - Fraction(momentum))
        for name, value in (("cfg_images", images), ("cfg_channels", c), ("cfg_plane", h * w),
                            ("cfg_mm", mm), ("cfg_rm", rm), ("cfg_mu", mu_m), ("cfg_ru", ru),
                            ("cfg_mc", mc), ("cfg_rc", rc), ("cfg_eps", eps_q)):
            getattr(dut, name).value = value
        dut.cfg_yshift.value = BN_TRAIN.encode("cfg_yshift",
                                               w_fmt.frac + bn.XHAT.frac - y_fmt.frac)
        dut.cfg_eshift.value = BN_TRAIN.encode("cfg_eshift", int(eshift[0] - k[0]))

        def words(*columns):
            return [int(v) & WORD for col in columns for v in col]

        cycles = _cycles(images, c, h * w)
        for stalls in (True, False):
            how = f"{case}, {'with' if stalls else 'without'} stalls"
            measured = {}
            _, measured[MEAN] = await _pass(dut, pyrng, MEAN, {"s_x": x.ravel().tolist()},
                                            None, 0, stalls=stalls)
            sink, measured[VAR] = await _pass(
                dut, pyrng, VAR, {"s_x": x.ravel().tolist(), "s_p": words(run_mean, run_var)},
                "m_g", 2 * c, stalls=stalls)
            assert sink.beats == [*new_mean.tolist(), *new_var.tolist()], f"{how}: running"
            assert sink.lasts == [0] * (2 * c - 1) + [1], how
            for b in range(images):
                sink, measured[NORM] = await _pass(
                    dut, pyrng, NORM, {"s_p": words(gamma, beta), "s_x": x[b].ravel().tolist()},
                    "m", x[b].size, stalls=stalls)
                assert sink.beats == y[b].ravel().tolist(), f"{how}: y of image {b}"
                assert sink.lasts == [0] * (x[b].size - 1) + [1], how
            sink, measured[GRAD] = await _pass(
                dut, pyrng, GRAD, {"s_x": x.ravel().tolist(), "s_e": e.ravel().tolist()},
                "m_g", 2 * c, stalls=stalls)
            assert sink.beats == [*sum_ex.tolist(), *sum_e.tolist()], f"{how}: sums"
            assert sink.lasts == [0] * (2 * c - 1) + [1], how
            for b in range(images):
                sink, measured[BACK] = await _pass(
                    dut, pyrng, BACK, {"s_p": words(gamma), "s_x": x[b].ravel().tolist(),
                                       "s_e": e[b].ravel().tolist()},
                    "m", x[b].size, stalls=stalls)
                assert sink.beats == dx[b].ravel().tolist(), f"{how}: dx of image {b}"
                assert sink.lasts == [0] * (x[b].size - 1) + [1], how
            if not stalls:
                assert measured == cycles, f"{how}: cycles {measured}, formulas {cycles}"
                dut._log.info("%s: cycles %s", how, measured)

        for name, out in (("y", y), ("dx", dx)):  # not all saturated
            inside = (out > -(1 << 15)) & (out < (1 << 15) - 1)
            dut._log.info("%s: %s inside %d of %d", case, name, inside.sum(), out.size)
            assert inside.sum() >= out.size // 4 and len(set(out.ravel().tolist())) > c, \
                f"{case}: {name} {out.ravel().tolist()}"
        moved = (new_mean != run_mean).any() and (new_var != run_var).any()
        assert moved == (Fraction(momentum) != 1), f"{case}: running statistics"
        if momentum < 0:  # overshooting: both ends of 32 bits reached
            assert {-(1 << 31), (1 << 31) - 1} <= set(new_mean.tolist()), case
