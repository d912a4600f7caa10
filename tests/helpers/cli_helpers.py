"""`python run.py ARGS` inside the test process, for tests that check what the CLI does, not how it starts.

A subprocess pays a fresh interpreter importing torch and Hydra (seconds) for every call. Here the same
file, run.py, runs as `__main__` through runpy, so quote_free_text → precheck → @hydra.main run
unchanged. What a child process would give for free is set up and undone by hand: argv, cwd,
environment, the interpreter's default warning filters, stdout/stderr captured at the file-descriptor
level (Hydra's log handler, tqdm and C extensions write to the real streams), SystemExit as the exit
status, and afterwards the logging handlers Hydra installs and its global state, so that calls are
independent. What cannot be had in one process (a SIGKILL, a launcher that forks, the first import of
a module) still needs run_subprocess, the real thing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import runpy
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

RUN_PY = Path(__file__).resolve().parents[2] / "run.py"

# what a fresh `python run.py` starts with (no -W, no PYTHONWARNINGS), whatever pytest has set instead
DEFAULT_WARNING_FILTERS = [
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
]


def run_inprocess(args, cwd, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python run.py *args` in directory cwd, with env added to os.environ, in this process."""
    argv = [str(RUN_PY), *map(str, args)]
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115 (closed by the with below)
    with (
        _environ(env or {}),
        _cwd(cwd),
        _argv(argv),
        _logging_restored(),
        _captured(1, out, "stdout"),
        _captured(2, err, "stderr"),
        _fresh_warnings(),
    ):
        returncode = _main()
    return subprocess.CompletedProcess(argv, returncode, _read(out), _read(err))


def run_subprocess(args, cwd, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python run.py *args` in a fresh interpreter, as a user runs it."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, str(RUN_PY), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _main() -> int:
    from hydra.core.global_hydra import GlobalHydra

    try:
        runpy.run_path(str(RUN_PY), run_name="__main__")
        return 0
    except SystemExit as e:  # the interpreter's rule for the exit status
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        GlobalHydra.instance().clear()  # Hydra clears it in a finally, but not if it fails while starting


@contextlib.contextmanager
def _environ(env: dict):
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _cwd(path):
    saved = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _argv(argv):
    saved = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved


@contextlib.contextmanager
def _captured(fd: int, file, name: str):
    """Point file descriptor fd and sys.<name> at file, then put both back."""
    stream = getattr(sys, name)
    stream.flush()
    saved_fd = os.dup(fd)
    os.dup2(file.fileno(), fd)
    text = open(fd, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115
    setattr(sys, name, text)
    try:
        yield
    finally:
        text.flush()
        setattr(sys, name, stream)
        os.dup2(saved_fd, fd)
        os.close(saved_fd)


@contextlib.contextmanager
def _fresh_warnings():
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(DEFAULT_WARNING_FILTERS):
            warnings.filterwarnings(action, category=category, module=module)
        warnings.showwarning = _show_on_stderr
        yield


def _show_on_stderr(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _logging_restored():
    """Hydra's logging.config.dictConfig replaces the root handlers (a console handler bound to the
    captured stdout, a file handler in the run directory) and levels: close its handlers, put the
    old ones back. Loggers that libraries create during the run keep what they set up, as they would."""
    root = logging.getLogger()
    loggers = [root, *(lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger))]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate, lg.disabled) for lg in loggers]
    try:
        yield
    finally:
        for lg, handlers, level, propagate, disabled in saved:
            for h in lg.handlers:
                if h not in handlers:
                    h.close()
            lg.handlers, lg.level, lg.propagate, lg.disabled = handlers, level, propagate, disabled


def _read(file) -> str:
    file.seek(0)
    text = file.read().decode("utf-8", errors="replace")
    file.close()
    return text


def load_script(name: str):
    """scripts/<name>.py imported as a module (the scripts are not a package), for tests of its functions;
    scripts/ goes on sys.path as when the script runs, so its imports of the scripts beside it resolve."""
    import importlib.util

    scripts = str(RUN_PY.parent / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    spec = importlib.util.spec_from_file_location(f"{name}_script", RUN_PY.parent / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
