"""WideResNet-28-10 for 32×32 CIFAR-10 (Zagoruyko & Komodakis 2016), with RobustBench's
parameter names (block1.layer.0.conv1, …, bn1, fc), so its `Standard` checkpoint loads as is."""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1, self.relu1 = nn.BatchNorm2d(cin), nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2, self.relu2 = nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.equal = cin == cout
        self.convShortcut = None if self.equal else nn.Conv2d(cin, cout, 1, stride, 0, bias=False)

    def forward(self, x):
        o = self.relu1(self.bn1(x))
        y = self.conv2(self.relu2(self.bn2(self.conv1(o))))
        return y + (x if self.equal else self.convShortcut(o))


class Group(nn.Module):
    def __init__(self, n, cin, cout, stride):
        super().__init__()
        self.layer = nn.Sequential(
            *[BasicBlock(cin if i == 0 else cout, cout, stride if i == 0 else 1) for i in range(n)]
        )

    def forward(self, x):
        return self.layer(x)


class WideResNet(nn.Module):
    def __init__(self, num_classes=10, depth=28, widen_factor=10):
        super().__init__()
        n = (depth - 4) // 6
        w = [16, 16 * widen_factor, 32 * widen_factor, 64 * widen_factor]
        self.conv1 = nn.Conv2d(3, w[0], 3, 1, 1, bias=False)
        self.block1, self.block2, self.block3 = (
            Group(n, w[0], w[1], 1),
            Group(n, w[1], w[2], 2),
            Group(n, w[2], w[3], 2),
        )
        self.bn1, self.relu = nn.BatchNorm2d(w[3]), nn.ReLU(inplace=True)
        self.fc = nn.Linear(w[3], num_classes)

    def hidden(self, x):
        x = self.relu(self.bn1(self.block3(self.block2(self.block1(self.conv1(x))))))
        return [F.adaptive_avg_pool2d(x, 1).flatten(1)]

    @property
    def classifier(self):
        return self.fc

    def forward(self, x):
        return self.fc(self.hidden(x)[-1])
