"""A compact CNN with squeeze-and-excitation blocks for 43-class GTSRB (the TestifAI
paper's CNN-SE; the original notebook's exact layer sizes are not published as code we can
read, so this is a documented stand-in: three conv stages 32-64-128 with SE after each)."""

from __future__ import annotations

from torch import nn


class SE(nn.Module):
    def __init__(self, c, r=8):
        super().__init__()
        self.fc = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, c // r), nn.ReLU(), nn.Linear(c // r, c), nn.Sigmoid()
        )

    def forward(self, x):
        return x * self.fc(x)[:, :, None, None]


class CNNSE(nn.Module):
    def __init__(self, num_classes=43, in_channels=3):
        super().__init__()
        stages, c = [], in_channels
        for out in (32, 64, 128):
            stages += [nn.Conv2d(c, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(), SE(out), nn.MaxPool2d(2)]
            c = out
        self.features = nn.Sequential(*stages, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc1 = nn.Sequential(nn.Linear(128, 128), nn.ReLU())
        self.classifier = nn.Linear(128, num_classes)

    def hidden(self, x):
        return [self.fc1(self.features(x))]

    def forward(self, x):
        return self.classifier(self.hidden(x)[-1])
