"""TestNav harness: compositional robustness testing (TestNav search + TestifAI tomography)."""

import os

# Must hold before anything imports transformers: no test or default run touches the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def __getattr__(name):
    """`testnav.Tester` without importing torch for every `import testnav` (run.py, the CLI guard)."""
    if name == "Tester":
        from .tester import Tester

        return Tester
    raise AttributeError(f"module 'testnav' has no attribute {name!r}")
