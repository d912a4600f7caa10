"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/families/test_text.py (the unit tier drives no CLI)."""

import pytest
import torch

from tests.helpers.cli_helpers import run_inprocess, run_subprocess
from tests.helpers.text_standins import QUESTIONS
from tests.unit.families.test_text import check_table, groundtruth, humaneval, lexicon, reading_sentence, standins  # noqa: F401


def run_app(args, cwd, extra_env=None, runner=run_inprocess):
    # one torch thread: the stand-ins are tiny, and on a shared 2-core machine thread hand-offs dominate
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return runner(args, cwd, {"OMP_NUM_THREADS": "1", **(extra_env or {})})
    finally:
        torch.set_num_threads(threads)


def test_app_groundtruth_qqp(standins, tmp_path):
    s = standins
    args = [
        "stage=groundtruth",
        "benchmark=qqp",
        "benchmark.levels=2",
        "progress=false",
        f"cache_dir={tmp_path / 'c'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"benchmark.data.path={s['q_data']}",
        f"benchmark.model.path={s['q_classifier']}",
        f"benchmark.metrics.bertf1.model={s['q_encoder']}",
        "benchmark.metrics.bertf1.num_layers=2",
        f"benchmark.families.0.lexicon={s['q_lexicon']}",
    ]
    df, meta = groundtruth(run_app(args, tmp_path))
    check_table(df, meta, len(QUESTIONS))
    sentence = reading_sentence("qqp", "chrf", df, meta)
    assert "TextAttack's RepeatModification and StopwordModification" in sentence and "last layer" not in sentence
    assert "BERT-F1 on layer 2" in sentence and "Contraction alone at level 1 gives δ = " in sentence
    assert "no-op" not in sentence  # the stand-in questions are full of "are not", "I am": not QQP-like
    print(f"qqp: {meta['seconds'] / 16:.3f} s per configuration ({len(QUESTIONS)} pairs)")
    # a user mistake is one line and a non-zero exit
    r = run_app(["stage=groundtruth", "benchmark=qqp", "progress=false", f"cache_dir={tmp_path / 'c'}"], tmp_path)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "benchmark.data.path is not set" in r.stderr


@pytest.mark.parametrize(
    "what, change, expect",
    [
        ("missing model files", {"benchmark.model.path": "{tmp}/no_such_model"}, "benchmark.model"),
        ("missing WordNet", {"benchmark.families.0.lexicon": "wordnet"}, "nltk.downloader wordnet"),
        ("empty dataset", {"benchmark.data.path": "{tmp}/empty.csv"}, "the test set D is empty"),
    ],
)
def test_app_text_bad_inputs_are_one_line(standins, tmp_path, monkeypatch, what, change, expect):
    import nltk
    from nltk.corpus.util import LazyCorpusLoader

    s = standins
    (tmp_path / "empty.csv").write_text("question1,question2,label\n")  # a header, no pairs
    (tmp_path / "nltk").mkdir()
    args = {
        "stage": "groundtruth",
        "benchmark": "qqp",
        "benchmark.levels": "2",
        "progress": "false",
        "cache_dir": tmp_path / "c",
        "hydra.run.dir": tmp_path / "run",
        "benchmark.data.path": s["q_data"],
        "benchmark.model.path": s["q_classifier"],
        "benchmark.metrics.bertf1.model": s["q_encoder"],
        "benchmark.families.0.lexicon": s["q_lexicon"],
    }
    args.update({k: v.format(tmp=tmp_path) for k, v in change.items()})
    env = {"NLTK_DATA": str(tmp_path / "nltk")}  # no WordNet anywhere NLTK looks
    monkeypatch.setattr(nltk.data, "path", [env["NLTK_DATA"]])  # nor in this process, which read NLTK_DATA already
    loaded = not isinstance(nltk.corpus.wordnet, LazyCorpusLoader)  # then only a fresh interpreter lacks it
    r = run_app([f"{k}={v}" for k, v in args.items()], tmp_path, env, run_subprocess if loaded else run_inprocess)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and expect in lines[0], (what, r.stderr[-2000:])
    assert not (tmp_path / "run").exists() and not list((tmp_path / "c").glob("groundtruth/*.parquet"))


@pytest.mark.parametrize("dataset", ["humaneval", pytest.param("mbpp", marks=pytest.mark.slow)])
def test_app_groundtruth_code(standins, tmp_path, dataset):
    s = standins
    args = [
        "stage=groundtruth",
        f"benchmark={dataset}",
        "benchmark.levels=2",
        "progress=false",
        "benchmark.data.n=2",
        f"cache_dir={tmp_path / 'c'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"benchmark.model.path={s['c_lm']}",
        f"benchmark.metrics.bertf1.model={s['c_encoder']}",
        "benchmark.metrics.bertf1.num_layers=2",
        "benchmark.generation.max_new_tokens=8",
        "benchmark.batch_size=16",
        "benchmark.execution.workers=2",
    ]
    if dataset == "mbpp":
        args.append(f"benchmark.data.path={s['c_mbpp']}")
    df, meta = groundtruth(run_app(args, tmp_path))
    check_table(df, meta, 2, whitespace_families=("t3", "t4"))  # whitespace, newline
    assert reading_sentence(dataset, "chrf", df, meta) == (
        f"{dataset}: ReCode's protected words (tree-sitter identifiers of prompt + solution, TYPE_VARS); newline = "
        "ReCode's new_line_afterdoc, n times; ReCode's decoding and filter_valid_code (max_length 2048); "
        "BERT-F1 on layer 2."
    )
    assert "pass_at_1" in df.columns and meta["psi_clean"] == 0.0  # random weights write no working code
    print(f"{dataset}: {meta['seconds'] / 16:.3f} s per configuration (2 problems x 5 versions)")
