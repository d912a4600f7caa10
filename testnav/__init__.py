"""TestNav harness: compositional robustness testing (TestNav search + TestifAI tomography)."""

import os

# Must hold before anything imports transformers: no test or default run touches the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
