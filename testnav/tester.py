"""`testnav.Tester`: the whole harness on a model and data already in memory, in one call.

    t = testnav.Tester(model, (images, labels), families=["gaussian_blur", "brightness", "contrast", "jpeg"],
                       levels=3, fidelity="ssim")
    run = t.search("nsga2", budget=200, seed=0, stop_at=0.95)   # live: the model itself, no table needed
    table = t.groundtruth()                                     # every θ, cached under a hash of the weights
    run = t.search("tomonav", seed=0, replay=True)              # against that table: Recall@P*, AUC
    t.tomography(); t.query("brightness >= 2 & jpeg <= 1")

It builds the same objects the YAML benchmarks build (ImageClassification or TextClassification,
families from the registry, the fidelity and search configs under conf/) and hands them to the
functions behind run.py (`app.live_run`, `app.replay_run`, `compute_groundtruth`,
`tomography.stage.tomography_for`), so a Python run and a CLI run of the same settings agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch
from omegaconf import OmegaConf

from .paths import CONF
from .errors import UserError

IMAGE_PRESET, TEXT_PRESET = (
    CONF / "benchmark" / "image_classification.yaml",
    CONF / "benchmark" / "text_classification.yaml",
)
TEXT_FAMILIES = ("typo", "contraction", "punctuation")


@dataclass
class Run:
    """One search: `summary` (the summary.json fields), `trace` (trace.csv: one row per proposal),
    `ranked` (ranked.csv: every configuration seen, by Pareto rank then crowding distance)."""

    summary: dict
    trace: pd.DataFrame
    ranked: pd.DataFrame

    @property
    def front(self) -> pd.DataFrame:
        """The measured Pareto front: rank 0 of the ranked list."""
        return self.ranked[self.ranked["rank"] == 0].reset_index(drop=True)

    def save(self, directory) -> Path:
        """Write summary.json, trace.csv and ranked.csv as a run directory of run.py (figures read it)."""
        from .app.stages import write_outputs

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        write_outputs(OmegaConf.create({"trace_format": "csv"}), out, self.trace, self.ranked, self.summary)
        return out


def image_tensors(data, image_size=None) -> tuple[torch.Tensor, torch.Tensor, dict | None]:
    """(images (N, C, H, W) in [0, 1], labels, a file description or None) from tensors, a torch
    Dataset of (image, label) or an image-folder path."""
    if isinstance(data, (str, Path)):
        from .data.image_folder import ImageFolder

        reader = ImageFolder(str(data), image_size=image_size)
        x, y = reader.load()
        return x, y, reader.describe()
    if isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0], torch.Tensor):
        x, y = data
    elif isinstance(data, torch.utils.data.Dataset):
        from .data import to_tensor

        items = [data[i] for i in range(len(data))]
        images = [im for im, _ in items]
        if all(isinstance(im, torch.Tensor) for im in images):
            x = torch.stack([im.float() for im in images])
        else:
            x = to_tensor([im.convert("RGB") for im in images], image_size)  # PIL images, as the readers convert them
        y = torch.as_tensor([int(lbl) for _, lbl in items])
    else:
        raise UserError(
            "image data: give (images, labels) tensors, a torch Dataset of (image, label), "
            "or the path of an image folder (root/<class>/<image>)"
        )
    x, y = torch.as_tensor(x), torch.as_tensor(y).long().ravel()
    if x.dim() == 3:
        x = x[:, None]
    if x.dim() != 4 or len(x) != len(y):
        raise UserError(
            f"image data: images of shape {tuple(x.shape)} and {len(y)} labels (expected (N, C, H, W) and N)"
        )
    if not x.is_floating_point() or float(x.min()) < 0 or float(x.max()) > 1:
        raise UserError("image data: images must be floats in [0, 1] (divide 8-bit images by 255)")
    if image_size is not None and tuple(x.shape[-2:]) != tuple(_size(image_size)):
        import torch.nn.functional as F

        x = F.interpolate(x, size=_size(image_size), mode="bilinear", antialias=True, align_corners=False).clamp(0, 1)
    return x.float().contiguous(), y, None


def _size(image_size) -> tuple[int, int]:
    return (image_size, image_size) if isinstance(image_size, int) else tuple(image_size)


class TensorData:
    """A data reader over tensors in memory, identified by their bytes (or by the files they came from)."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, description: dict | None = None):
        self.images, self.labels, self.description = images, labels, description

    def load(self):
        return self.images, self.labels

    def describe(self) -> dict:
        if self.description is not None:
            return self.description
        import hashlib

        h = hashlib.sha256(self.images.cpu().numpy().tobytes())
        h.update(self.labels.cpu().numpy().tobytes())
        return {"tensors": list(self.images.shape), "sha256": h.hexdigest()[:16]}


def metric_nodes(preset: Path) -> dict:
    return OmegaConf.to_container(OmegaConf.load(preset).metrics, resolve=True)


class Tester:
    """model: any nn.Module returning logits (images in [0, 1], normalised inside, or give mean/std), or a
    Hugging Face sequence classifier with `tokenizer=`. data: (images, labels) tensors, a torch Dataset,
    an image-folder path; for text (texts, labels) or [(text, label), …] with single sentences or
    (text_a, text_b) pairs. families: registry names (testnav/families/registry.py) or Family objects.
    fidelity: ssim or kid for images, chrf for text (several: a list, the first one searched)."""

    def __init__(
        self,
        model,
        data,
        families=None,
        levels: int = 3,
        fidelity=None,
        tokenizer=None,
        image_size=None,
        mean=None,
        std=None,
        input_size=None,
        layer=None,
        name: str = "my_model",
        cache_dir="results/cache",
        device: str = "auto",
        perturb_seed: int = 0,
        batch_size: int = 256,
        max_length: int = 256,
        progress: bool = False,
    ):
        from .pipeline import build, compose_config, resolve_device
        from .families.registry import family

        self.text = tokenizer is not None
        fidelities = [fidelity] if isinstance(fidelity, str) else list(fidelity or ["chrf" if self.text else "ssim"])
        preset = TEXT_PRESET if self.text else IMAGE_PRESET
        nodes = metric_nodes(preset)
        unknown = [f for f in fidelities if f not in nodes]
        if unknown:
            raise UserError(
                f"fidelity={unknown[0]} for {'text' if self.text else 'images'} (valid: {', '.join(nodes)})"
            )
        self.cfg = compose_config([f"fidelity={fidelities[0]}"])
        self.cache_dir, self.device, self.progress = str(cache_dir), resolve_device(device), bool(progress)
        metrics = {f: build(OmegaConf.create(nodes[f])) for f in fidelities}
        if self.text:
            from .benchmarks.text_classification import GivenTextModel, TextClassification, TextItems

            fams = [family(f, modality="text") for f in (families or TEXT_FAMILIES)]
            self.benchmark = TextClassification(
                name,
                fams,
                levels,
                metrics,
                data=TextItems(data),
                model=GivenTextModel(model, tokenizer),
                perturb_seed=perturb_seed,
                batch_size=batch_size,
                max_length=max_length,
            )
        else:
            from .benchmarks.classification import ImageClassification
            from .models.monitor import GivenModel

            x, y, description = image_tensors(data, image_size)
            if not families:
                raise UserError(
                    "families: name them, e.g. families=['gaussian_blur', 'brightness', 'contrast', 'jpeg']"
                )
            fams = [family(f, image_size=tuple(x.shape[-2:]), channels=x.shape[1]) for f in families]
            self.benchmark = ImageClassification(
                name,
                fams,
                levels,
                TensorData(x, y, description),
                GivenModel(model, mean, std, input_size, layer=layer),
                metrics=metrics,
                perturb_seed=perturb_seed,
                batch_size=batch_size,
            )
        self._live, self._tomography = None, {}

    @property
    def lattice(self):
        return self.benchmark.lattice

    def _search(self, name: str, stop_at, params: dict):
        from .app.stages import build_search

        cfg = self.cfg.copy()
        OmegaConf.update(cfg, "search", OmegaConf.load(self._search_file(name)), merge=False)
        for k, v in params.items():
            if k not in cfg.search:
                raise UserError(f"search {name} has no setting '{k}' (valid: {', '.join(str(k) for k in cfg.search)})")
            cfg.search[k] = v
        if stop_at is not None:
            cfg.search.stop_at = stop_at
        search, stop = build_search(cfg)
        return search, stop, "pop_size" not in params

    @staticmethod
    def _search_file(name: str) -> Path:
        path = CONF / "search" / f"{name}.yaml"
        if not path.exists():
            valid = sorted(p.stem for p in (CONF / "search").glob("*.yaml"))
            raise UserError(f"unknown search '{name}' (valid: {', '.join(valid)})")
        return path

    def search(
        self,
        name: str = "nsga2",
        budget: int | None = None,
        seed: int = 0,
        replay: bool = False,
        stop_at: float | None = None,
        **params,
    ) -> Run:
        """A search of `budget` proposals (None: 5 × |Θ|). Live (default): the model is run on each new
        configuration (memoised across searches); replay=True: against the ground truth (computed on
        first use), which adds Recall@P* and its AUC. stop_at: end once the stopping certificate's
        p_complete reaches it. params: the search's settings (conf/search/<name>.yaml), e.g. pop_size."""
        from .app.stages import check_budget, check_seed, groundtruth_objectives, live_run, replay_run, stopping_rule

        search, stop, fit = self._search(name, stop_at, params)
        budget = check_budget(budget, self.lattice.size)
        seed = check_seed(seed)
        if fit:  # the default settings (an evolutionary search's population) fitted to a small lattice
            search.fit(self.lattice, budget)
        if not replay:
            from .fidelity import sign as rho_sign
            from .groundtruth.live import LiveOracle

            if self._live is None:
                col = self.cfg.fidelity.column
                self._live = LiveOracle(
                    self.benchmark, self.cache_dir, self.device, col, rho_sign(col, self.benchmark.metrics)
                )
            trace, ranked, summary = live_run(
                search,
                stop,
                self.benchmark,
                self.cfg.fidelity,
                budget,
                seed,
                self.cache_dir,
                self.device,
                live=self._live,
            )
            return Run(summary, trace, ranked)
        obj, identity = groundtruth_objectives(
            self._groundtruth_path(), self.benchmark, self.cfg.fidelity, signals=search.requires
        )
        trace, ranked, summary = replay_run(search, stop, obj, identity, budget, seed, *stopping_rule(self.cfg))
        return Run(summary, trace, ranked)

    def _groundtruth_path(self) -> Path:
        from .groundtruth.compute import compute_groundtruth

        return compute_groundtruth(self.benchmark, self.cache_dir, self.device, progress=self.progress)

    def groundtruth(self) -> pd.DataFrame:
        """Every θ of the lattice (one row each: levels, ψ, δ, raw fidelity, per-input outcomes), computed
        once and cached under a key that hashes the model's weights, the data and the families."""
        return pd.read_parquet(self._groundtruth_path())

    def tomography(self, source: str | None = None):
        """TestifAI's partial tomography: tests of order ≤ 2 measured (live on the model, or replayed from
        the ground truth with source="replay", which adds the true r_σ), the rest predicted. Returns the
        Tomography (`.table`: one row per test; `.pairs`: χ² independence per family pair). The default
        source is live for images and replay for text (whose live executor is not written yet; a text
        lattice's ground truth is cheap)."""
        from .tomography.core import Settings
        from .tomography.stage import tomography_for

        source = source or ("replay" if self.text else "live")

        if source not in self._tomography:
            quality = self.cfg.fidelity.column if source == "replay" else None
            self._tomography[source] = tomography_for(
                self.benchmark,
                Settings.from_config(self.cfg),
                source,
                quality,
                self.cache_dir,
                self.device,
                self.progress,
            )
        return self._tomography[source]

    def query(self, expr: str, source: str | None = None) -> dict:
        """R(Q) for a Boolean query over family levels, e.g. "brightness >= 2 & jpeg <= 1": measured,
        estimated and predicted (and true, with source="replay")."""
        from .tomography.query import Query
        from .tomography.stage import answer

        Query(expr, [f.name for f in self.benchmark.families])  # a bad query fails before any work
        return answer(self.tomography(source), expr)
