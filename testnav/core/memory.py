"""Keep freed memory in the process instead of handing it back to the kernel after every tensor.

glibc serves allocations above a threshold (128 KiB, raised dynamically up to 32 MiB) with fresh
mmap()s and returns them on free(), and trims the heap's top whenever more than twice that is
free. A ground truth allocates and frees the same batch-sized tensors (activations, metric
temporaries) for every configuration, so each one page-faults back in, zero-filled, 4 KiB at a
time: measured on mnist5k, ~10,000 faults per configuration and about half of LeNet-5's forward
time (`make bench`). Pinning both thresholds lets freed blocks be reused. Blocks above the
threshold's 32 MiB ceiling would still be mapped and unmapped on every call (oneDNN's blocked
copy of LeNet-5's first activation at batch 1,024 is 51 MB, 12,500 pages faulted in per batch),
so mmap is switched off altogether (M_MMAP_MAX = 0) and they too come from the heap and are
reused (tests/unit/groundtruth/test_groundtruth.py counts the faults). The families' own outputs above 32 MiB come from
testnav/families/buffers.py's pool instead. The process then keeps
its peak heap (about the ground truth's peak resident set) until it ends;
TESTNAV_KEEP_FREED_MEMORY=0 leaves glibc's defaults.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os

log = logging.getLogger(__name__)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4  # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20  # glibc's ceiling for it on 64-bit systems
TRIM_THRESHOLD = 1 << 30  # free memory at the heap's top kept for reuse, up to this much


@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc's thresholds once per process; False (and nothing changed) off glibc or when
    TESTNAV_KEEP_FREED_MEMORY=0."""
    if os.environ.get("TESTNAV_KEEP_FREED_MEMORY", "1") == "0":
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = libc.mallopt if libc is not None else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        return False
    ok = all(
        bool(mallopt(param, value))
        for param, value in ((M_MMAP_THRESHOLD, MMAP_THRESHOLD), (M_TRIM_THRESHOLD, TRIM_THRESHOLD), (M_MMAP_MAX, 0))
    )
    log.debug("glibc mallopt: freed memory kept for reuse (%s)", "set" if ok else "refused")
    return ok
