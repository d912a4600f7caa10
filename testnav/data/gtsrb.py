"""GTSRB (the German Traffic Sign Recognition Benchmark) in any of the layouts it is published in.

* `official`: the INI archives unpacked as published, `GTSRB_Final_Test_Images.zip` giving
  `root/GTSRB/Final_Test/Images/*.ppm` and `GTSRB_Final_Test_GT.zip` giving
  `root/GT-final_test.csv` (the labelled list; `Images/GT-final_test.test.csv` has no labels);
  training: `root/GTSRB/Final_Training/Images/<class:05d>/GT-<class:05d>.csv` + `*.ppm`.
  The lists are `;`-separated: Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId.
* `torchvision`: the same files under `root/gtsrb/` (torchvision.datasets.GTSRB's layout).
* `kaggle`: the widely mirrored re-packaging, `root/Test.csv` / `root/Train.csv`
  (`,`-separated, Width,Height,Roi.X1,Roi.Y1,Roi.X2,Roi.Y2,ClassId,Path) with PNGs under
  `root/Test/` and `root/Train/<class>/`.

`layout: auto` picks the one present. With `roi: true` each sign is cropped to its annotated
region of interest, PIL's box (X1, Y1, X2, Y2), X2 and Y2 exclusive: the reading under which
the border the annotation leaves round every sign is "at least 5 pixels" on all four sides, as
the data set's readme says (00000.ppm: 53×54, ROI 6, 5, 48, 49). Then images are resized to
`image_size` (PIL bilinear).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from ..errors import UserError
from . import open_image, require, subset, to_tensor

LAYOUTS = {
    "official": "root/GTSRB/Final_Test/Images/*.ppm with root/GT-final_test.csv (the INI zips unpacked in root)",
    "torchvision": "root/gtsrb/GTSRB/Final_Test/Images/*.ppm with root/gtsrb/GT-final_test.csv",
    "kaggle": "root/Test.csv (Width,…,ClassId,Path) with root/Test/*.png (and Train.csv, Train/<class>/)",
}
ROI = ["Roi.X1", "Roi.Y1", "Roi.X2", "Roi.Y2"]


class GTSRB:
    def __init__(
        self,
        root: str,
        split: str = "test",
        layout: str = "auto",
        roi: bool = True,
        n: int | None = None,
        seed: int = 0,
        image_size=32,
    ):
        if split not in ("test", "train"):
            raise UserError(f"benchmark.data.split={split} (valid: test, train)")
        if layout not in ("auto", *LAYOUTS):
            raise UserError(f"benchmark.data.layout={layout} (valid: auto, {', '.join(LAYOUTS)})")
        self.root, self.split, self.layout, self.roi = root, split, layout, bool(roi)
        self.n, self.seed, self.image_size = n, int(seed), image_size

    def detect(self, root: Path) -> str:
        marks = {
            "official": root / "GTSRB",
            "torchvision": root / "gtsrb" / "GTSRB",
            "kaggle": root / ("Test.csv" if self.split == "test" else "Train.csv"),
        }
        if self.layout != "auto":
            return self.layout
        for name, mark in marks.items():
            if mark.exists():
                return name
        raise UserError(
            f"GTSRB not found under {root}: expected one of the published layouts: "
            + "; ".join(f"{k}: {v}" for k, v in LAYOUTS.items())
        )

    def rows(self) -> pd.DataFrame:
        """One row per image: path, the ROI corners and the class."""
        root = require(self.root, "put GTSRB there as published: " + "; ".join(LAYOUTS.values()))
        layout = self.detect(root)
        if layout == "kaggle":
            csv = require(root / ("Test.csv" if self.split == "test" else "Train.csv"), LAYOUTS["kaggle"])
            df = pd.read_csv(csv)
            df["path"] = [root / p for p in df["Path"]]
        else:
            base = root if layout == "official" else root / "gtsrb"
            if self.split == "test":
                csv = require(
                    base / "GT-final_test.csv",
                    f"the labelled test list from GTSRB_Final_Test_GT.zip ({LAYOUTS[layout]})",
                )
                df = pd.read_csv(csv, sep=";")
                df["path"] = [base / "GTSRB" / "Final_Test" / "Images" / f for f in df["Filename"]]
            else:
                images = require(
                    base / "GTSRB" / "Final_Training" / "Images", "GTSRB_Final_Training_Images.zip, unpacked"
                )
                parts = []
                for csv in sorted(images.glob("*/GT-*.csv")):
                    part = pd.read_csv(csv, sep=";")
                    part["path"] = [csv.parent / f for f in part["Filename"]]
                    parts.append(part)
                if not parts:
                    raise UserError(f"{images} holds no <class>/GT-<class>.csv lists")
                df = pd.concat(parts, ignore_index=True)
        missing = {"ClassId", *ROI} - set(df.columns)
        if missing:
            raise UserError(
                f"{csv} lacks column(s) {', '.join(sorted(missing))} (a GTSRB annotation list has "
                f"Width, Height, {', '.join(ROI)}, ClassId)"
            )
        return df[["path", *ROI, "ClassId"]]

    def load(self):
        df = self.rows()
        keep = subset(len(df), self.n, self.seed)
        images = []
        for i in keep:
            row = df.iloc[int(i)]
            im = open_image(require(row["path"], "an image listed in the GTSRB annotation list"))
            if self.roi:
                x1, y1, x2, y2 = (int(row[c]) for c in ROI)
                im = im.crop((x1, y1, x2, y2))
            images.append(im)
        return to_tensor(images, self.image_size), torch.tensor(df["ClassId"].to_numpy()[keep], dtype=torch.int64)

    def describe(self) -> dict:
        df = self.rows()
        return {
            "reader": "gtsrb",
            "root": str(self.root),
            "split": self.split,
            "roi": self.roi,
            "n": self.n,
            "seed": self.seed,
            "image_size": self.image_size,
            "files": len(df),
            "labels": int(df["ClassId"].sum()),
        }
