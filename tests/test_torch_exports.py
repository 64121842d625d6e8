"""PyTorch exports (TorchScript and dynamo exporters, eval and training mode) load and analyse.

The MAC reference is independent of fpdeep: forward hooks on the PyTorch modules count
Co*Ho*Wo*(Ci/g)*Kh*Kw for every Conv2d and in*out for every Linear during a real forward pass.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (make setup installs it)")

from torch_models import MODELS  # noqa: E402

import fpdeep  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def hooked_macs(model: torch.nn.Module, x: torch.Tensor) -> int:
    total = 0

    def count(module, inputs, output):
        nonlocal total
        if isinstance(module, torch.nn.Conv2d):
            kh, kw = module.kernel_size
            per_out = module.in_channels // module.groups * kh * kw
            total += output[0].numel() * per_out
        else:
            total += module.in_features * module.out_features

    hooks = [m.register_forward_hook(count) for m in model.modules()
             if isinstance(m, torch.nn.Conv2d | torch.nn.Linear)]
    with torch.no_grad():
        model.eval()(x)
    for hook in hooks:
        hook.remove()
    return total


@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_export_loads_with_exact_macs(tmp_path, name, dynamo, training):
    if dynamo:
        pytest.importorskip("onnxscript", reason="the dynamo exporter needs onnxscript")
    torch.manual_seed(0)
    model = MODELS[name]()
    x = torch.randn(1, 3, 224, 224)
    expected_macs = hooked_macs(model, x)
    model.train(training)
    path = tmp_path / f"{name}.onnx"
    options = {"dynamo": dynamo}
    if not dynamo:
        # Parameters as graph inputs keep the 0.5 GB VGG-16 out of the file (and tests fast).
        mode = torch.onnx.TrainingMode
        options.update(export_params=False, do_constant_folding=False,
                       training=mode.TRAINING if training else mode.EVAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(path), **options)
    net = fpdeep.load_onnx(path)
    work = fpdeep.analyze(net)
    assert net.input_shape == (3, 224, 224)
    assert net.layers[-1].out_shape == (1000,)
    assert work.fp_macs == work.wg_macs == expected_macs
    if not dynamo:  # the dynamo exporter folds batch-norm into the convolutions
        assert work.params == sum(p.numel() for p in model.parameters())
