"""Output buffers for the image families' CPU blocks: huge-page mappings kept in a small pool.

The pool needs to know when no tensor refers to a buffer any more; torch exposes that only as
the private `torch._C._storage_Use_Count`. Where it is missing the buffers are still huge-page
mappings, just not reused.
"""

from __future__ import annotations

import contextlib
import mmap
import threading

import torch

HUGE_PAGE_BYTES = 1 << 25
POOL_IDLE_BYTES = 1 << 28
_MADV_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", None)
_use_count = getattr(torch._C, "_storage_Use_Count", None)
_pool: list[torch.Tensor] = []  # mapped buffers (raw bytes), handed out again once nothing refers to them
_pool_lock = threading.Lock()


def _idle(base: torch.Tensor) -> bool:
    """Nothing but the pool (and this check's own storage handle) holds the buffer."""
    return _use_count(base.untyped_storage()._cdata) <= 2


def batch_buffer(shape, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised CPU tensor; from HUGE_PAGE_BYTES up, a private anonymous mapping marked
    MADV_HUGEPAGE (what torch's own allocator does only under THP_MEM_ALLOC_ENABLE=1), kept in a
    small pool and handed out again once no tensor refers to it.
    A fresh batch-sized output page-faults in 4 KiB at a time, which can cost more than most
    families' arithmetic on it; huge pages fault far less, and a reused mapping not at all (glibc
    returns allocations this large to the kernel on every free, so without the pool every family
    call on a large batch would pay the faults again). The ground-truth walk frees
    each sibling's output before the next, so one or two idle buffers per size are reused over and
    over; at most POOL_IDLE_BYTES of idle buffers are kept."""
    n = 1
    for d in shape:
        n *= int(d)
    nbytes = n * torch.empty((), dtype=dtype).element_size()
    if _MADV_HUGEPAGE is None or nbytes < HUGE_PAGE_BYTES:
        return torch.empty(shape, dtype=dtype)
    if not _use_count:
        return _mapped(nbytes).view(dtype).view(shape)
    with _pool_lock:
        idle = [b for b in _pool if _idle(b)]
        base = next((b for b in reversed(idle) if b.numel() == nbytes), None)
        if base is None:
            base = _mapped(nbytes)
        # the buffer handed out goes last (most recently used); idle ones beyond the cap, oldest first, are dropped
        idle_ids, kept, total = {id(b) for b in idle if b is not base}, [], 0
        for b in reversed(_pool):
            if b is base:
                continue
            if id(b) in idle_ids:
                total += b.numel()
                if total > POOL_IDLE_BYTES:
                    continue
            kept.append(b)
        _pool[:] = kept[::-1] + [base]
        return base.view(dtype).view(shape)


def _mapped(nbytes: int) -> torch.Tensor:
    m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    with contextlib.suppress(OSError):  # kernels without transparent huge pages: plain pages, still correct
        m.madvise(_MADV_HUGEPAGE)
    return torch.frombuffer(m, dtype=torch.uint8, count=nbytes)
