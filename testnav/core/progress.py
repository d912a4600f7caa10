"""Progress bars where a person watches, silence where a log is written.

`progress=auto` (the default of run.py and `testnav.Tester`) shows bars in a terminal (stderr
is one) and in a notebook (through `tqdm.auto`, widgets where ipywidgets is installed), and
none in a CI job (the `CI` variable that GitHub Actions, GitLab CI and most others set) or when
stderr goes to a file or a pipe, where each redraw would be one more line of log.
"""

from __future__ import annotations

import os
import sys

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


def resolve(progress) -> bool:
    """`progress` as given (auto | true | false, or None for auto) as a yes or no."""
    if progress is None or (isinstance(progress, str) and progress.lower() == "auto"):
        return watching()
    if isinstance(progress, bool):
        return progress
    if isinstance(progress, str) and progress.lower() in VALID:
        return progress.lower() == "true"
    raise UserError(f"progress={progress} (valid: {', '.join(VALID)})")


def bar(**kwargs):
    """A tqdm bar that renders as a widget in a notebook and as text in a terminal."""
    from tqdm.auto import tqdm

    return tqdm(**kwargs)
