"""Progress of long work on stderr: a live bar on a terminal, a few plain lines in a log.

A redirected run must stay readable (no carriage-return fragments), so the live display is
used only when stderr is a terminal; otherwise each stage and each bar's milestones print one
line each.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

#: A log (not a terminal) gets a bar's changing detail at most this often.
LOG_DETAIL_S = 60.0


def _joined(note: str, detail: str) -> str:
    """A bar's note and detail as one phrase: ``step 1 of 2, cycle 4,096``."""
    return ", ".join(part for part in (note, detail) if part)


class Bar:
    """One task's progress: ``update(done, note)`` with ``done`` out of the bar's ``total``."""

    def __init__(self, owner: Progress, description: str, total: int):
        self._owner = owner
        self.description = description
        self.total = max(total, 1)
        self._task = None
        self._last_note = ""
        self._logged = time.monotonic()  # when the log last got a line of this bar

    def update(self, done: int, note: str = "", *, detail: str = "") -> None:
        """``detail`` follows the note on a live bar; a log gets a line when the note changes,
        and the detail (what changes every update: a loss, a cycle count) at most every
        `LOG_DETAIL_S` seconds."""
        owner = self._owner
        if owner.live is not None and self._task is not None:
            owner.live.update(self._task, completed=done, total=self.total,
                              note=_joined(note, detail))
        elif ((note and note != self._last_note)
              or (detail and time.monotonic() - self._logged >= LOG_DETAIL_S)):
            owner.line(f"{self.description}: {_joined(note, detail)}")
            self._logged = time.monotonic()
        self._last_note = note


class Progress:
    """Where fpdeep reports progress; ``Progress.quiet()`` reports nothing."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None,
                 enabled: bool = True):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self._live_wanted = (enabled and self.stream.isatty()) if live is None else live
        self.live = None  # a rich.progress.Progress while a bar is shown on a terminal
        self._started = time.monotonic()

    @classmethod
    def quiet(cls) -> Progress:
        return cls(enabled=False, live=False)

    def line(self, text: str) -> None:
        """One plain line (printed above a live bar when one is shown)."""
        if not self.enabled:
            return
        if self.live is not None:
            self.live.console.print(text, markup=False, highlight=False)
        else:
            self.stream.write(f"  {text}\n")
            self.stream.flush()

    def step(self, what: str, detail: str = "") -> None:
        """A stage of the flow has begun."""
        self.line(f"{what} {detail}".rstrip())

    @contextmanager
    def bar(self, description: str, total: int) -> Iterator[Bar]:
        """A bar for work of ``total`` units; live on a terminal, milestones in a log."""
        bar = Bar(self, description, total)
        if not self._live_wanted:
            yield bar
            return
        from rich.console import Console
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        console = Console(file=self.stream, force_terminal=True)
        with RichProgress(TextColumn("  {task.description}"), BarColumn(),
                          TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                          console=console, transient=False) as live:
            self.live = live
            bar._task = live.add_task(description, total=bar.total, note="")
            try:
                yield bar
            finally:
                self.live = None
