"""Which docstring words the char-level code families must not perturb.

ReCode (`nlaugmenter/process_docstring.py: word_blacklist`) protects every tree-sitter
`identifier` node of the prompt plus its canonical solution — names that are defined *and*
names that are only used (`sum`, `sorted`, `len`, `split`), attribute names, keyword-argument
names — together with natgen's `TYPE_VARS` (`list`, `int`, `True`, `return`, `in`, …). That is
reading `recode`, the default: with it the harness reproduces ReCode's released perturbed
prompts (scripts/recode_parity.py).

Reading `ast` is the narrower set the harness used before: names *bound* by the code (assignments,
loops, imports, parameters, functions, classes) and names in annotations, from Python's `ast`. It
protects fewer words (8.4 % of HumanEval docstring words instead of 12.4 %), so butterfingers and
char case touch more of the text than in ReCode.

The tree-sitter grammar is the PyPI `tree-sitter-python` wheel, newer than the grammar ReCode
compiled in 2022; the parity script measures whether that changes any released prompt.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from functools import lru_cache

from ..errors import UserError

# natgen's VarRenamerBase.TYPE_VARS, which ReCode adds to every blacklist.
TYPE_VARS = frozenset(
    ["float", "list", "List", "int", "bool", "tuple", "str", "dict", "True", "False", "self", "return", "$", "in"]
)
READINGS = ("recode", "ast")


@lru_cache(maxsize=1)
def _parser():
    try:
        import tree_sitter_python
        from tree_sitter import Language, Parser
    except ImportError:
        raise UserError(
            "protected=recode needs tree-sitter and tree-sitter-python (pip install tree-sitter "
            "tree-sitter-python), or set the code families' protected=ast"
        ) from None
    return Parser(Language(tree_sitter_python.language()))


def treesitter_identifiers(code: str) -> frozenset[str]:
    """The text of every `identifier` node tree-sitter finds in `code` (error-tolerant: a prompt
    that does not parse still yields the identifiers of the parts that do)."""
    src = code.encode("utf-8")
    names, stack = set(), [_parser().parse(src).root_node]
    while stack:
        node = stack.pop()
        if node.type == "identifier":
            names.add(src[node.start_byte : node.end_byte].decode("utf-8", "replace"))
        stack.extend(node.children)
    return frozenset(names)


def ast_identifiers(code: str) -> frozenset[str]:
    """Names bound by a piece of Python, and the names in its annotations."""
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


def check_reading(reading: str) -> str:
    if reading not in READINGS:
        raise UserError(f"protected={reading} (valid: {', '.join(READINGS)})")
    return reading


@lru_cache(maxsize=4096)
def protected_words(code: str, reading: str = "recode") -> frozenset[str]:
    """The words of a problem (prompt + canonical solution) that stay as they are."""
    if check_reading(reading) == "recode":
        return treesitter_identifiers(code) | TYPE_VARS
    return ast_identifiers(code)
