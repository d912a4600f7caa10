"""Any text classifier on a file of labelled sentences or sentence pairs: ψ = accuracy.

Data (`TextTable`): a local CSV, JSONL/JSON or Parquet file with a `text` column (single
sentences) or `text_a` and `text_b` (pairs), and a `label` column; any number of classes.
Labels are class indices, or class names that the model's `config.label2id` maps. A pair is
encoded as a pair (one [SEP] between the segments), a single sentence alone, so a sentence
classifier sees exactly what it was trained on. `n` rows are kept, the first n or n drawn with
`seed` (kept in file order).

Model (`SequenceClassifier`): any Hugging Face sequence classifier from a `save_pretrained`
directory (`path`) or a Hub id in the local cache (`name`); its tokenizer from the same place.
In Python (testnav.Tester) the data and the model can be objects in memory (`TextItems`: texts and
labels, a Hugging Face `datasets.Dataset` or a DataLoader; `GivenTextModel`, or a prediction function,
testnav/models/function.py), identified by a hash of the texts and of the model's weights (a
function's: its outputs).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..core.cache import stable_hash
from ..errors import UserError, note
from ..families.text_base import TextBatch
from ..models.pretrained import load_pretrained, model_fingerprint
from .text import TextBenchmark, TextLoaded, file_fingerprint, require_file

FORMAT = "a .csv/.jsonl/.json/.parquet file with a `text` column (or `text_a` and `text_b`) and a `label` column"


def read_frame(path) -> pd.DataFrame:
    p = require_file(path, "benchmark.data.path", FORMAT)
    suffix = p.suffix.lower()
    try:
        if suffix == ".csv":
            return pd.read_csv(p, dtype=str, keep_default_na=False)
        if suffix == ".tsv":
            return pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
        if suffix in (".jsonl", ".json"):
            return pd.read_json(p, lines=suffix == ".jsonl", dtype=False)
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(p)
    except Exception as e:
        raise UserError(f"benchmark.data.path={path} cannot be read as {FORMAT} ({type(e).__name__})") from None
    raise UserError(f"benchmark.data.path={path}: unknown extension {suffix} (expected {FORMAT})")


def columns_of(df: pd.DataFrame, where: str, text: str = "text", text_b: str = "text_b", label: str = "label"):
    """(segment columns, label column): `text`, or the pair `text_a`/`text_b`."""
    pair_a = "text_a" if text == "text" else text
    if label not in df.columns:
        raise UserError(
            f"{where} has no '{label}' column (columns: {', '.join(map(str, df.columns))}; expected {FORMAT})"
        )
    if pair_a in df.columns and text_b in df.columns:
        return (pair_a, text_b), label
    if text in df.columns:
        return (text,), label
    raise UserError(
        f"{where} has no '{text}' column nor '{pair_a}' and '{text_b}' "
        f"(columns: {', '.join(map(str, df.columns))}; expected {FORMAT})"
    )


class TextTable:
    """The labelled texts in a local file (benchmark.data.*)."""

    def __init__(
        self,
        path=None,
        n=None,
        select: str = "random",
        seed: int = 0,
        text: str = "text",
        text_b: str = "text_b",
        label: str = "label",
    ):
        self.path, self.n, self.select, self.seed = path, n, select, int(seed)
        self.text, self.text_b, self.label = text, text_b, label

    def rows(self) -> tuple[list[tuple[str, ...]], list]:
        df = read_frame(self.path)
        segments, label = columns_of(df, f"benchmark.data.path={self.path}", self.text, self.text_b, self.label)
        df = df.iloc[self.keep(len(df))]
        items = list(zip(*(df[c].fillna("").astype(str) for c in segments)))
        return items, df[label].tolist()

    def keep(self, total: int) -> np.ndarray:
        if self.n is None or int(self.n) >= total:
            return np.arange(total)
        if int(self.n) <= 0:
            raise UserError(f"benchmark.data.n={self.n} must be positive")
        if self.select == "first":
            return np.arange(int(self.n))
        if self.select != "random":
            raise UserError(f"benchmark.data.select={self.select} (valid: first, random)")
        return np.sort(np.random.default_rng(self.seed).choice(total, int(self.n), replace=False))

    def describe(self) -> dict:
        p = require_file(self.path, "benchmark.data.path", FORMAT)
        return {
            "file": Path(p).name,
            "sha256": file_fingerprint(p),
            "n": self.n,
            "select": self.select,
            "seed": self.seed,
            "columns": [self.text, self.text_b, self.label],
        }


TEXT_COLUMNS = (("text",), ("sentence",), ("text_a", "text_b"), ("sentence1", "sentence2"), ("question1", "question2"))


def text_rows(data) -> tuple[list, list]:
    """(texts, labels) from (texts, labels), [(text, label), …], a Hugging Face `datasets.Dataset`
    with a text column (text, sentence) or a pair (text_a/text_b, sentence1/sentence2,
    question1/question2) and a label column, or a DataLoader of (texts, labels) batches."""
    from ..data.given import LABEL_COLUMNS, is_hf_dataset

    if is_hf_dataset(data):
        columns = list(data.column_names)
        segments = next((c for c in reversed(TEXT_COLUMNS) if all(x in columns for x in c)), None)
        label = next((c for c in LABEL_COLUMNS if c in columns), None)
        if segments is None or label is None:
            raise UserError(
                f"Hugging Face dataset with columns {', '.join(columns)}: expected text (or sentence, or "
                f"a pair text_a/text_b) and label columns"
            )
        texts = list(zip(*(data[c] for c in segments))) if len(segments) == 2 else list(data[segments[0]])
        return texts, list(data[label])
    if isinstance(data, torch.utils.data.DataLoader):
        if isinstance(data.sampler, torch.utils.data.RandomSampler):
            raise UserError("text data: the DataLoader shuffles (shuffle=True); give one with shuffle=False")
        texts, labels = [], []
        for batch in data:
            if not isinstance(batch, (tuple, list)) or len(batch) != 2:
                raise UserError("text data: a DataLoader must yield (texts, labels) batches")
            segment, y = batch
            # default collation: a list of strings, or for pairs [list of text_a, list of text_b]
            if len(segment) == 2 and all(isinstance(s, (list, tuple)) for s in segment):
                texts += list(zip(*segment))
            else:
                texts += list(segment)
            labels += torch.as_tensor(y).ravel().tolist()
        return texts, labels
    if isinstance(data, tuple) and len(data) == 2:
        return list(data[0]), [int(y) if isinstance(y, torch.Tensor) else y for y in data[1]]
    return (list(c) for c in zip(*data)) if len(data) else ([], [])


def looks_like_text(data) -> bool:
    """Whether data for a model without a tokenizer is text (for a prediction function) rather than images."""
    from ..data.given import is_hf_dataset

    if isinstance(data, (str, Path)):  # an image folder
        return False
    if is_hf_dataset(data):
        return any(all(c in data.column_names for c in cols) for cols in TEXT_COLUMNS)
    if isinstance(data, torch.utils.data.DataLoader):
        first = next(iter(data), None)
        return isinstance(first, (tuple, list)) and len(first) == 2 and not isinstance(first[0], torch.Tensor)
    if not isinstance(data, (tuple, list)) or not data or not isinstance(data[0], (tuple, list)) or not data[0]:
        return False
    first = data[0][0]  # the first text of (texts, labels), or of the first (text, label) row
    return isinstance(first, str) or (isinstance(first, tuple) and all(isinstance(s, str) for s in first))


class TextItems:
    """Labelled texts in memory: [(text, label)] or [((text_a, text_b), label)], (texts, labels), a Hugging
    Face `datasets.Dataset` or a DataLoader of (texts, labels) batches."""

    def __init__(self, data):
        try:
            texts, labels = text_rows(data)
        except (TypeError, ValueError):
            raise UserError(
                "text data: give (texts, labels), [(text, label), …], [((text_a, text_b), label), …], "
                "a Hugging Face datasets.Dataset or a DataLoader"
            ) from None
        if len(texts) != len(labels):
            raise UserError(f"text data: {len(texts)} texts but {len(labels)} labels")
        if not texts:
            raise UserError("text data: the data set is empty; give at least one labelled text")
        if any(not isinstance(t, (str, tuple, list)) for t in texts):
            bad = next(i for i, t in enumerate(texts) if not isinstance(t, (str, tuple, list)))
            raise UserError(f"text data: input {bad} is a {type(texts[bad]).__name__}, not a text or a pair of texts")
        self.items = [(t,) if isinstance(t, str) else tuple(str(s) for s in t) for t in texts]
        widths = {len(i) for i in self.items}
        if len(widths) > 1 or not widths <= {1, 2}:
            raise UserError("text data: every input must be one sentence or a pair (text_a, text_b), not a mixture")
        self.labels = labels

    def rows(self):
        return self.items, self.labels

    def describe(self) -> dict:
        return {"in_memory": stable_hash([self.items, [str(y) for y in self.labels]])}


class SequenceClassifier:
    """A Hugging Face sequence classifier and its tokenizer from a local directory or the cache."""

    def __init__(self, name: str | None = None, path: str | None = None):
        self.spec = path or name

    def build(self):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        model, path = load_pretrained(AutoModelForSequenceClassification, self.spec, "benchmark.model")
        tokenizer, _ = load_pretrained(AutoTokenizer, self.spec, "benchmark.model (tokenizer)")
        return model, tokenizer, model_fingerprint(path)


class GivenTextModel:
    """A sequence classifier and tokenizer already in memory; keyed by the model's weights."""

    def __init__(self, model, tokenizer):
        if tokenizer is None:
            raise UserError("a text model needs its tokenizer: testnav.Tester(model, data, tokenizer=…)")
        self.model, self.tokenizer = model, tokenizer

    def build(self):
        from ..models.monitor import weights_digest

        vocab = getattr(self.tokenizer, "get_vocab", dict)()
        return (
            self.model,
            self.tokenizer,
            stable_hash({"weights": weights_digest(self.model), "tokenizer": stable_hash(sorted(vocab.items()))}),
        )


def label_indices(labels, config, where: str) -> torch.Tensor:
    """Class indices: integers as they are, names through the model's label2id."""
    num = int(getattr(config, "num_labels", 0) or 0)
    try:
        out = [int(y) for y in labels]
    except (TypeError, ValueError):
        label2id = {str(k): int(v) for k, v in (getattr(config, "label2id", None) or {}).items()}
        unknown = sorted({str(y) for y in labels} - label2id.keys())
        if unknown:
            raise UserError(
                f"{where}: labels {', '.join(unknown[:5])} are neither class indices nor names in the "
                f"model's label2id ({', '.join(label2id) or 'none'})"
            ) from None
        out = [label2id[str(y)] for y in labels]
    bad = sorted({y for y in out if not 0 <= y < num}) if num else []
    if bad:
        raise UserError(
            f"{where}: label(s) {', '.join(map(str, bad[:5]))} outside the model's {num} classes (0..{num - 1})"
        )
    return torch.tensor(out, dtype=torch.int64)


class TextClassification(TextBenchmark):
    def __init__(
        self,
        name="text_classification",
        families=(),
        levels=3,
        metrics=None,
        data=None,
        model=None,
        perturb_seed=0,
        batch_size=64,
        max_length=256,
    ):
        super().__init__(name, families, levels, metrics, perturb_seed, batch_size)
        self.data = data if data is not None else TextTable()
        self.model_spec = model if model is not None else SequenceClassifier()
        self.max_length = int(max_length)
        self._memo: OrderedDict = OrderedDict()

    def data_description(self) -> dict:
        return self.data.describe()

    def task_description(self) -> dict:
        return {"max_length": self.max_length}

    def load(self, cache_dir) -> TextLoaded:
        items, labels = self.data.rows()
        model, tokenizer, key = self.model_spec.build()
        if key is None:  # a prediction function: keyed by its outputs on D
            key = self.model_spec.key_of(items, model)
        if isinstance(self.model_spec, GivenTextModel) and model.training:
            note(f"{type(model).__name__} was in training mode: testnav switched it to eval mode (dropout off)")
        model.eval()
        self._memo.clear()
        width = len(items[0]) if items else 1
        return TextLoaded(
            inputs=TextBatch(tuple(items), editable=tuple(range(width))),
            labels=label_indices(labels, model.config, f"benchmark {self.name}"),
            model=model,
            tokenizer=tokenizer,
            model_key=key,
        )

    @torch.no_grad()
    def logits(self, loaded: TextLoaded, chunk: list[tuple[str, ...]]) -> torch.Tensor:
        """The model's logits for one batch of items (pairs encoded as pairs)."""
        if loaded.tokenizer is None:  # a prediction function on the texts themselves
            return loaded.model.scores(chunk)
        segments = [list(s) for s in zip(*chunk)]
        enc = loaded.tokenizer(
            *segments, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(loaded.device)
        return loaded.model(**enc).logits

    @torch.no_grad()
    def predict(self, loaded: TextLoaded, items: list[tuple[str, ...]]) -> np.ndarray:
        todo = [p for p in dict.fromkeys(items) if p not in self._memo]
        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i : i + self.batch_size]
            self._memo.update(zip(chunk, self.logits(loaded, chunk).argmax(-1).cpu().tolist()))
        out = np.array([self._memo[p] for p in items], dtype=np.int64)
        while len(self._memo) > 200_000:
            self._memo.popitem(last=False)
        return out

    def evaluate(self, loaded: TextLoaded, batch: TextBatch) -> np.ndarray:
        return self.predict(loaded, [tuple(item) for item in batch.items]) == loaded.labels.cpu().numpy()
