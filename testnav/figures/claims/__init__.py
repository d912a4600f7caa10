"""`results/claims.md`: the claims of both papers that the tables at hand can check, graded by stated rules.

One row per claim: the paper's sentence or number (with its section, table or figure), the value
measured on the runs and tables under `results/`, the statistic or tolerance on which each stated
part of the claim was decided, a verdict, and a reason. Every verdict comes from one function,
`judge` (rules.py), applied to the row's parts (`Part`); its rules are `RULES`, the paragraph
claims.md opens with. Each claim is one function, registered with `@claim(scope)` (registry.py) in
a module of its paper's section (testnav_*.py, testifai_*.py); `build` (ledger.py) checks them all.
A TestNav claim is checked on every benchmark–fidelity with runs, against the paper's column of the
same benchmark, or of the same modality and metric (mnist5k · SSIM against Tiny-ImageNet · SSIM); a
TestifAI claim on every study under `tables/testifai/`. A claim whose inputs are absent is not
measurable, with what is missing. How the papers' words are read (thresholds, scopes):
docs/readings.md, "Claims ledger".
"""

from .ledger import build, counts, counts_sentence, write_claims
from .rules import (
    ALPHA,
    HOLDS,
    NA,
    NOT,
    OK,
    PARTLY,
    REVERSED,
    RULES,
    SHORT,
    UNDECIDED,
    VERDICTS,
    Claim,
    Part,
    beats,
    judge,
    welch,
)

__all__ = [
    "ALPHA",
    "HOLDS",
    "NA",
    "NOT",
    "OK",
    "PARTLY",
    "REVERSED",
    "RULES",
    "SHORT",
    "UNDECIDED",
    "VERDICTS",
    "Claim",
    "Part",
    "beats",
    "build",
    "counts",
    "counts_sentence",
    "judge",
    "welch",
    "write_claims",
]
