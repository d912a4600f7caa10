"""BERT-F1 between perturbed and clean inputs: the mean BERTScore F1 over all pairs.

The formula is torchmetrics' `bert_score` (which follows Zhang et al. and `bert_score`):
token embeddings from hidden layer `num_layers` of a local encoder (RoBERTa-base for QQP,
CodeBERT-base for code), L2-normalised, the first and last token of each sequence (<s>, </s>)
left out, greedy matching by cosine similarity (a best match below 0 counts 0, as torchmetrics'
zero padding does), precision and recall averaged over tokens (no idf, no baseline
rescaling), F1 = 2PR/(P+R).

The layer: the paper computes BERT-F1 with TorchMetrics (its footnote 3), whose default
`num_layers=None` takes the encoder's last layer (12 for both RoBERTa-base and CodeBERT-base);
that is our default. The `bert_score` package instead defaults roberta-base to layer 10 (its
per-model table, tuned on WMT16 correlations; it has no entry for CodeBERT, and code-bert-score
uses 10): `num_layers: 10` gives that reading (docs/readings.md).

We compute it ourselves rather than calling torchmetrics because (i) the clean side is
embedded once in `prepare` instead of once per configuration, and (ii) torchmetrics 1.9
re-orders a multi-pair call wrongly when predictions and references sort differently by
length (Lightning-AI/torchmetrics#2728: embeddings are indexed by the sort permutation
instead of its inverse), which pairs sentences with the wrong references. Single-pair calls
are unaffected; the tests check our values against them. Pairs whose perturbed text equals
the clean one score exactly 1 without a forward pass.
"""

from __future__ import annotations

import torch

from ..models.pretrained import load_pretrained
from .base import Metric


class BERTScoreF1(Metric):
    higher_is_better = True
    spread = "per-input"
    column = "bertf1"

    def __init__(
        self,
        model: str,
        num_layers: int | None,
        batch_size: int,
        max_length: int,
        name: str,
    ):
        super().__init__(name)
        self.require(
            "num_layers",
            num_layers,
            num_layers is None or (int(num_layers) == num_layers and num_layers >= 1),
            "a whole number ≥ 1, or null for BERTScore's default layer of the model",
        )
        for key, value in (("batch_size", batch_size), ("max_length", max_length)):
            self.require(key, value, int(value) == value and value >= 1, "a whole number ≥ 1")
        self.model_spec = str(model)
        self.num_layers = None if num_layers is None else int(num_layers)
        self.batch_size, self.max_length = int(batch_size), int(max_length)
        self.model = None

    def _load(self, device):
        from transformers import AutoModel, AutoTokenizer

        if self.model is None:
            what = f"metric {self.name} (BERTScore model)"
            self.tokenizer, _ = load_pretrained(AutoTokenizer, self.model_spec, what)
            self.model, self.path = load_pretrained(AutoModel, self.model_spec, what)
            self.model.eval()
            layers = getattr(self.model.config, "num_hidden_layers", None)
            if self.num_layers is not None and layers is not None and not 0 <= self.num_layers <= layers:
                from ..errors import UserError

                raise UserError(
                    f"metric {self.name}: num_layers={self.num_layers} but {self.model_spec} has {layers} "
                    f"layers (valid: 0..{layers})"
                )
        self.model.to(device)
        self.device = device

    @torch.no_grad()
    def embed(self, texts: list[str]) -> list[torch.Tensor]:
        """Per text: (tokens, dim) normalised embeddings of its non-special tokens."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list = [None] * len(texts)
        for s in range(0, len(order), self.batch_size):
            idx = order[s : s + self.batch_size]
            enc = self.tokenizer(
                [texts[i] for i in idx], padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            ).to(self.device)
            hidden = self.model(enc["input_ids"], enc["attention_mask"], output_hidden_states=True).hidden_states
            h = hidden[self.num_layers if self.num_layers is not None else -1].float()
            h = h / h.norm(dim=-1, keepdim=True)
            lengths = enc["attention_mask"].sum(1).tolist()
            for row, i in enumerate(idx):
                out[i] = h[row, 1 : int(lengths[row]) - 1]  # drop <s> … </s>
        return out

    def prepare(self, clean) -> None:
        self._load(clean.device)
        self.refs = list(clean.texts)
        unique = list(dict.fromkeys(self.refs))
        emb = self.embed(unique)
        by_text = dict(zip(unique, emb))
        self.ref_emb = [by_text[t] for t in self.refs]

    @staticmethod
    def _f1(p_emb: torch.Tensor, r_emb: torch.Tensor) -> float:
        if len(p_emb) == 0 or len(r_emb) == 0:
            return 0.0
        sim = p_emb @ r_emb.T
        precision = sim.max(1).values.clamp_min(0).mean()
        recall = sim.max(0).values.clamp_min(0).mean()
        f = 2 * precision * recall / (precision + recall)
        return 0.0 if torch.isnan(f) else float(f)

    @torch.no_grad()
    def pair_f1(self, preds: list[str]) -> list[float]:
        todo = [i for i, (p, r) in enumerate(zip(preds, self.refs)) if p != r]
        scores = [1.0] * len(preds)
        emb = self.embed([preds[i] for i in todo])
        for i, e in zip(todo, emb):
            scores[i] = self._f1(e, self.ref_emb[i])
        return scores

    def __call__(self, view) -> float:
        preds = list(view.texts)
        if len(preds) != len(self.refs):
            raise ValueError(f"BERTScore: {len(preds)} perturbed inputs for {len(self.refs)} clean ones")
        scores = self.pair_f1(preds)
        return float(sum(scores) / len(scores)) if scores else 0.0

    def per_input(self, view) -> list[float]:
        return self.pair_f1(list(view.texts))

    def describe(self) -> dict:
        from ..models.pretrained import model_fingerprint, resolve_pretrained

        return {
            "metric": "bertscore_f1",
            "model": model_fingerprint(resolve_pretrained(self.model_spec, self.name)),
            "num_layers": self.num_layers,
            "max_length": self.max_length,
            "idf": False,
            "baseline": False,
        }
