"""The static schedule of a training step and its cycle model, against hand counts."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

import fpdeep
from fpdeep.design.lower import lower
from fpdeep.design.units import LinkModel
from fpdeep.errors import FpdeepError
from fpdeep.planning import perf
from fpdeep.resources import PACKAGE_DIR
from fpdeep.schedule.tasks import (
    LINK_RX_RESTART,
    LOSS_OVERHEAD,
    Task,
    line_spans,
    link_latency,
    pipeline_figures,
    schedule,
    step_cycles,
    task_cycles,
    timeline,
)


def _fc_net(tmp_path):
    from golden_nets import OnnxNet

    net = OnnxNet((4, 1, 1))
    net.flatten()
    net.fc(3)
    network, _ = net.load(tmp_path / "fc.onnx")
    return network


def test_single_fc_step_matches_a_hand_count(tmp_path):
    network = _fc_net(tmp_path)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=2)
    d = lower(network, plan)
    (fc,) = d.boards[0].slices
    tm, tn = fc.engines["fp"].params.tm, fc.engines["fp"].params.tn
    run = -(-3 // tm) * -(-4 // tn) + perf.ENGINE_LATENCY + 1  # + the start pulse
    wg_tm, wg_tn = fc.engines["wg"].params.tm, fc.engines["wg"].params.tn
    wg_run = -(-3 // wg_tm) * -(-4 // wg_tn) + perf.ENGINE_LATENCY + 1
    # the sequencer's cycles around the beats (fpdeep.schedule.tasks): 2 to fetch the first
    # word and see the last taken, 2 to store the last result, 3 before a flush's drain
    fp = (4 + 2) + run + (3 + 2)         # FP engine: x in, run, y out
    loss = 3 * (48 + 4) + 2              # loss unit on 3 logits: 48-bit division per class
    wg = (4 + 2) + wg_run                # WG: x and dy in (4 beats), run, results held
    # weights in; flush pulse and WG sums out; SGD streams weight and bias
    load, flush, sgd = 12 + 2, 3 + 15 + 2, 15 + 2 * 3
    assert fp < loss and wg < loss
    # Image 1's FP runs during image 0's loss; the loss unit is the bottleneck: image 1's loss
    # starts when image 0's ends. Flatten costs nothing (the stream already is the vector).
    expected = load + fp + 2 * loss + wg + flush + sgd
    tasks = schedule(d, network, batch=2).tasks
    assert step_cycles(tasks, links=[]) == expected
    figures = pipeline_figures(d, network)
    assert figures.ii_cycles == loss and "loss" in figures.bottleneck
    assert figures.batch_cycles(2) == expected
    # the first compute layer has no BP engine and nothing is sent to the input
    assert not any(t.what == "bp" and t.kind == "engine" for t in tasks)
    assert {t.kind for t in tasks if t.layer == network.layers[0].name} == set()  # Flatten


def test_timeline_keeps_dependencies_and_one_task_per_resource():
    network = fpdeep.load_onnx(PACKAGE_DIR / "examples" / "digits_cnn.onnx")
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=3), batch=4)
    d = lower(network, plan)
    tasks = schedule(d, network, batch=4).tasks
    durations = [task_cycles(t, links=d.links) for t in tasks]
    tails = [link_latency(t, links=d.links) for t in tasks]
    assert any(tails) and all(t == 0 for t, task in zip(tails, tasks, strict=True)
                              if task.kind != "link")
    span = timeline(tasks, durations, tails)
    for k, task in enumerate(tasks):
        # what the hardware waits for by itself delays the work, not the start
        hard = max((span[a][1] for a in task.after), default=0)
        assert span[k][1] == max(span[k][0], hard) + durations[k]
        assert all(span[dep][1] <= span[k][0] for dep in task.deps)
        assert all(dep < k for dep in (*task.deps, *task.after))  # after what it waits for
    # a resource holds one task at a time; a link is free again while its words fly
    by_resource: dict[str, list[tuple[int, int]]] = {}
    for task, s, tail in zip(tasks, span, tails, strict=True):
        by_resource.setdefault(task.resource, []).append((s[0], s[1] - tail))
    for spans in by_resource.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    # images overlap: the step is far shorter than its tasks end to end, and the planner's
    # (B-1)*II + one-image figure is close to the timeline
    total = max(end for _, end in span)
    assert total < sum(durations) / 2
    # the double buffers: the first engine's next image streams in while it runs (its input
    # is all there), and an engine's last result drains meanwhile
    run = {(t.engine, t.image): span[k] for k, t in enumerate(tasks) if t.kind == "run"}
    for k, t in enumerate(tasks):
        if t.kind == "engine" and t.image > 0 and t.what == "fp" and t.layer == "conv1":
            assert span[k][0] < run[(t.engine, t.image - 1)][1]
        if t.kind == "drain" and (t.engine, t.image + 1) in run:
            assert span[k][1] > run[(t.engine, t.image + 1)][0]
    # (the formula counts the one-image fill whole; the double buffers overlap part of it)
    figures = pipeline_figures(d, network)
    assert abs(figures.batch_cycles(4) - total) <= 0.06 * total


def test_links_go_hop_by_hop_at_their_word_rate():
    # a word a cycle in beats of 7; 2 words per 5 cycles in beats of 3
    links = [LinkModel(0, latency=100, num=1, den=1, words_per_beat=7),
             LinkModel(1, latency=50, num=2, den=15, words_per_beat=3, word_num=2, word_den=5,
                       bound="line rate")]
    t = Task("link", 0, "link", bytes=1000, dst=2)  # 500 words over both links
    # Each hop: a cycle until the first word is in the sending gearbox, the gearboxes and the
    # reliable link, two cycles to store the last word. The link sends a frame of at most 64
    # beats once it is closed (its header 3 cycles after the closing word went in), header,
    # payload and trailer at the line's beat rate; the receiving gearbox passes on its words
    # one a cycle from a cycle after the trailer arrived, after the frames before it.
    # First link: frames of 448 words (64 beats) and 52 (8 beats), a beat a cycle.
    frame0 = (448 + 3 + 65) + 100 + 1  # its first word out at 617, its last 447 later
    frame1 = frame0 + 448  # out after frame 0's words (sent at 517 + 9, arrived long before)
    first = 1 + (frame1 + 51) + 2
    # Second link: the replay buffer takes a word a cycle while the line carries 2 beats of 3
    # words per 15 cycles; frames of 192, 192 and 116 words (64, 64 and 39 beats), each sent
    # after the one before (65 beats: 488 cycles, 40 beats: 300), 50 cycles of latency.
    sent0 = 192 + 3 + 488
    sent1 = sent0 + 1 + 488
    sent2 = sent1 + 1 + 300
    assert sent0 + 51 + 191 < sent1 + 51 and sent1 + 51 + 191 < sent2 + 51  # the line bounds
    second = 1 + (sent2 + 51 + 115) + 2
    assert task_cycles(t, links=links) == first + second
    # the sender is free again 3 cycles after its last word went in: the rest is in flight
    tails = (first - (1 + 500 + 3)) + (second - (1 + 500 + 3))
    assert link_latency(t, links=links) == tails
    back = Task("link", 2, "link", bytes=6, dst=1)  # 3 words, second link only: one full beat
    assert task_cycles(back, links=links) == 1 + (3 + 3 + 15 + 51 + 2) + 2


def test_a_links_receiver_stores_transfers_in_the_order_sent():
    # a word a cycle in beats of 7; one line from board 0 to board 1
    links = [LinkModel(0, latency=100, num=1, den=1, words_per_beat=7)]
    long = Task("link", 0, "link", bytes=1000, dst=1, resource="link:0>1")  # 500 words
    short = Task("link", 0, "link", bytes=20, dst=1, resource="link:0>1")  # 10 words
    tasks = [long, short]
    durations = [task_cycles(t, links=links) for t in tasks]
    tails = [link_latency(t, links=links) for t in tasks]
    lines = [line_spans(t, links=links) for t in tasks]
    span = timeline(tasks, durations, tails, None, lines)
    # the sender takes the short transfer once the long one's words are in (1 + 500 + 3) and
    # its frame follows the long one's on the line, arriving well before the long transfer's
    # last word is stored; the receiver stores it after that word, its instructions and
    # first word LINK_RX_RESTART cycles later, a word a cycle
    assert span[0] == (0, durations[0])
    assert span[1][0] == 1 + 500 + 3
    assert span[1][0] + durations[1] < span[0][1]  # what the line alone would allow
    assert span[1][1] == span[0][1] + LINK_RX_RESTART + 10
    # without the lines, the model had the short transfer end first
    free = timeline(tasks, durations, tails)
    assert free[1][1] < free[0][1]


def test_the_link_model_takes_the_plans_rate_in_beats():
    from fpdeep.design.units import link_model

    # 20.625 Gb/s at 250 MHz: 0.625 beats of 128 bits a cycle; the source bounds the hop
    fast = link_model(0, rate=perf.link_rate(gbps=20.625, clock_mhz=250, data_bits=16,
                                             port_bits=128), gbps=20.625, latency=128)
    assert (fast.num, fast.den, fast.words_per_beat) == (5, 8, 7)
    assert (fast.word_num, fast.word_den, fast.bound) == (1, 1, "source")
    # 1.1 Gb/s: 1/30 of a beat a cycle, 7/30 words
    slow = link_model(0, rate=perf.link_rate(gbps=1.1, clock_mhz=250, data_bits=16,
                                             port_bits=128), gbps=1.1, latency=128)
    assert abs(slow.num / slow.den - 1.1e9 * 64 / 66 / 250e6 / 128) < 1e-4
    assert slow.bound == "line rate"
    assert Fraction(slow.word_num, slow.word_den) == Fraction(7 * slow.num, slow.den)
    # ports faster than the fabric: at most a beat a cycle
    wide = link_model(0, rate=perf.link_rate(gbps=100, clock_mhz=250, data_bits=16,
                                             port_bits=64), gbps=100, latency=128)
    assert (wide.num, wide.den, wide.word_num, wide.word_den) == (1, 1, 1, 1)


def test_split_layer_gets_a_reduction_and_slices_run_together():
    network = fpdeep.load_onnx(PACKAGE_DIR / "examples" / "digits_cnn.onnx")
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=3), batch=2)
    tasks = schedule(lower(network, plan), network, batch=2).tasks
    for image in (0, 1):
        fp = [k for k, t in enumerate(tasks)
              if t.what == "fp" and t.layer == "conv2" and t.image == image]
        assert len({tasks[k].board for k in fp}) == 3  # 3 slices on 3 boards, independent
        assert not any(set(fp) & set(tasks[k].deps) for k in fp)
    sums = [t for t in tasks if t.what == "sum"]
    assert [t.layer for t in sums] == ["conv2", "conv2"]
    assert all(len(t.deps) == 3 for t in sums)  # the three slices' partial errors


def test_schedule_rejects_bad_batch(tmp_path):
    network = _fc_net(tmp_path)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=2)
    with pytest.raises(FpdeepError, match="batch must be a positive integer"):
        schedule(lower(network, plan), network, batch=0)


def test_mse_loss_unit_constants_and_cost(tmp_path):
    from fpdeep.hwlib import LOSS
    from fpdeep.numerics import Numerics, scale_constant

    network = _fc_net(tmp_path)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=2)
    built = lower(network, plan, loss="mse")
    (unit,) = [u for b in built.boards for u in b.units if u.kind == "loss"]
    m, r = scale_constant(2 / 3)  # 2/N for 3 classes (numerics: the MSE error)
    fz = Numerics().fmt("act", "gemm3").frac
    fe = Numerics().fmt("err", "gemm3").frac
    assert unit.forward["cfg_kind"] == 1 and unit.forward["cfg_mse_m"] == m
    assert unit.forward["cfg_mse_shift"] == (fz + r - fe) % (1 << LOSS.width("cfg_mse_shift"))
    tasks = schedule(built, network, batch=1).tasks
    (loss,) = [t for t in tasks if t.rtl == "loss"]
    # the logits in, then one error per cycle
    assert loss.what == "mse" and task_cycles(loss, links=[]) == 2 * 3 + LOSS_OVERHEAD
