"""Where a code completion ends: ReCode's `filter_valid_code`, or the Codex stop sequences.

`recode` (the default; ReCode `evaluate-public-models/utils/truncate.py`, `--valid_filter
func_ast_first`): the model decodes greedily with no stop criterion up to `max_length` tokens of
prompt + completion (2,048). Then, from the longest prefix of the generated tokens down, the
first prefix for which prompt + prefix parses as Python is kept, and cut at the end of the
*first* top-level function of prompt + prefix. When the prompt itself defines a helper before the
entry point (HumanEval/10, 32, 38, 50) that function ends inside the prompt, and the completion is
empty: ReCode scores those problems as failed, and so do we. If no prefix parses, the whole
generation is kept; if the parsed code has no top-level function, the parsed prefix is.
A trailing `assert`, a markdown fence or a completion cut by the token limit therefore still
passes when a complete function precedes it.

`codex`: decoding stops at, and the completion is cut before, the first of the Codex paper's
stop sequences (`\\nclass`, `\\ndef`, `\\n#`, `\\nif`, `\\nprint`), with `max_new_tokens` 512.
"""

from __future__ import annotations

import ast

STOP = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")  # the Codex paper's stop sequences for HumanEval
READINGS = ("recode", "codex")


def truncate(completion: str, stops=STOP) -> str:
    cut = min((i for i in (completion.find(s) for s in stops) if i >= 0), default=len(completion))
    return completion[:cut]


def _parses(code: str):
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def filter_valid_code(prompt: str, prefixes) -> str:
    """ReCode's cut. `prefixes`: the decoded generation cut after each of its tokens, longest first
    (the whole generation first)."""
    whole = None
    for text in prefixes:
        if whole is None:
            whole = text
        code = prompt + text
        tree = _parses(code)
        if tree is None:
            continue
        first = next((n for n in tree.body if type(n) is ast.FunctionDef), None)
        if first is None:
            return text
        segment = ast.get_source_segment(code, first)
        end = code.find(segment) + len(segment)
        return code[:end][len(prompt) :]
    return whole if whole is not None else ""


def token_prefixes(tokenizer, ids: list[int]):
    """decode(ids[:k]) for k = len(ids) … 1, as ReCode decodes them (special tokens skipped)."""
    for k in range(len(ids), 0, -1):
        yield tokenizer.decode(ids[:k], skip_special_tokens=True, clean_up_tokenization_spaces=False)
