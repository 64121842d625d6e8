"""Progress reporting: a bar's lines in a log, and a host's progress file shown on a bar."""

from __future__ import annotations

import io
import json
import threading

import pytest

import fpdeep.progress
from fpdeep.cosim.hosts import _follow
from fpdeep.progress import Progress


def test_a_log_gets_a_line_a_note_and_the_detail_at_most_every_interval(monkeypatch):
    log = io.StringIO()
    progress = Progress(log, live=False)
    with progress.bar("simulating", 2) as bar:
        bar.update(0, "step 1 of 2", detail="cycle 0")
        bar.update(0, "step 1 of 2", detail="cycle 10")  # within the interval: no line
        monkeypatch.setattr(fpdeep.progress, "LOG_DETAIL_S", 0.0)
        bar.update(0, "step 1 of 2", detail="cycle 20")
        bar.update(1, "step 2 of 2")
    assert log.getvalue().splitlines() == [
        "  simulating: step 1 of 2, cycle 0", "  simulating: step 1 of 2, cycle 20",
        "  simulating: step 2 of 2"]


@pytest.mark.parametrize("content, line", [
    (None, "run: building the simulator"),
    ({"configuring": True, "cycle": 1_048_576}, "run: configuring the boards, cycle 1,048,576"),
    ({"step": 2, "steps": 5, "task": 0, "tasks": 1, "cycle": 7}, "run: step 3 of 5, cycle 7"),
    ({"step": 2, "steps": 5, "task": 0, "tasks": 1}, "run: step 3 of 5"),  # an older host's
    ({"step": 0, "steps": 1, "task": 0, "tasks": 1, "cycle": 9, "reading": True},
     "run: step 1 of 1, reading back, cycle 9"),
])
def test_the_hosts_progress_file_is_shown_on_the_bar(tmp_path, content, line):
    path = tmp_path / "progress.json"
    if content is not None:
        path.write_text(json.dumps(content))
    log = io.StringIO()
    stop = threading.Event()
    with Progress(log, live=False).bar("run", 1) as bar:
        follower = threading.Thread(target=_follow, args=(path, stop, bar, "step", None))
        follower.start()
        stop.wait(0.8)  # the follower reads the file every half second
        stop.set()
        follower.join()
    assert log.getvalue().splitlines() == [f"  {line}"]


def test_the_speed_counts_from_the_first_cycle_seen(monkeypatch):
    from fpdeep.cosim import hosts

    clock = iter([100.0, 110.0])
    monkeypatch.setattr(hosts.time, "monotonic", lambda: next(clock))
    speed = hosts._Speed()
    assert speed.show(None) == ""
    assert speed.show(1_000) == "cycle 1,000"
    assert speed.show(501_000) == "cycle 501,000, 50,000 cycles/s"
