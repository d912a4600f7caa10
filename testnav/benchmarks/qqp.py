"""QQP / RoBERTa (TestNav Table 1, TestifAI §5.1.1): paraphrase detection, ψ = accuracy.

Data: a local file of question pairs with labels (1 = duplicate), read once:
* `.tsv` — GLUE's QQP `dev.tsv` (or `train.tsv`): a header line, tab-separated columns
  `id qid1 qid2 question1 question2 is_duplicate`, no quoting;
* `.jsonl` / `.json` / `.csv` / `.parquet` — columns `question1`, `question2` and `label`
  (or `is_duplicate`), as Hugging Face's `glue/qqp` export writes them.
`n` pairs are kept (the papers use 1,000): the first n, or n drawn without replacement with
`seed` (`select: random`, the default) and kept in file order.

Model: a sequence-pair classifier (`JeremiahZ/roberta-base-qqp` in the paper) from a local
directory or the Hugging Face cache; class index i is label i (GLUE's convention). Because ψ
compares the argmax with the file's labels, a model with two classes in the other order, or a
three-class model, would run and score nonsense; so its config must say `num_labels` 2 and
`id2label[1]` duplicate-like ("duplicate", "is_duplicate", "paraphrase", "equivalent"; GLUE's
run_glue.py writes `not_duplicate`/`duplicate`). `model.check_labels: false` accepts a model known
to follow the convention whose config does not say so (e.g. `LABEL_0`/`LABEL_1`).
"""

from __future__ import annotations

import csv
import re
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..errors import UserError
from ..families.text_base import TextBatch
from ..models.pretrained import load_pretrained, model_fingerprint
from .text import TextBenchmark, TextLoaded, file_fingerprint, require_file

FORMAT = (
    "GLUE QQP dev.tsv (id, qid1, qid2, question1, question2, is_duplicate) or a .jsonl/.json/.csv/.parquet "
    "file with question1, question2, label"
)


DUPLICATE = ("duplicate", "isduplicate", "paraphrase", "equivalent")


def duplicate_like(label) -> bool:
    """ "duplicate", "is_duplicate", "Paraphrase", …; not "not_duplicate", "LABEL_1" or "non-equivalent"."""
    return re.sub(r"[^a-z]", "", str(label).lower()).startswith(DUPLICATE)


def check_labels(config, what: str) -> None:
    """Refuse a classifier whose config does not say that class 1 is "duplicate" (see the module doc)."""
    n = getattr(config, "num_labels", None)
    id2label = {int(k): v for k, v in (getattr(config, "id2label", None) or {}).items()}
    if n != 2 or not duplicate_like(id2label.get(1, "")) or duplicate_like(id2label.get(0, "")):
        raise UserError(
            f"{what}: its config has num_labels={n}, id2label={id2label}; QQP needs 2 classes with "
            "class 1 = duplicate (set benchmark.model.check_labels=false for a model known to be right)"
        )


def read_qqp(path) -> pd.DataFrame:
    p = require_file(path, "benchmark.data.path", FORMAT)
    suffix = p.suffix.lower()
    try:
        if suffix == ".tsv":
            df = pd.read_csv(p, sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)
        elif suffix in (".jsonl", ".json"):
            df = pd.read_json(p, lines=suffix == ".jsonl", dtype=False)
        elif suffix == ".csv":
            df = pd.read_csv(p, dtype=str, keep_default_na=False)
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(p)
        else:
            raise UserError(f"benchmark.data.path={path}: unknown extension {suffix} (expected {FORMAT})")
    except UserError:
        raise
    except Exception as e:
        raise UserError(f"benchmark.data.path={path} cannot be read as {FORMAT} ({type(e).__name__})") from e
    label = "is_duplicate" if "is_duplicate" in df.columns else "label"
    missing = {"question1", "question2", label} - set(df.columns)
    if missing:
        raise UserError(f"benchmark.data.path={path} lacks column(s) {', '.join(sorted(missing))} (expected {FORMAT})")
    out = pd.DataFrame(
        {"question1": df["question1"].fillna("").astype(str), "question2": df["question2"].fillna("").astype(str)}
    )
    try:
        out["label"] = pd.to_numeric(df[label]).astype(int)
    except (ValueError, TypeError):
        raise UserError(
            f"benchmark.data.path={path}: column {label} must hold 0/1 labels (a test split has none)"
        ) from None
    if not out["label"].isin([0, 1]).all():
        raise UserError(f"benchmark.data.path={path}: column {label} must hold 0/1 labels")
    return out


class QQP(TextBenchmark):
    def __init__(
        self,
        name="qqp",
        families=(),
        levels=6,
        metrics=None,
        data=None,
        model=None,
        perturb_seed=0,
        batch_size=64,
        max_length=256,
    ):
        super().__init__(name, families, levels, metrics, perturb_seed, batch_size)
        self.data = dict(data or {})
        self.model_spec = dict(model or {})
        self.max_length = int(max_length)
        self._memo: OrderedDict = OrderedDict()

    def data_description(self) -> dict:
        d = self.data
        p = require_file(d.get("path"), "benchmark.data.path", FORMAT)
        return {
            "file": Path(p).name,
            "sha256": file_fingerprint(p),
            "n": d.get("n"),
            "select": d.get("select", "random"),
            "seed": d.get("seed", 0),
        }

    def task_description(self) -> dict:
        return {"max_length": self.max_length}

    def select(self, df: pd.DataFrame) -> pd.DataFrame:
        n, how = self.data.get("n"), self.data.get("select", "random")
        if n is None or int(n) >= len(df):
            return df.reset_index(drop=True)
        n = int(n)
        if n <= 0:
            raise UserError(f"benchmark.data.n={n} must be positive")
        if how == "first":
            idx = np.arange(n)
        elif how == "random":
            idx = np.sort(np.random.default_rng(int(self.data.get("seed", 0))).choice(len(df), n, replace=False))
        else:
            raise UserError(f"benchmark.data.select={how} (valid: first, random)")
        return df.iloc[idx].reset_index(drop=True)

    def load(self, cache_dir) -> TextLoaded:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        df = self.select(read_qqp(self.data.get("path")))
        spec = self.model_spec.get("path") or self.model_spec.get("name")
        model, path = load_pretrained(AutoModelForSequenceClassification, spec, "benchmark.model")
        if self.model_spec.get("check_labels", True):
            check_labels(model.config, f"benchmark.model {spec}")
        tokenizer, _ = load_pretrained(AutoTokenizer, spec, "benchmark.model (tokenizer)")
        model.eval()
        batch = TextBatch(tuple(zip(df.question1, df.question2)), editable=(0, 1))
        labels = torch.tensor(df.label.to_numpy(), dtype=torch.int64)
        return TextLoaded(
            inputs=batch, labels=labels, model=model, tokenizer=tokenizer, model_key=model_fingerprint(path)
        )

    @torch.no_grad()
    def predict(self, loaded: TextLoaded, pairs: list[tuple[str, str]]) -> np.ndarray:
        todo = [p for p in dict.fromkeys(pairs) if p not in self._memo]
        device = loaded.device
        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i : i + self.batch_size]
            enc = loaded.tokenizer(
                [a for a, _ in chunk],
                [b for _, b in chunk],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(device)
            pred = loaded.model(**enc).logits.argmax(-1).cpu().tolist()
            self._memo.update(zip(chunk, pred))
        out = np.array([self._memo[p] for p in pairs], dtype=np.int64)
        while len(self._memo) > 200_000:
            self._memo.popitem(last=False)
        return out

    def evaluate(self, loaded: TextLoaded, batch: TextBatch) -> np.ndarray:
        pred = self.predict(loaded, [tuple(item) for item in batch.items])
        return pred == loaded.labels.cpu().numpy()
