"""chrF between perturbed and clean inputs, once per configuration (TestNav §4.1).

sacreBLEU's `CHRF` with its defaults, char_order 6, **word_order 0** (plain chrF, not the
chrF++ that torchmetrics' `CHRFScore` computes by default), beta 2, at corpus level: the
character n-gram statistics of every perturbed input against its clean original (each QQP
question, each code prompt version) are summed, then one F-score is taken. Reported on
sacreBLEU's 0–100 scale; ρ is min–max normalised over Θ anyway. The clean side's n-gram
statistics are extracted once in `prepare`.

sacreBLEU's default `whitespace=False` deletes all whitespace before extracting character
n-grams, so a perturbation that only adds or removes spaces and newlines (the code
benchmarks' whitespace and newline families) scores chrF = 100: invisible to ρ. That is the
paper's metric as specified; `whitespace: true` counts whitespace as characters instead.
"""

from __future__ import annotations

from sacrebleu.metrics import CHRF

from .base import Metric


class ChrF(Metric):
    higher_is_better = True
    spread = "per-input"
    column = "chrf"

    def __init__(self, char_order: int, word_order: int, beta: int, whitespace: bool, name: str):
        super().__init__(name)
        self.require("char_order", char_order, int(char_order) == char_order and char_order >= 1, "a whole number ≥ 1")
        self.require("word_order", word_order, int(word_order) == word_order and word_order >= 0, "a whole number ≥ 0")
        self.require("beta", beta, beta >= 0, "recall's weight, ≥ 0 (chrF: 2)")
        self.char_order, self.word_order, self.beta = int(char_order), int(word_order), int(beta)
        self.whitespace = bool(whitespace)

    def prepare(self, clean) -> None:
        self.refs = list(clean.texts)
        self.metric = CHRF(
            char_order=self.char_order,
            word_order=self.word_order,
            beta=self.beta,
            whitespace=self.whitespace,
            references=[self.refs],
        )

    def __call__(self, view) -> float:
        hyps = list(view.texts)
        if len(hyps) != len(self.refs):
            raise ValueError(f"chrF: {len(hyps)} perturbed inputs for {len(self.refs)} clean ones")
        return float(self.metric.corpus_score(hyps, None).score)

    def per_input(self, view) -> list[float]:
        """Each sentence's chrF against its own reference (the corpus score pools the n-gram counts
        instead; their mean is what ρ's sampling error is read on)."""
        chrf = CHRF(char_order=self.char_order, word_order=self.word_order, beta=self.beta, whitespace=self.whitespace)
        return [chrf.sentence_score(h, [r]).score for h, r in zip(view.texts, self.refs)]

    def describe(self) -> dict:
        return {
            "metric": "chrf",
            "impl": "sacrebleu",
            "char_order": self.char_order,
            "word_order": self.word_order,
            "beta": self.beta,
            "whitespace": self.whitespace,
        }
