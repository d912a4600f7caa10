"""What the code families share: ReCode's docstring split and identifier protection.

A code prompt travels through the walker already split (`split_prompt`) into
(head, doc, cases), and only `doc` is ever edited, so the signature, imports and `>>>`
examples are untouched by construction (ReCode `nlaugmenter/process_docstring.py: sep_doc`):

* head: everything up to the opening triple quote after the entry point, plus the one
  character after it (ReCode skips it unconditionally), plus following spaces/newlines/tabs;
* doc: up to the first `>>>` after the entry point, trailing whitespace excluded;
* cases: the `>>>` examples and everything after.

Where ReCode differs, and what we do (docs/text.md):
* without `>>>` (88 HumanEval prompts) ReCode's `find` returns −1 and its doc runs to the
  end of the prompt minus the final newline, *closing quotes included*, so the whitespace
  perturbation can put a space between them and break the prompt's syntax. We end the doc
  before the closing delimiter instead;
* ReCode searches only for `\"\"\"`; we also accept `'''`, whichever opens first.

Identifier protection (ReCode `preprocess_docstring`/`postprocess_docstring`): for
char-level transforms (butterfingers, char case), doc words (split on " ") whose cleaned
form is an identifier of the problem are replaced by `<|||>` before the perturbation and
restored after. ReCode extracts identifiers with tree-sitter (variable, function and type
names of prompt + canonical solution); we use Python's `ast` for the same sets (names bound
by assignment, loops, imports, parameters, functions and classes, and names used in
annotations). ReCode's `clean_word` keeps the first run of alphanumerics, which cuts
`string_xor` to `string`; ours keeps `_`, so snake-case identifiers are protected whole.
The whitespace perturbation is not masked in ReCode (it sets no `perturb_level`) and is
not masked here either.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize

from .text_base import TextFamily

MASK = "<|||>"
_CLEAN = re.compile(r"[A-Za-z0-9_]+")


def split_prompt(prompt: str, entry_point: str) -> tuple[str, str, str]:
    at = max(prompt.find(entry_point), 0)
    opens = [i for i in (prompt.find('"""', at), prompt.find("'''", at)) if i >= 0]
    if not opens:  # no docstring: nothing to perturb
        return prompt, "", ""
    q = min(opens)
    delim = prompt[q : q + 3]
    start = q + 3 + 1  # ReCode: the character after the quotes always belongs to the head
    while start < len(prompt) and prompt[start] in " \n\t":
        start += 1
    end = prompt.find(">>>", at)
    if end < 0 or end < start:
        close = prompt.find(delim, start)
        end = close if close >= 0 else len(prompt)
    while end > start and prompt[end - 1] in " \n\t":
        end -= 1
    if start > end:  # an empty docstring
        return prompt[:end], "", prompt[end:]
    return prompt[:start], prompt[start:end], prompt[end:]


def identifiers(code: str) -> frozenset[str]:
    """Variable, function, class and type names of a piece of Python (ReCode's word_blacklist)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return _token_names(code)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
            if node.annotation is not None:
                names |= {n.id for n in ast.walk(node.annotation) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            names |= {n.id for n in ast.walk(node.returns) if isinstance(n, ast.Name)}
        if isinstance(node, ast.AnnAssign):
            names |= {n.id for n in ast.walk(node.annotation) if isinstance(n, ast.Name)}
    return frozenset(names)


def _token_names(code: str) -> frozenset[str]:
    names = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string):
                names.add(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return frozenset(names)


def clean_word(word: str) -> str:
    m = _CLEAN.search(word)
    return m.group() if m else ""


def mask(doc: str, protected) -> tuple[str, list[str]]:
    words, kept = doc.split(" "), []
    for i, w in enumerate(words):
        if clean_word(w) in protected:
            kept.append(w)
            words[i] = MASK
    return " ".join(words), kept


def unmask(doc: str, kept: list[str]) -> str:
    doc = doc.replace("< ||| >", MASK)
    for w in kept:
        doc = doc.replace(MASK, w, 1)
    return doc


class CodeFamily(TextFamily):
    """Perturbs the docstring segment with `transform(doc, param, rng, context)`; char-level
    families (`protect = True`) mask the problem's identifiers first, as ReCode does."""

    protect = False

    def perturb(self, text, param, rng, context):
        if not text:
            return text
        if self.protect:
            masked, kept = mask(text, context.get("identifiers", ()))
            return unmask(self.transform(masked, param, rng, context), kept)
        return self.transform(text, param, rng, context)

    def transform(self, doc: str, param, rng, context) -> str:
        raise NotImplementedError
