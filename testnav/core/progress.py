"""Progress where a person watches, and lines where a log is written.

`progress=auto` (the default of run.py and `testnav.Tester`) shows bars in a terminal (stderr is
one) and in a notebook (through `tqdm.auto`, widgets where ipywidgets is installed). Where nobody
watches — a CI job (the `CI` variable that GitHub Actions, GitLab CI and most others set), stderr
going to a file or a pipe — a redrawn bar would be one more line of log per redraw, so instead one
line is written at least every `INTERVAL` (30) seconds: what is running, done / total, the time
spent and about how much is left (`Lines`); work that ends sooner writes nothing. `progress=false`
writes neither.
"""

from __future__ import annotations

import os
import sys
import time

from ..errors import UserError

VALID = ("auto", "true", "false")


def in_notebook() -> bool:
    """A Jupyter kernel (IPython's, as ipykernel starts it) runs this process."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
        return shell is not None and "IPKernelApp" in shell.config
    except Exception:
        return False


def watching() -> bool:
    """Whether a person is likely watching this process's progress."""
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        return False
    if in_notebook():
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def resolve(progress) -> bool | None:
    """`progress` as given (auto | true | false, or None for auto): True (bars), False (silent), or
    None for auto where nobody watches (a line every INTERVAL seconds)."""
    if progress is None or (isinstance(progress, str) and progress.lower() == "auto"):
        return True if watching() else None
    if isinstance(progress, bool):
        return progress
    if isinstance(progress, str) and progress.lower() in VALID:
        return progress.lower() == "true"
    raise UserError(f"progress={progress} (valid: {', '.join(VALID)})")


INTERVAL = 30.0  # seconds between two lines where nobody watches


def bar(progress: bool | None = True, **kwargs):
    """A tqdm bar that renders as a widget in a notebook and as text in a terminal (progress True);
    `Lines` where nobody watches (None); nothing (False, or tqdm's `disable=True`)."""
    from tqdm.auto import tqdm

    if kwargs.pop("disable", False) or progress is False:
        return tqdm(disable=True, **kwargs)
    if progress is None:
        return Lines(**kwargs)
    return tqdm(**kwargs)


def duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Lines:
    """tqdm's interface (a context manager with `update`, `n`, `set_postfix_str`, `close`) writing one
    line to stderr at least every `interval` seconds from a timer thread, however long an update
    takes: `desc: done/total unit (p %), m:ss spent, about m:ss left [postfix]`; and a last line at
    the end if any was written."""

    def __init__(self, total=None, desc: str = "", unit: str = "it", initial: int = 0, interval=None, **_):
        import threading

        self.total, self.desc, self.unit, self.n, self.start_n = total, desc, unit, int(initial), int(initial)
        self.postfix, self.interval = "", float(INTERVAL if interval is None else interval)
        self.t0, self.written = time.monotonic(), 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done.wait(self.interval):
            self.write()

    def line(self) -> str:
        spent = time.monotonic() - self.t0
        total = f"/{self.total:,}" if self.total else ""
        share = f" ({100 * self.n / self.total:.0f} %)" if self.total else ""
        rate = (self.n - self.start_n) / spent if spent > 0 else 0
        left = (
            f", about {duration((self.total - self.n) / rate)} left"
            if self.total and rate > 0 and self.n < self.total
            else ""
        )
        post = f" [{self.postfix}]" if self.postfix else ""
        return f"{self.desc}: {self.n:,}{total} {self.unit}{share}, {duration(spent)} spent{left}{post}"

    def write(self) -> None:
        print(self.line(), file=sys.stderr, flush=True)
        self.written += 1

    def update(self, n: int = 1) -> None:
        self.n += int(n)

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = s

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        if not self.done.is_set():
            self.done.set()
            self.thread.join()
            if self.written:
                self.write()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
