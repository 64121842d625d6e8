"""The CIFAR-10 networks of the FPGA-training papers (ETA, EF-Train, FPL'19), in PyTorch:
ResNet-20 (He et al. 2016, §4.2: 3 stages of 3 basic blocks, 16/32/64 channels, BatchNorm,
option-B 1x1 projections where the shape changes) and VGG-16 (the 13 convolutions of VGG-16 on
32x32 images, classifier 512-512-10)."""

from __future__ import annotations

import warnings
from pathlib import Path

import torch
from torch import nn
from torch_models import VGG16_CFG, BasicBlock


def resnet20(num_classes: int = 10) -> nn.Module:
    blocks: list[nn.Module] = []
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        for i in range(3):
            blocks.append(BasicBlock(cin, cout, stride if i == 0 else 1))
            cin = cout
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        *blocks, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(64, num_classes),
    )


def vgg16_cifar(num_classes: int = 10) -> nn.Module:
    layers: list[nn.Module] = []
    channels = 3
    for item in VGG16_CFG:
        if item == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(channels, int(item), 3, padding=1), nn.ReLU(inplace=True)]
            channels = int(item)
    return nn.Sequential(
        *layers, nn.Flatten(),
        nn.Linear(512, 512), nn.ReLU(True), nn.Dropout(),
        nn.Linear(512, 512), nn.ReLU(True), nn.Dropout(),
        nn.Linear(512, num_classes),
    )


CIFAR_MODELS = {"resnet20": resnet20, "vgg16_cifar": vgg16_cifar}


def export_cifar(name: str, path: Path) -> Path:
    """The model in training mode (BatchNormalization and Dropout kept), 3x32x32 input."""
    torch.manual_seed(0)
    model = CIFAR_MODELS[name]().train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(1, 3, 32, 32),), str(path), dynamo=False,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    return path
