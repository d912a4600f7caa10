"""LeNet-5 for 28×28 digits. `embed` exposes the penultimate (84-d) layer, the feature
space KID uses, so no Inception weights (and no download) are needed."""

from __future__ import annotations

import torch
from torch import nn

MNIST_MEAN, MNIST_STD = 0.1307, 0.3081


class LeNet5(nn.Module):
    """Conv(6,5×5)–pool–Conv(16,5×5)–pool–FC120–FC84–FC10 with ReLU and max-pooling (the
    common modern variant of LeCun et al. 1998). Takes images in [0, 1]; normalises inside."""

    def __init__(self, num_classes: int = 10, in_channels: int = 1):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, 6, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
        )
        self.fc1 = nn.Sequential(nn.Linear(16 * 5 * 5, 120), nn.ReLU())
        self.fc2 = nn.Sequential(nn.Linear(120, 84), nn.ReLU())
        self.classifier = nn.Linear(84, num_classes)

    def hidden(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Post-ReLU activations of the two hidden fully connected layers (120 and 84 neurons):
        the layers the input-level coverage signals monitor; the last is the feature space."""
        h1 = self.fc1(self.conv((x - MNIST_MEAN) / MNIST_STD))
        return [h1, self.fc2(h1)]

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        return self.hidden(x)[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.embed(x))


def train_classifier(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, lr: float, batch_size: int, seed: int
) -> nn.Module:
    """Deterministic Adam training on the CPU: fixed seed for init and for the shuffles."""
    torch.manual_seed(seed)
    for m in model.modules():
        if hasattr(m, "reset_parameters") and m is not model:
            m.reset_parameters()
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch_size):
            idx = perm[i : i + batch_size]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
    model.eval()
    return model


@torch.no_grad()
def predict(model: nn.Module, x: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    return torch.cat([model(x[i : i + batch_size]).argmax(1) for i in range(0, len(x), batch_size)])
