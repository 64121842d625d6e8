"""AlexNet, VGG-16 and ResNet-18 written out in PyTorch (no torchvision needed) for export tests."""

from __future__ import annotations

import torch
from torch import nn


def alexnet(num_classes: int = 1000) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
        nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
        nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
        nn.AdaptiveAvgPool2d((6, 6)), nn.Flatten(),
        nn.Dropout(0.5), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
        nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
        nn.Linear(4096, num_classes),
    )


VGG16_CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
             512, 512, 512, "M"]


def vgg16(num_classes: int = 1000) -> nn.Module:
    layers: list[nn.Module] = []
    channels = 3
    for item in VGG16_CFG:
        if item == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(channels, int(item), 3, padding=1), nn.ReLU(inplace=True)]
            channels = int(item)
    return nn.Sequential(
        *layers, nn.AdaptiveAvgPool2d((7, 7)), nn.Flatten(),
        nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(),
        nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(),
        nn.Linear(4096, num_classes),
    )


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.down is None else self.down(x)))


def resnet18(num_classes: int = 1000) -> nn.Module:
    blocks: list[nn.Module] = []
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    return nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1), *blocks, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
        nn.Linear(512, num_classes),
    )


MODELS = {"alexnet": alexnet, "vgg16": vgg16, "resnet18": resnet18}
