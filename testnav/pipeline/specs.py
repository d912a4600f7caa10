"""The settings of the practitioner's verbs, each one frozen spec read from its YAML and checked once
(testnav/core/spec.py): `ScanSpec` (conf/settings/scan.yaml: `pipeline.scan`, `Tester.scan`,
`testnav report RUN_DIR`), `CompareSpec` (compare.yaml: `pipeline.compare`, `Tester.compare` and
`assert_no_regression`, stage=compare) and `ReportSpec` (report.yaml: report.html). The query's
`QuerySpec` is TestifAI's (testnav/tomography/query.py), the search's `RunSpec` runs.py's."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.intervals import check_confidence
from ..core.spec import Spec, share, whole
from ..errors import UserError
from ..paths import conf_defaults
from .paired import CORRECTIONS

MEASURE = ("auto", "never", "all")  # compare.measure: a warm start that measures until the gate decides, one that
# stops at its first look, or every configuration the baseline measured


@dataclass(frozen=True)
@conf_defaults("settings/scan")
class ScanSpec(Spec):
    """What a scan may spend and what its findings list; the defaults are conf/settings/scan.yaml's."""

    node = "scan"
    budget_seconds: float  # measuring time: the whole lattice if it fits at the price of one configuration
    failure_modes: int  # minimal configurations listed
    fidelity_floor: float | str | None  # below it inputs count as destroyed; auto: by metric; None: no floor
    seed: int  # the search's, where the lattice does not fit
    stop_at: float | None  # the search stops once p_good reaches it; None: it spends the budget
    orders: int  # other orders measured per reported finding beyond 3 families (all up to 3); 0: none
    examples: int  # inputs kept per failure mode (0: none, the findings alone)
    min_loss: float  # a level breaks (and a failure mode is listed) only when its loss is shown to be at least this
    confidence: float  # of the accuracies' intervals, the paired tests and the resolution

    def __post_init__(self):
        b = self.budget_seconds
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not b > 0 or not math.isfinite(b):
            raise UserError(f"scan.budget_seconds={b}: a positive number of seconds, e.g. scan.budget_seconds=600")
        if not whole(self.failure_modes, 1):
            raise UserError(f"scan.failure_modes={self.failure_modes}: a whole number ≥ 1")
        f = self.fidelity_floor
        if f not in (None, "auto") and (
            isinstance(f, (bool, str)) or not isinstance(f, (int, float)) or not math.isfinite(f)
        ):
            raise UserError(
                f"scan.fidelity_floor={f}: a number on the fidelity metric's own scale, auto or null (no floor)"
            )
        if not whole(self.seed):
            raise UserError(f"scan.seed={self.seed}: a whole number ≥ 0")
        if self.stop_at is not None and (isinstance(self.stop_at, bool) or not 0 < self.stop_at <= 1):
            raise UserError(f"scan.stop_at={self.stop_at}: a probability in (0, 1], or null to spend the whole budget")
        if not whole(self.orders, 0):
            raise UserError(f"scan.orders={self.orders}: a whole number ≥ 0 (0: no other order measured)")
        if not whole(self.examples, 0):
            raise UserError(f"scan.examples={self.examples}: a whole number ≥ 0 (0: none kept)")
        if not share(self.min_loss):
            raise UserError(
                f"scan.min_loss={self.min_loss}: a share of the accuracy in [0, 1), e.g. scan.min_loss=0.01 (one point)"
            )
        check_confidence(self.confidence, "scan.confidence")
        self.as_float("budget_seconds", "min_loss", "confidence")


@dataclass(frozen=True)
@conf_defaults("settings/compare")
class CompareSpec(Spec):
    """How a model is compared with a baseline and gated; the defaults are conf/settings/compare.yaml's
    (whose `baseline`, what is compared against, is the app's to read)."""

    node = "compare"
    max_drop: float  # the gate: passes when every drop is shown within it, fails when one is shown beyond
    confidence: float  # of the paired tests, after the correction
    correction: str  # holm | bh
    min_change: float  # regressions and improvements listed: significant and larger than this
    examples: int  # inputs that flipped, shown under each regression in comparison.html
    measure: str  # auto | never (a warm start: what the gate needs, the rest bounded) | all (every configuration)
    tolerance: float  # warm: the share of the baseline's configurations the bound may leave hiding a drop
    seed: int  # warm: the random sample's

    def __post_init__(self):
        for key in ("max_drop", "min_change"):
            value = getattr(self, key)
            if not share(value):
                raise UserError(
                    f"compare.{key}={value}: a share of the accuracy in [0, 1), e.g. compare.{key}=0.02 (two points)"
                )
        check_confidence(self.confidence, "compare.confidence")
        if self.correction not in CORRECTIONS:
            raise UserError(f"compare.correction={self.correction} (valid: {', '.join(CORRECTIONS)})")
        if not share(self.tolerance):
            raise UserError(
                f"compare.tolerance={self.tolerance}: a share of the baseline's configurations in [0, 1), e.g. "
                "compare.tolerance=0.05"
            )
        if self.measure not in MEASURE:
            raise UserError(f"compare.measure={self.measure} (valid: {', '.join(MEASURE)})")
        if not whole(self.seed):
            raise UserError(f"compare.seed={self.seed}: a whole number ≥ 0")
        if not whole(self.examples, 1):
            raise UserError(f"compare.examples={self.examples}: a whole number ≥ 1")
        self.as_float("max_drop", "min_change", "confidence", "tolerance")

    @classmethod
    def from_node(cls, node, ignore=("baseline",)):
        return super().from_node(node, ignore)


@dataclass(frozen=True)
@conf_defaults("settings/report")
class ReportSpec(Spec):
    """What report.html shows; the defaults are conf/settings/report.yaml's."""

    node = "report"
    write: bool  # report.html (and the named configurations' files) in the run directory
    examples: object  # configurations shown input by input: "family=level,…", several separated by ;
    k: int  # inputs shown per configuration, flips first
    answer: object  # auto | true | false: a search run ends with what breaks the model (auto: not in a sweep)

    def __post_init__(self):
        if not whole(self.k, 1):
            raise UserError(f"report.k={self.k}: the number of inputs shown per configuration, a whole number ≥ 1")
        if self.answer not in ("auto", True, False):
            raise UserError(f"report.answer={self.answer} (valid: auto, true, false)")
