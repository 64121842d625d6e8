from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from conftest import F64_REL
from plan_nets import chain

from fpdeep.errors import FpdeepError
from fpdeep.planning.cluster import make_cluster
from fpdeep.planning.planner import plan
from fpdeep.report.html import plan_html
from fpdeep.report.plan import knees, plan_json, plan_text, sweep_rows, sweep_text

ENGINE = {"tm", "tn", "cycles", "dsp"}
BOARD = {"index", "board", "slices", "dsp_used", "dsp_available", "memory_from",
         "bram_bits_used", "bram_blocks_used", "bram_bits_available", "bram_blocks_available",
         "uram_bits_used", "uram_blocks_used", "uram_bits_available", "uram_blocks_available",
         "cycles_per_image", "resources"}
LINK = {"from", "to", "bytes_forward_per_image", "bytes_backward_per_image", "gbps_needed",
        "gbps_available", "utilisation", "cycles_per_image", "port_bits", "word_bits",
        "words_per_cycle", "bound", "limits_words_per_cycle"}
TOTALS = {"ii_cycles", "clock_mhz", "images_per_s", "images_per_s_batch", "gops",
          "dsp_efficiency", "load_imbalance", "bottleneck", "latency_cycles"}


def sample_plan(n=3, strategy="optimal"):
    net = chain([8, 8, 16], size=8, fc=[32, 10], residual=True)
    return plan(net, make_cluster(board="vcu118", boards=n, link_gbps=1.0), strategy=strategy)


def test_json_has_exactly_the_documented_schema():
    result = sample_plan()
    data = json.loads(json.dumps(plan_json(result)))
    assert set(data) == {"model", "cluster", "strategy", "boards", "links", "totals"}
    assert data["strategy"] == "optimal"
    assert data["cluster"]["count"] == 3 and data["cluster"]["boards"] == ["vcu118"] * 3
    for board in data["boards"]:
        assert set(board) == BOARD
        # not lowered: the search model's estimate, over whole 36 Kib blocks
        assert board["memory_from"] == "estimate"
        assert board["bram_blocks_used"] == -(-board["bram_bits_used"] // (36 * 1024))
        for s in board["slices"]:
            assert set(s) == {"layer", "channels", "engines"}
            assert set(s["engines"]) == {"fp", "bp", "wg"}
            for engine in s["engines"].values():
                assert engine is None or set(engine) == ENGINE
    first = data["boards"][0]["slices"][0]
    assert first["engines"]["bp"] is None and first["channels"][0] == 0  # no BP for layer 1
    assert len(data["links"]) == 2
    for link in data["links"]:
        assert set(link) == LINK
        assert link["to"] == link["from"] + 1
        assert abs(link["utilisation"] - link["gbps_needed"] / link["gbps_available"]) < 1e-12
        # 1 Gb/s at 250 MHz: 3.88 payload bits a cycle, 64-bit ports of 3 words: the line
        # carries 3.88 / 64 beats of 3 words a cycle and bounds the hop
        assert link["port_bits"] == data["cluster"]["link_port_bits"] == 64
        limits = link["limits_words_per_cycle"]
        assert limits["port"] == 3 and limits["source"] == 1
        assert abs(limits["line rate"] - 1e9 * 64 / 66 / 250e6 / 64 * 3) < 1e-12
        assert link["bound"] == "line rate" and link["words_per_cycle"] == limits["line rate"]
    assert set(data["totals"]) == TOTALS


def test_link_gbps_needed_follows_throughput():
    result = sample_plan()
    link = result.links[0]
    payload = max(link.bytes_forward, link.bytes_backward) * 8 * result.totals.images_per_s
    assert abs(result.gbps_needed(link) * 1e9 * 64 / 66 - payload) < 1e-3 * payload


def test_text_and_html_reports():
    result = sample_plan()
    text = plan_text(result)
    assert "partition optimal" in text and "II " in text and "0->1" in text
    page = plan_html(result, sweep_rows([(1, sample_plan(1)), (3, result)]))
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") == 4  # load, resources, links, scaling
    # Only data blocks, no executable script; no address but the SVG namespace names.
    assert set(re.findall(r"<script[^>]*?>", page)) <= {
        f'<script type="application/json" data-plot="{n}">'
        for n in ("board-load", "resources", "links", "scaling")}
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert "https://" not in page
    assert "DS890" in page  # the board's sources are shown
    for svg in re.findall(r"<svg.*?</svg>", page, flags=re.S):
        ET.fromstring(svg)  # every plot is well-formed XML


def test_sweep_knee_and_errors():
    rows = sweep_rows([(1, sample_plan(1)), (2, sample_plan(2)), (4, FpdeepError("too big"))])
    assert rows[-1] == {"boards": 4, "error": "too big"}
    # one board is its own ideal, but through a division and a product of floats
    assert rows[0]["scaling_efficiency"] == pytest.approx(1.0, rel=F64_REL)
    k = knees(rows)
    assert set(k) == {"sublinear_from", "plateau_from", "link_bound_from"}
    assert "too big" in sweep_text(rows)
