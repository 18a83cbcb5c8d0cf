"""The terminal, through rich: every table and progress display of the
command line is made here, so they look alike.

- Colour only on a terminal: rich leaves it out when the stream is a pipe or
  a file, and when NO_COLOR is set.
- Width: a terminal's own; 100 columns when the output is not a terminal (a
  log, a test); `--wide` lifts the limit, so that a wide table is not
  wrapped. A table wider than that wraps its cells' words, never cuts them.
- Plain text on demand (`text()`): what a function returns for a caller
  that wants a string, a test or a log."""

import io
import sys

from rich import box
from rich.console import Console
from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress
from rich.table import Table
from rich.text import Text

from scabench.units import wall_time

MAX_WIDTH = 100
UNLIMITED = 1000

# Styles, by what they mean rather than how they look.
WARN = "bold yellow"
BAD = "bold red"
GOOD = "green"
TITLE = "bold"
MUTED = "dim"
# A study's verdict on a claim.
VERDICT_STYLES = {"reproduced": "green", "differs": "yellow", "not reproduced": "red"}


def console(stream=None, wide=False):
    """A rich Console on `stream` (stdout by default)."""
    stream = stream or sys.stdout
    terminal = stream.isatty() if hasattr(stream, "isatty") else False
    width = UNLIMITED if wide else (None if terminal else MAX_WIDTH)
    # highlight=False: rich would otherwise colour every number it sees.
    return Console(file=stream, width=width, highlight=False, soft_wrap=False, emoji=False)


def err_console(wide=False):
    return console(sys.stderr, wide)


def table(*columns, title=None, first_left=True, **kwargs):
    """A table in the house style: a rule under the header, the first column
    left-aligned (labels), the others right-aligned (figures). A column is a
    header string, or a (header, options) pair for rich's add_column."""
    # Titles, headers and cells are Text, never markup: "[policy]" is a
    # spec's table, not a style.
    t = Table(
        title=Text(title) if title else None,
        title_justify="left",
        title_style=TITLE,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        **kwargs,
    )
    for i, column in enumerate(columns):
        header, options = column if isinstance(column, tuple) else (column, {})
        # The labels stay whole; the figures' headers wrap to make room.
        options = {
            "justify": "left" if i == 0 and first_left else "right",
            "overflow": "fold",
            "no_wrap": i == 0,
            **options,
        }
        t.add_column(Text(header), **options)
    return t


def add_rows(t, rows):
    """Rows of values; None shows as an en dash."""
    for row in rows:
        t.add_row(*(v if isinstance(v, Text) else Text("–" if v is None else str(v)) for v in row))
    return t


def show(items, out=None):
    """Prints a view: a list of renderables (rich Tables, Text lines, str).
    A line of text is printed whole, never wrapped by rich (a terminal
    wraps it; a log or a grep sees it on one line); a table fits the width."""
    out = out or console()
    for item in items:
        if isinstance(item, str):
            item = Text(item)
        out.print(item, soft_wrap=isinstance(item, Text))


def text(items, wide=False):
    """A view as plain text (no colour), tables 100 columns wide unless `wide`."""
    buffer = io.StringIO()
    show(
        items,
        Console(
            file=buffer,
            width=UNLIMITED if wide else MAX_WIDTH,
            highlight=False,
            color_system=None,
            force_terminal=False,
            emoji=False,
        ),
    )
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())


class Progress:
    """Progress through steps of known estimated length (a campaign's runs,
    a benchmark's repeats): on a terminal, rich's bar with the time left
    under the lines said; elsewhere, each line said, with the elapsed time
    and the time left appended to the lines that close a step.

    rich estimates the time left from the estimated seconds done so far and
    the time they took, over the whole run (not its last 30 s: one run can
    be longer than that)."""

    def __init__(self, total_s, description="", stream=None):
        self.console = console(stream or sys.stderr)
        self.live = self.console.is_terminal
        self.bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=self.console,
            disable=not self.live,
            speed_estimate_period=1e9,
            transient=True,
        )
        self.task = self.bar.add_task(description, total=max(total_s, 1e-9))
        self.bar.advance(self.task, 0)  # the first sample of the rate: the start

    def __enter__(self):
        self.bar.start()
        return self

    def __exit__(self, *exc):
        self.bar.stop()

    def say(self, text, style=None):
        """A line, above the bar on a terminal; whole, never wrapped by rich
        (a log or a grep sees one run on one line)."""
        self.console.print(text, style=style, markup=False, soft_wrap=True)

    @property
    def elapsed_s(self):
        return self.bar.tasks[0].elapsed or 0.0

    def advance(self, estimated_s, text=None, style=None):
        """One step done, estimated at estimated_s; `text` says how it went."""
        self.bar.advance(self.task, estimated_s)
        if text is None:
            return
        if not self.live:
            left = self.bar.tasks[0].time_remaining
            text += f"  [{wall_time(self.elapsed_s)}" + (f", ~{wall_time(left)} left]" if left is not None else "]")
        self.say(text, style)
