"""Families by name, with the published per-level tables they are used with.

The tables are the packaged configs themselves, so the Python entry point and the YAML
benchmarks cannot drift apart: ImageNet-C's for 32, 64 and 224 px (conf/families/
imagenet_c_*.yaml, the one nearest the image size), MNIST-C's for 28-px grayscale digits (the
embedded benchmark's), the text families of QQP and the code families of HumanEval. A name is
the family's own `name` (what queries such as `brightness >= 2` refer to).
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import UserError
from ..paths import CONF

IMAGE_TABLES = {
    32: "families/imagenet_c_32.yaml",
    64: "families/imagenet_c_64.yaml",
    224: "families/imagenet_c_224.yaml",
}
TABLES = {
    "mnist_c": "benchmark/mnist5k.yaml",
    "text": "benchmark/qqp.yaml",
    "code": "benchmark/humaneval.yaml",
    **{f"imagenet_c_{k}": v for k, v in IMAGE_TABLES.items()},
}


@lru_cache(maxsize=None)
def table(which: str) -> dict[str, dict]:
    """{family name: its YAML node (_target_, params, …)} of one packaged table."""
    from hydra.utils import get_class
    from omegaconf import OmegaConf

    out = {}
    for node in OmegaConf.to_container(OmegaConf.load(CONF / TABLES[which]), resolve=False)["families"]:
        out[get_class(node["_target_"]).name] = node
    return out


def table_for(modality: str, image_size=None, channels: int = 3) -> list[str]:
    """The tables a name is looked up in, most specific first."""
    if modality == "text":
        return ["text"]
    if modality == "code":
        return ["code"]
    side = min(image_size) if isinstance(image_size, (tuple, list)) else image_size
    nearest = min(IMAGE_TABLES, key=lambda k: abs(k - (side or 224)))
    image = [f"imagenet_c_{nearest}"] + [f"imagenet_c_{k}" for k in IMAGE_TABLES if k != nearest]
    return (["mnist_c"] + image) if channels == 1 and side is not None and side <= 32 else image


def names(modality: str = "image", image_size=None, channels: int = 3) -> list[str]:
    return sorted({n for t in table_for(modality, image_size, channels) for n in table(t)})


def family(name, modality: str = "image", image_size=None, channels: int = 3, **overrides):
    """A Family from its registry name (with its published table), or a Family object as it is."""
    from hydra.utils import instantiate

    from . import Family

    if isinstance(name, Family):
        return name
    if not isinstance(name, str):
        raise UserError(f"family {name!r}: give a registry name or a testnav.families.Family")
    for t in table_for(modality, image_size, channels):
        if name in table(t):
            return instantiate({**table(t)[name], **overrides})
    raise UserError(f"unknown {modality} family '{name}' (valid: {', '.join(names(modality, image_size, channels))})")
