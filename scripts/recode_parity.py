"""Do the harness's code families reproduce ReCode's released perturbed prompts?

    python scripts/recode_parity.py --recode DIR [--seeds 0-4] [--datasets humaneval,mbpp]

DIR is ReCode's `dataset-release` folder as published (amazon-science/recode): the clean prompts in
`nominal/` and the perturbed ones in `perturbed_finalized/{humaneval,mbpp}/full/{nlaugmenter,format}/`.
Each harness family runs at the setting that equals ReCode's default, on ReCode's clean prompt, with
ReCode's randomness (every docstring perturbed from `random.seed(seed)`), through the same
`perturb`/`apply` the ground-truth walk calls:

* butterfingers at level 1 (p = .05, ReCode's hard-coded value)      vs ButterFingersPerturbation_s{seed}
* char case at level 3 (p = .35, ReCode's default)                   vs ChangeCharCase_s{seed}
* whitespace at ReCode's (p_add, p_del) = (.05, .10), which is not a TestNav level (the paper's
  level 1 is the pair reversed)                                      vs WhitespacePerturbation_s{seed}
* newline at level 1 (one newline after the docstring), on ReCode's partial-code prompts
  (`nominal/*_partial.jsonl`), where ReCode applies its format perturbations  vs new_line_afterdoc_s0

A prompt has a documented deviation (docs/readings.md) when the harness deliberately reads it
differently from ReCode: `split` — no `>>>` in the prompt, where ReCode's docstring runs over the
closing quotes and the harness stops before them; `clean_word` — a docstring word whose protection
differs because the harness keeps `_` in cleaned words (`string_xor` is protected whole). Those
prompts are counted apart; agreement is measured on all the others. One line per dataset × family ×
seed; the last line is the verdict, and the exit status is 1 below 99 % agreement (2 for a bad DIR).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from testnav.code.benchmark import CodeBenchmark  # noqa: E402
from testnav.errors import UserError  # noqa: E402
from testnav.families.code_base import clean_word  # noqa: E402
from testnav.families.code_butterfingers import ButterFingers  # noqa: E402
from testnav.families.code_charcase import CharCase  # noqa: E402
from testnav.families.code_newline import Newline  # noqa: E402
from testnav.families.code_whitespace import Whitespace  # noqa: E402

NOMINAL = {"humaneval": "HumanEval.jsonl", "mbpp": "mbpp_wtest.jsonl"}
THRESHOLD = 99.0


def families():
    """(name, ReCode file stem, harness family, parameter, partial prompts?, seeded?)"""
    return [
        ("butterfingers", "ButterFingersPerturbation", ButterFingers(), 0.05, False, True),
        ("charcase", "ChangeCharCase", CharCase(), 0.35, False, True),
        ("whitespace", "WhitespacePerturbation", Whitespace([(0.05, 0.10)]), (0.05, 0.10), False, True),
        ("newline", "new_line_afterdoc", Newline(), 1, True, False),
    ]


def read_jsonl(p: Path) -> list[dict]:
    with open(p, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def recode_doc_span(prompt: str, entry_point: str) -> tuple[int, int]:
    """Where ReCode's `sep_doc` puts the docstring: after the quotes and one more character, up to
    the first `>>>`; without `>>>` its search returns −1 and the span runs to the end of the prompt
    less trailing whitespace."""
    at = prompt.find(entry_point)
    start = prompt.find('"""', at)
    if start == -1:
        start = prompt.find("'''", at)
    start += 4
    while start < len(prompt) and prompt[start] in " \n\t":
        start += 1
    end = prompt.find(">>>", at) - 1
    while prompt[end] in " \n\t":
        end -= 1
    return start, end + 1


def recode_clean(word: str) -> str:
    out = []
    for ch in word:
        if ch.isalnum():
            out.append(ch)
        elif out:
            break
    return "".join(out)


def deviations(head: str, doc: str, prompt: str, entry: str, protected, masked: bool) -> list[str]:
    found = []
    if recode_doc_span(prompt, entry) != (len(head), len(head) + len(doc)):
        found.append("split")
    if masked:
        words = doc.split(" ")
        if any((clean_word(w) in protected) != (recode_clean(w) in protected) for w in words):
            found.append("clean_word")
    return found


def released(recode: Path, dataset: str, stem: str, seed: int) -> Path:
    sub = "format" if stem.startswith("new_line") else "nlaugmenter"
    return recode / "perturbed_finalized" / dataset / "full" / sub / f"{dataset}_{stem}_s{seed}.jsonl"


def compare(recode: Path, dataset: str, fam_row, seed: int, problems: list[dict]):
    name, stem, fam, param, _, _ = fam_row
    path = released(recode, dataset, stem, seed)
    theirs = {r["task_id"]: r["prompt"] for r in read_jsonl(path)}
    batch = CodeBenchmark(families=[fam], levels=2, versions=1).batch_of(problems)
    if isinstance(fam, Newline):
        ours_items = fam.apply(batch, param, None).items
    else:
        ours_items = [
            (h, fam.perturb(d, param, random.Random(seed), batch.ctx(i)), c) for i, (h, d, c) in enumerate(batch.items)
        ]
    agree = total = 0
    documented: dict[str, int] = {}
    for i, p in enumerate(problems):
        if p["task_id"] not in theirs:
            continue
        head, doc, _ = batch.items[i]
        protected = fam.protected_set(batch.ctx(i)) if fam.masked else ()
        dev = (
            []
            if isinstance(fam, Newline)
            else deviations(head, doc, p["prompt"], p["entry_point"], protected, fam.masked)
        )
        if dev:
            for d in dev:
                documented[d] = documented.get(d, 0) + 1
            documented["prompts"] = documented.get("prompts", 0) + 1
            continue
        total += 1
        agree += "".join(ours_items[i]) == theirs[p["task_id"]]
    return agree, total, documented


def parse_seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-", 1)
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",") if s.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recode", required=True, help="ReCode's dataset-release folder")
    ap.add_argument("--seeds", default="0-4", help="seeds to compare, e.g. 0-4 or 0,2 (default 0-4)")
    ap.add_argument("--datasets", default="humaneval,mbpp")
    args = ap.parse_args(argv)
    recode = Path(args.recode).expanduser()
    seeds = parse_seeds(args.seeds)
    agree = total = with_dev = 0
    lines = 0
    for dataset in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        if dataset not in NOMINAL:
            raise UserError(f"--datasets: {dataset} (valid: {', '.join(NOMINAL)})")
        for row in families():
            name, stem, _, _, partial, seeded = row
            src = recode / "nominal" / (f"{dataset}_partial.jsonl" if partial else NOMINAL[dataset])
            if not src.is_file():
                continue
            problems = read_jsonl(src)
            for seed in seeds if seeded else [0]:
                if not released(recode, dataset, stem, seed).is_file():
                    continue
                a, t, doc = compare(recode, dataset, row, seed, problems)
                agree, total, with_dev, lines = agree + a, total + t, with_dev + doc.get("prompts", 0), lines + 1
                detail = ", ".join(f"{k} {v}" for k, v in sorted(doc.items()) if k != "prompts")
                pct = 100.0 * a / t if t else 100.0
                print(
                    f"{dataset} {name} s{seed}: {a} of {t} agree ({pct:.1f}%); "
                    f"{doc.get('prompts', 0)} with a documented deviation" + (f" ({detail})" if detail else "")
                )
    if lines == 0:
        raise UserError(
            f"--recode {recode}: no ReCode release found (expected nominal/HumanEval.jsonl and "
            "perturbed_finalized/{humaneval,mbpp}/full/{nlaugmenter,format}/…)"
        )
    pct = 100.0 * agree / total if total else 0.0
    print(
        f"agreement {pct:.1f}% on prompts without a documented deviation ({agree} of {total}); "
        f"{with_dev} prompts with a documented deviation"
    )
    return 0 if pct >= THRESHOLD else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
