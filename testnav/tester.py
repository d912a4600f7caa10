"""`testnav.Tester`: the whole harness on a model and data already in memory, in one call.

    t = testnav.Tester(model, (images, labels), families=["gaussian_blur", "brightness", "contrast", "jpeg"],
                       levels=3, fidelity="ssim")
    findings = t.scan()                                         # what breaks it: print(findings), .report(path)
    run = t.search("nsga2", budget=200, seed=0, stop_at=0.95)   # live: the model itself, no table needed
    table = t.groundtruth()                                     # every θ, cached under a hash of the weights
    run = t.search("tomonav", seed=0, replay=True)              # against that table: Recall@P*, AUC
    t.tomography(); t.query("brightness >= 2 & jpeg <= 1")
    t.report("report.html")                                     # what breaks it: one self-contained page
    t.examples("gaussian_blur=2,jpeg=1", k=8)                   # the inputs behind a configuration, flips first
    t.assert_robust("brightness >= 2", min_accuracy=0.8)        # a CI gate (pytest)
    t.save("runs/v1")                                           # what it measured: the next version's baseline
    new.compare("runs/v1").regressions                          # paired per-input tests, Holm-adjusted
    new.assert_no_regression("runs/v1", max_drop=0.02)          # the regression gate

It builds the same objects the YAML benchmarks build (ImageClassification or TextClassification,
families, metrics and searches by name through their registries) and runs them through the same
library pipeline as run.py (`testnav.pipeline`: `open`, `live`, `replay`, `scan`, `compare`), so a
Python run and a CLI run of the same settings agree. Each verb is an adapter of a few lines: its
keywords become the verb's spec (`RunSpec` with its `CertificateConfig`, `ScanSpec`, `CompareSpec`,
`QuerySpec`, `ReportSpec`), whose defaults are conf/settings/<verb>.yaml's (a keyword left at None
takes it; the confidence left at None is the Tester's), and the pipeline does the work on the
Tester's `Session`.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import UserError
from .pipeline import Run

__all__ = ["Run", "Tester"]

TEXT_FAMILIES = ("typo", "contraction", "punctuation")


class Tester:
    """model: any nn.Module returning logits (images in [0, 1], normalised inside, or give mean/std), a
    Hugging Face sequence classifier with `tokenizer=`, or a prediction function `predict(batch) ->
    logits or probabilities` (scikit-learn, ONNX Runtime, TensorFlow, a service; images arrive as a
    float32 numpy array in [0, 1], NCHW or `layout="NHWC"`, text as a list of strings or of (text_a,
    text_b) pairs; testnav/models/function.py). data: (images, labels) tensors, a torch Dataset or
    DataLoader, a Hugging Face datasets.Dataset, an image-folder path; for text (texts, labels),
    [(text, label), …], a datasets.Dataset or a DataLoader, with single sentences or (text_a, text_b)
    pairs. name: what the reports call the model and its cached tables (default: the model's own
    name, e.g. a bound method's class, LogisticRegression for clf.predict_proba). families: names (`testnav.families.names()`) or Family objects. levels=k (default 3): the
    identity and k − 1 severities spread over each family's whole table, mildest and harshest
    included (ImageNet-C's five: levels=6 all, levels=4 severities 1, 3, 5); severities=[1, 3, 5]
    picks them by hand (one list for every family, or {family: [...]}), levels then following.
    order: the families' names in the order they are applied (default: as listed; a combination can cost
    far more in one order than another, and each finding says whether it holds in every order).
    fidelity: a metric of conf/fidelity for the modality, e.g. ssim or kid for images, chrf for text
    (several: a list, the first one searched). progress: None (bars where a person watches: a
    terminal, a notebook; none in CI logs), True or False. cache_dir: where what was measured is kept
    (default: $TESTNAV_CACHE, else the user cache folder, ~/.cache/testnav on Linux; never the
    current folder). Images are checked before any work
    (layout, range, finite values; labels against the model's classes on the first batch)."""

    def __init__(
        self,
        model,
        data,
        families=None,
        levels: int | None = None,
        fidelity=None,
        tokenizer=None,
        image_size=None,
        mean=None,
        std=None,
        input_size=None,
        layer=None,
        name: str | None = None,
        cache_dir=None,
        device: str = "auto",
        perturb_seed: int = 0,
        batch_size: int = 256,
        max_length: int = 256,
        progress: bool | None = None,
        layout: str = "NCHW",
        output: str = "auto",
        confidence: float = 0.95,
        severities=None,
        order=None,
    ):
        from . import fidelity as fidelity_registry
        from .core.cache import user_cache_dir
        from .core.intervals import check_confidence
        from .core.naming import own_name
        from .core.progress import resolve as resolve_progress
        from .models.function import is_function
        from .pipeline import compose_config, resolve_device

        self.confidence = check_confidence(confidence)
        function = is_function(model)
        self.text = is_text(data, tokenizer, function, mean=mean, std=std, input_size=input_size, layer=layer)
        valid = fidelity_registry.names("text" if self.text else "image")
        fidelities = [fidelity] if isinstance(fidelity, str) else list(fidelity or valid[:1])
        unknown = [f for f in fidelities if f not in valid]
        if unknown:
            raise UserError(
                f"fidelity={unknown[0]} for {'text' if self.text else 'images'} (valid: {', '.join(valid)})"
            )
        self.fidelity = fidelities[0]
        self.cfg = compose_config()  # the packaged settings of what Tester does not take (tomography, pricing)
        self.cache_dir, self.device = str(user_cache_dir(cache_dir)), resolve_device(device)
        self.progress = resolve_progress(progress)  # None: where a person watches (a terminal, a notebook)
        levels, severities = check_levels(levels, severities)
        common = dict(
            name=name or "my_model",
            families=ordered(families, order),
            levels=levels,
            severities=severities,
            metrics={f: fidelity_registry.make(f) for f in fidelities},
            perturb_seed=perturb_seed,
            batch_size=batch_size,
        )
        if self.text:
            model_spec = text_model(model, tokenizer, function, output)
            self.benchmark = text_benchmark(data, model_spec, max_length=max_length, **common)
        else:
            model_spec = image_model(model, function, layout, output, mean, std, input_size, layer)
            self.benchmark = image_benchmark(data, model_spec, image_size, label2id=class_ids(model), **common)
            check_channels(model, self.benchmark.data.images)
        self.benchmark.model_name = name or own_name(model)  # what the reports and findings call it
        self._session, self._tomography = None, {}
        self._run, self._queries = None, {}  # the last search, the queries answered: what report() shows
        self._findings = None  # the last scan: what report() opens with
        self._comparison, self._compared = None, None  # the last comparison with a baseline; (its digest, spec)

    @property
    def lattice(self):
        return self.benchmark.lattice

    @property
    def session(self):
        """The benchmark opened on the device (data, model, clean scores), once for every live search."""
        from .pipeline import open as open_session

        if self._session is None:
            self._session = open_session(self.benchmark, self.cache_dir, self.device, self.progress)
        return self._session

    def search(
        self,
        name: str = "nsga2",
        budget: int | None = None,
        seed: int = 0,
        replay: bool = False,
        stop_at: float | None = None,
        stop_on: str | None = None,
        epsilon: float | str | None = None,
        **params,
    ) -> Run:
        """A search of `budget` proposals (None: 5 × |Θ|). Live (default): the model is run on each new
        configuration (memoised across searches); replay=True: against the ground truth (computed on
        first use), which adds Recall@P* and its AUC. stop_at: end once the stopping certificate reaches
        it: the stopping score p_good (unmeasured θ improving the front by more than `epsilon` unlikely) with
        stop_on="good", the exact p_complete with "complete"; "auto": good live, complete replayed. epsilon:
        "auto" is the measurement's resolution on this data set's N inputs at the Tester's `confidence` (δ:
        the paired difference of the clean and a perturbed accuracy; ρ: its per-input standard error; the
        summary states both); a number is a share of each objective's range, and below the resolution
        p_good does not stop the run (the summary says so). Left at None, each is
        conf/settings/certificate.yaml's default as the command line composes it: stop_at never,
        stop_on auto, epsilon "auto" live and 0.01 replayed (as run.py's replays).
        params: the search's settings (conf/search/<name>.yaml), e.g. pop_size."""
        from . import pipeline
        from .core.early_stopping import Stopping

        with python_words():
            spec = pipeline.RunSpec(
                search=name,
                overrides=params,
                budget=budget,
                seed=seed,
                certificate=pipeline.certificate_for(not replay, stop_at=stop_at, stop_on=stop_on, epsilon=epsilon),
                fit="pop_size" not in params,  # the default population fitted to a small lattice, a chosen one kept
                pricing=Stopping.from_node(self.cfg.tomography),
                pricing_seed=int(self.cfg.tomography.seed),
                confidence=self.confidence,  # epsilon="auto": the resolution at the Tester's confidence
            )
            spec = replace(spec, budget=capped(spec.budget, self.lattice.size))
            with quiet("testnav.searches"):  # the search's notices come once, when it runs
                pipeline.search_for(spec, self.lattice, live=not replay)  # bad settings refused before any work
        if not replay:
            self._run = pipeline.live(spec, self.session, self.fidelity, progress=self.progress)
            return self._run
        search = pipeline.search_for(spec, self.lattice)[0]
        obj, identity = pipeline.groundtruth_objectives(
            self._groundtruth_path(signals=bool(search.requires)),
            self.benchmark,
            self.fidelity,
            signals=search.requires,
        )
        probe = pipeline.RhoProbe(self.session, self.fidelity)  # ρ's resolution on the data set
        self._run = pipeline.replay(spec, obj, identity, self.benchmark.families, probe=probe)
        return self._run

    def scan(self, **settings):
        """What breaks the model, in one call: a `testnav.findings.Findings` (`.families`,
        `.interactions`, `.failure_modes`; `print` it, `.report(path)`, `.save(path)`). Every family
        alone is measured first, which prices a configuration; if the whole lattice then fits
        `budget_seconds` it is measured (a cached ground truth is read at once), else the pairs and a
        TomoNav search under the stopping certificate (`stop_at`, p_good) spend it. settings, each
        defaulting to conf/settings/scan.yaml's (testnav.pipeline.ScanSpec): budget_seconds (600),
        failure_modes (how many minimal configurations to list, 5), fidelity_floor (the fidelity on the
        metric's own scale below which inputs count as destroyed and are left out of them; "auto":
        SSIM 0.25, chrF 40; None: no floor), seed, stop_at (0.95; None: spend the budget), orders (the
        other orders of composition measured per reported finding: all up to 3 families, this many
        beyond, 5; 0: none), examples (inputs kept per failure mode, 8), min_loss (the loss a level must
        be shown to cost to break, and a failure mode to be listed: 0.01, one point) and confidence (the
        Tester's)."""
        from .pipeline import ScanSpec, scan

        with python_words():
            spec = ScanSpec.from_node({"confidence": self.confidence, **settings})
        self._findings = scan(self.session, spec, self.fidelity)
        self._run = self._findings.run or self._run  # a search it ran is the last search
        return self._findings

    def _groundtruth_path(self, signals: bool = True) -> Path:
        """The table on disk, computed where missing; `signals=False`: its objectives part suffices."""
        from .pipeline import compute_groundtruth

        return compute_groundtruth(self.benchmark, self.cache_dir, self.device, progress=self.progress, signals=signals)

    def groundtruth(self) -> pd.DataFrame:
        """Every θ of the lattice (one row each: levels, ψ with its interval `psi_low`, `psi_high` at the
        Tester's `confidence`, δ, raw fidelity, per-input outcomes), computed once and cached under a key
        that hashes the model's weights, the data and the families."""
        from .core.intervals import with_psi_intervals
        from .pipeline import read_meta

        path = self._groundtruth_path()
        return with_psi_intervals(pd.read_parquet(path), read_meta(path)["n_inputs"], self.confidence)

    def tomography(self, source: str | None = None):
        """TestifAI's partial tomography: tests of order ≤ 2 measured (live on the model, or replayed from
        the ground truth with source="replay", which adds the true r_σ), the rest predicted. Returns the
        Tomography (`.table`: one row per test; `.pairs`: χ² independence per family pair). The default
        source is live for images and replay for text (whose live executor is not written yet; a text
        lattice's ground truth is cheap)."""
        from .errors import note
        from .pipeline.tomography import Settings, tomography_for

        if source is None and self.text and "replay" not in self._tomography:
            note(
                f"text: the tomography replays the ground truth, so all {self.lattice.size:,} configurations are "
                "measured first (a live text tomography is not written yet)"
            )
        source = source or ("replay" if self.text else "live")
        if source not in self._tomography:
            quality = self.fidelity if source == "replay" else None
            self._tomography[source] = tomography_for(
                self.benchmark,
                Settings.from_config(self.cfg),
                source,
                quality,
                self.cache_dir,
                self.device,
                self.progress,
            )
        return self._tomography[source]

    def query(self, expr: str, source: str | None = None, sample: int | None = None, seed: int | None = None) -> dict:
        """R(Q) for a Boolean query over family levels, e.g. "brightness >= 2 & jpeg <= 1": measured,
        estimated and predicted (and true, with source="replay"), and [R_low, R_high] at the Tester's
        `confidence`, a bound that holds however wrong the forest is on the tests it predicts. It narrows
        as tests are measured: `sample` of the query's unmeasured tests are measured for it first
        (None: conf/settings/query.yaml's, 0), in a random order drawn from `seed` (None: a fresh seed
        per call, which the answer holds as `seed`)."""
        from .pipeline.tomography import QuerySpec, answer, query_of

        with python_words():
            spec = QuerySpec.given(expr=expr, confidence=self.confidence, sample=sample, seed=seed)
        query_of(self.benchmark, expr)  # a bad query fails before any work
        self._queries[expr] = answer(self.tomography(source), spec)
        return self._queries[expr]

    def assert_robust(
        self,
        query: str,
        min_accuracy: float,
        confidence: float | None = None,
        measure: str | None = None,
        source: str | None = None,
        seed: int | None = None,
    ) -> dict:
        """A CI gate on R(Q)'s interval at `confidence` (default: the Tester's), never on an estimate:
        returns the answer when R_low ≥ `min_accuracy`; raises AssertionError when R_high < it, and
        `Undecided` (an AssertionError too) when the interval holds it. measure="auto" (None: conf/
        settings/query.yaml's, auto) first measures the query's unmeasured tests, in random order, until
        the interval decides or every test is measured; "never" decides on what the tomography measured.
        The unmeasured tests come in a random order drawn from `seed` (None: a fresh seed per call; the
        answer and the line hold it, so a run can be repeated). The error is one line: the query, the
        interval, the threshold and the tests measured."""
        from .pipeline.tomography import QuerySpec, Undecided, gate, query_of

        confidence = self.confidence if confidence is None else confidence
        with python_words():
            spec = QuerySpec.given(
                expr=query, min_accuracy=min_accuracy, confidence=confidence, measure=measure, seed=seed
            )
            if spec.min_accuracy is None:
                raise UserError("min_accuracy=None: the accuracy R(Q) must reach, e.g. min_accuracy=0.8")
        query_of(self.benchmark, query)
        res = gate(self.tomography(source), spec)
        self._queries[query] = res
        if res["decision"] == "fail":
            raise AssertionError(res["line"])
        if res["decision"] == "undecided":
            raise Undecided(res["line"])
        return res

    # --- versions: a run you keep, and the next model against it ------------------------------
    def _cached_groundtruth(self) -> Path | None:
        """The ground-truth table if it is on disk already (never computed here)."""
        from .pipeline import cached_groundtruth

        return cached_groundtruth(self.benchmark, self.cache_dir, self.session.loaded)

    def record(self):
        """A `RunRecord` of what this Tester measured over all of the data: the clean set, every
        configuration its live searches and comparisons evaluated, and its ground truth if computed;
        per configuration the accuracy and per-input outcomes, with the families, levels and digests of
        the model and the data (testnav/pipeline/record.py)."""
        from .pipeline.record import record_of

        rec = record_of(self.session, self.fidelity, self._cached_groundtruth(), name=self.benchmark.name)
        if len(rec) < 2:
            raise UserError(
                "nothing measured yet beyond the clean set: run a search (t.search(stop_at=0.95)) or the ground "
                "truth (t.groundtruth()) first, then save or compare"
            )
        return rec

    def save(self, path) -> Path:
        """Write `record()` to the directory `path` (record.parquet, then record.json): the baseline a
        later version is compared with (`compare`, `assert_no_regression`, stage=compare)."""
        return self.record().save(path)

    def compare(
        self,
        baseline,
        confidence: float | None = None,
        min_change: float | None = None,
        correction: str | None = None,
        measure: str | None = None,
        max_drop: float | None = None,
        tolerance: float | None = None,
    ):
        """This model against `baseline` (a directory Tester.save or a stage=live / stage=compare run
        wrote, a RunRecord, or another Tester) on the same inputs, configuration by configuration:
        McNemar's exact test on the per-input outcomes, the p-values adjusted over the configurations
        with Holm's method (correction="bh": Benjamini–Hochberg), and the regression gate's verdict at
        `max_drop` (`.verdict`, see assert_no_regression). measure="auto": a warm start measures on
        this model the baseline's front, where a surrogate seeded from the baseline expects a drop
        beyond `max_drop`, and a random sample of the rest, grown until the gate decides: the rest
        predicted and bounded at `tolerance` × the baseline's configurations (at `confidence`;
        pipeline/warm.py); "never": the warm start's first sample only; "all": every configuration
        the baseline measured. A setting left at None is conf/settings/compare.yaml's
        (testnav.pipeline.CompareSpec: auto, Holm, min_change 0, max_drop 0.02, tolerance 0.05), the
        confidence the Tester's. Returns a `Comparison`: `.verdict`, `.regressions` and
        `.improvements` (significant at `confidence` and larger than `min_change`), `.predicted` and
        `.warm` (what was predicted, the bound), `.families`, `.pairs`, `.fronts`, `.evaluations`,
        `.report(path)`. Other data, families or levels are refused in one line before any
        configuration is evaluated. Asked again with the same baseline and settings (as
        assert_no_regression asks), it returns the same comparison: nothing is measured twice."""
        from . import pipeline

        given = dict(
            min_change=min_change, correction=correction, measure=measure, max_drop=max_drop, tolerance=tolerance
        )
        with python_words():
            spec = pipeline.CompareSpec.given(confidence=self.confidence if confidence is None else confidence, **given)
        base = baseline_record(baseline)
        if self._compared != (base.digest, spec):  # the same baseline and settings: the same comparison
            self._comparison = pipeline.compare(self.session, base, spec, self.fidelity, self._cached_groundtruth())
            self._compared = (base.digest, spec)
        return self._comparison

    def assert_no_regression(
        self,
        baseline,
        max_drop: float | None = None,
        confidence: float | None = None,
        measure: str | None = None,
        tolerance: float | None = None,
    ):
        """A CI gate against `baseline` (as in `compare`, whose defaults these take), a non-inferiority
        test on each configuration's paired drop in accuracy: returns the Comparison when every
        configuration compared is shown to lose at most `max_drop` (its one-sided upper bound at
        `confidence` ≤ max_drop; with a warm start, at most `tolerance` × the baseline's
        configurations uncleared among those sampled at random and bounded among those predicted);
        raises AssertionError when one is shown to lose more (one-sided tests, Holm over the
        configurations), and `Undecided` (an AssertionError too) otherwise: the data cannot tell.
        measure="auto" (None: compare.yaml's) measures configurations until the gate decides, "never"
        stops after the warm start's first sample, "all" measures every configuration the baseline
        did. The error is one line: the worst configuration, its drop and its bound."""
        from .pipeline.tomography import Undecided

        comparison = self.compare(baseline, confidence, measure=measure, max_drop=max_drop, tolerance=tolerance)
        verdict = comparison.verdict
        if verdict.decision == "fail":
            raise AssertionError(verdict.line)
        if verdict.decision == "undecided":
            raise Undecided(verdict.line)
        return comparison

    # --- the inputs behind the numbers -------------------------------------------------------
    def configuration(self, config) -> tuple[int, ...]:
        """θ (the lattice's levels) from {"gaussian_blur": 2, "jpeg": 1}, "gaussian_blur=2,jpeg=1" or one severity per family:
        each a severity of the family's table that the lattice tested (0: the identity)."""
        from .core.naming import parse_config

        return parse_config(config, self.benchmark.families, self.benchmark.levels)

    def name(self, config) -> str:
        """The configuration as the reports name it: "gaussian_blur=2 (σ 1) · jpeg=1 (q 80)"."""
        from .core.naming import config_name

        return config_name(self.configuration(config), self.benchmark.families)

    @property
    def inputs(self):
        """The data and the model read input by input (testnav/groundtruth/inputs.py)."""
        return self.session.inputs

    def examples(self, config, k: int | None = None) -> pd.DataFrame:
        """k inputs (None: report.k of conf/settings/report.yaml, 8) under a configuration, flips (right
        → wrong) first: `input` (its index in the data), `label`, `clean_prediction`, `prediction`,
        `flipped`, `changed`, and the `clean` and `perturbed` input (a C×H×W tensor, or the text)."""
        k, theta = report_k(k), self.configuration(config)  # checked before the model is loaded
        return self.inputs.examples(theta, k)

    def perturb(self, config):
        """The whole data set under a configuration: an (N, C, H, W) tensor in [0, 1], or a list of
        strings (a tuple of two per pair), for augmentation or your own analysis."""
        return self.inputs.perturb(self.configuration(config))

    def report(self, path="report.html", run: Run | None = None, configs=(), k: int | None = None) -> Path:
        """Write report.html (one self-contained file) and return its path: after `scan()`, the scan's
        findings; else about `run` (default: the last search) and the configurations in `configs`,
        with the queries answered so far; without a search, the tomography's report (computed if needed).
        `k`: inputs shown per configuration (None: report.k of conf/settings/report.yaml, 8)."""
        from . import report

        k = report_k(k)
        if run is None and not configs and self._findings is not None:
            return self._findings.report(path, k)  # the scan's: the findings first
        thetas = [self.configuration(c) for c in configs]
        run = run or self._run
        queries = list(self._queries.values())
        if run is None:
            source = "replay" if self.text else "live"
            tomo = self.tomography(source)
            return report.for_tomography(
                path, tomo, self.benchmark, self.session, thetas, k=k, queries=queries, source=source
            )
        return report.for_run(path, run, self.benchmark, self.session, thetas, k=k, queries=queries)


def capped(budget: int | None, size: int) -> int | None:
    """A budget beyond 5 × |Θ| proposals (which re-propose what was measured) capped at it, with a note."""
    from .errors import note

    if budget is not None and budget > 5 * size:
        note(
            f"budget={budget:,} proposals on {size:,} configurations: capped at 5 × |Θ| = {5 * size:,}, "
            f"beyond which a search only proposes again what it has measured"
        )
        return 5 * size
    return budget


def report_k(k: int | None) -> int:
    """Inputs shown per configuration: `k`, or report.k of conf/settings/report.yaml."""
    from .pipeline import ReportSpec

    with python_words():
        return ReportSpec.given(k=k).k


KEYS = re.compile(r"\b(?:certificate|search|benchmark|query|tomography|scan|compare|report)\.(\w+)(?==|\b)")


@contextmanager
def python_words():
    """A one-line error raised inside with the config keys it names as the Python arguments
    (certificate.stop_on= → stop_on=, search.pop_size → pop_size, compare.max_drop= → max_drop=,
    null → None)."""
    try:
        yield
    except UserError as e:
        text = KEYS.sub(lambda m: m.group(1), str(e)).replace("null", "None")
        raise UserError(text) from None


@contextmanager
def quiet(logger: str):
    """The logger's warnings held back within the block (a check that runs again later says them then)."""
    import logging

    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def baseline_record(baseline):
    """A baseline as a RunRecord: a record already, a Tester (its record), or a path to one."""
    from .pipeline.record import RunRecord

    if isinstance(baseline, RunRecord):
        return baseline
    if isinstance(baseline, Tester):
        return baseline.record()
    if isinstance(baseline, (str, Path)):
        return RunRecord.load(baseline)
    raise UserError(
        f"baseline={type(baseline).__name__}: give a directory Tester.save (or a stage=live run) wrote, a "
        "RunRecord or a Tester"
    )


def is_text(data, tokenizer, function: bool, **module_settings) -> bool:
    """Whether the Tester tests text; settings that do not fit the kind of model are refused."""
    from .benchmarks.text_classification import looks_like_text

    if function:
        given = [k for k, v in module_settings.items() if v]
        if given or tokenizer is not None:
            raise UserError(
                f"{', '.join(given) or 'tokenizer'}: a setting of an nn.Module or a Hugging Face model; a "
                f"prediction function prepares its inputs itself (it may take layout= and output=)"
            )
    elif tokenizer is None and looks_like_text(data):
        raise UserError("text data: give the model's tokenizer= (or a prediction function on strings)")
    return tokenizer is not None or (function and looks_like_text(data))


def text_model(model, tokenizer, function: bool, output: str):
    from .benchmarks.text_classification import GivenTextModel
    from .models.function import FunctionTextModel

    return FunctionTextModel(model, output) if function else GivenTextModel(model, tokenizer)


def image_model(model, function: bool, layout, output, mean, std, input_size, layer):
    from .models.function import FunctionModel
    from .models.monitor import GivenModel

    return FunctionModel(model, layout, output) if function else GivenModel(model, mean, std, input_size, layer=layer)


def ordered(families, order):
    """`families` in the order they are applied: `order` (their names, each once), else as listed."""
    if order is None:
        return families
    from .core.naming import family_names

    names = family_names(families) if families else []
    if not names or isinstance(order, str) or sorted(map(str, order)) != sorted(names):
        valid = ", ".join(names) if names else "give families=[…] first"
        raise UserError(f"order={order!r}: each family once, in the order they are applied (the families: {valid})")
    return [families[names.index(str(o))] for o in order]


def check_levels(levels, severities) -> tuple[int, object]:
    """levels= and severities= as given: a whole number ≥ 2 (default 3), or the count that
    `severities` implies (a list for every family, or {family: list}, each as long)."""
    if severities is not None:
        lists = list(severities.values()) if isinstance(severities, dict) else [severities]
        counts = {len(v) if isinstance(v, (list, tuple)) else None for v in lists}
        if None in counts or len(counts) != 1 or 0 in counts:
            raise UserError(
                f"severities={severities!r}: a list of table entries for every family, e.g. severities=[1, 3, 5], "
                "or {family: [...]} with lists of one length"
            )
        implied = counts.pop() + 1
        if levels is not None and levels != implied:
            raise UserError(
                f"levels={levels} with severities={severities!r}: {implied - 1} severities make levels={implied} "
                "(the identity and each severity); give one of the two"
            )
        return implied, severities
    if levels is None:
        return 3, None
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 2:
        raise UserError(f"levels={levels!r}: a whole number ≥ 2 (the identity and levels − 1 severities)")
    return int(levels), None


def with_severities(fams, levels: int, severities):
    """The families with `levels` − 1 severities spread over each one's table, or those given."""
    from .families.severities import select, spread_family

    if severities is None:
        return [spread_family(f, levels) for f in fams]
    if isinstance(severities, dict):
        unknown = [k for k in severities if k not in [f.name for f in fams]]
        if unknown or len(severities) != len(fams):
            raise UserError(
                f"severities={severities!r}: one list per family ({', '.join(f.name for f in fams)})"
                + (f"; {unknown[0]!r} is not among them" if unknown else "")
            )
        return [select(f, severities[f.name]) for f in fams]
    return [select(f, severities) for f in fams]


def text_benchmark(data, model_spec, name, families, levels, severities, metrics, perturb_seed, batch_size, max_length):
    from .benchmarks.text_classification import TextClassification, TextItems
    from .families import make as family

    fams = with_severities([family(f, modality="text") for f in (families or TEXT_FAMILIES)], levels, severities)
    return TextClassification(
        name,
        fams,
        levels,
        metrics,
        data=TextItems(data),
        model=model_spec,
        perturb_seed=perturb_seed,
        batch_size=batch_size,
        max_length=max_length,
    )


def class_ids(model) -> dict | None:
    """A model's own names for its classes (a Hugging Face image classifier's label2id), if it has them."""
    label2id = getattr(getattr(model, "config", None), "label2id", None) or {}
    return None if all(str(k) == f"LABEL_{v}" for k, v in label2id.items()) else dict(label2id)


def check_channels(model, images) -> None:
    """Images with another number of channels than the module's first convolution takes, refused in
    one line before any work (instead of torch's error from inside the model) when two of them do
    not go through it (a module that adapts the channels itself passes)."""
    import torch

    channels = images.shape[1]
    if not isinstance(model, torch.nn.Module):
        return
    first = next(((n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Conv2d)), None)
    if first is None or first[1].in_channels == channels:
        return
    try:
        with torch.no_grad():
            model(images[:2].to(next(model.parameters()).device))
        return
    except RuntimeError:
        pass
    want = first[1].in_channels
    fix = (
        "x.mean(1, keepdim=True) makes RGB images grayscale"
        if want == 1
        else "x.expand(-1, 3, -1, -1) repeats a grayscale channel"
        if channels == 1 and want == 3
        else f"give images with {want} channels"
    )
    raise UserError(
        f"image data: the images have {channels} channel{'s' if channels > 1 else ''} but the model's first "
        f"convolution ({first[0] or type(model).__name__}) takes {want}: {fix}"
    )


def image_benchmark(
    data, model_spec, image_size, name, families, levels, severities, metrics, perturb_seed, batch_size, label2id=None
):
    from .benchmarks.classification import ImageClassification
    from .data.given import TensorData, image_tensors
    from .families import make as family

    x, y, description = image_tensors(data, image_size, label2id)
    if not families:
        raise UserError("families: name them, e.g. families=['gaussian_blur', 'brightness', 'contrast', 'jpeg']")
    fams = [family(f, image_size=tuple(x.shape[-2:]), channels=x.shape[1]) for f in families]
    fams = with_severities(fams, levels, severities)
    return ImageClassification(
        name,
        fams,
        levels,
        TensorData(x, y, description),
        model_spec,
        metrics=metrics,
        perturb_seed=perturb_seed,
        batch_size=batch_size,
    )
