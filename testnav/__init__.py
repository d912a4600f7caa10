"""TestNav harness: compositional robustness testing (TestNav search + TestifAI tomography).

`import testnav` changes nothing in the caller's process: no environment variable, warning filter,
logging handler, OmegaConf resolver or torch setting (tests/e2e/test_install.py). The command line
(`testnav`, `python -m testnav`, run.py; testnav/app/main.py) owns its process and sets what it needs.
"""

__version__ = "0.1.0"


def __getattr__(name):
    """`testnav.Tester` without importing torch for every `import testnav` (the CLI's help, its guard)."""
    if name == "Tester":
        from .tester import Tester

        return Tester
    if name in ("RunRecord", "Comparison"):  # a kept run (Tester.save) and two versions compared (Tester.compare)
        from . import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'testnav' has no attribute {name!r}")
