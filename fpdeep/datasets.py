"""Named data sets a user can give instead of a file (``--data digits``), with their fixed
train/test split.

``digits`` is scikit-learn's 8x8 handwritten digits (1,797 images of 1x8x8, pixels 0..16
scaled to [0, 1], 10 classes; BSD-3-Clause, from the UCI repository), split by a seeded
permutation (`split`): the first `DIGITS_TEST` images are the test set.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.ir import Network

DIGITS_TEST = 360
SPLIT_SEED = 0
#: The share of a data file's images held out for testing when it brings no test part.
TEST_SHARE = 0.2


def split(count: int, test: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of ``count`` images: (``test`` of them for testing, the rest for training), by
    a permutation seeded with `SPLIT_SEED`, so the split is the same on every run."""
    order = np.random.default_rng(SPLIT_SEED).permutation(count)
    return order[:test], order[test:]


def _digits(part: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:
        raise FpdeepError("--data digits needs scikit-learn (pip install "
                          "'scikit-learn>=1.3,<2'); or give an .npz file") from exc
    images, labels = load_digits(return_X_y=True)
    x = (images.reshape(-1, 1, 8, 8) / 16.0).astype(np.float32)
    test, train = split(len(x), DIGITS_TEST)
    pick = test if part == "test" else train
    return x[pick], labels[pick].astype(np.int64)


#: Data set name -> loader of its "train" or "test" part.
DATASETS: dict[str, Callable[[str], tuple[np.ndarray, np.ndarray]]] = {"digits": _digits}


def is_dataset(name: str) -> bool:
    return name in DATASETS


def load_dataset(name: str, network: Network, *, part: str) -> tuple[np.ndarray, np.ndarray]:
    """Part ``part`` ("train" or "test") of data set ``name``, checked against the model's
    input shape and classes."""
    if name not in DATASETS:
        raise FpdeepError(f"--data {name!r} is not a known data set; known: "
                          f"{', '.join(DATASETS)} (or give an .npz file)")
    x, y = DATASETS[name](part)
    if tuple(x.shape[1:]) != tuple(network.input_shape):
        raise FpdeepError(f"--data {name}: its images are {'x'.join(map(str, x.shape[1:]))}, "
                          f"the model takes {'x'.join(map(str, network.input_shape))}")
    classes = int(np.prod(network.layers[-1].out_shape))
    if int(y.max()) >= classes:
        raise FpdeepError(f"--data {name}: it has {int(y.max()) + 1} classes, the model "
                          f"{classes}")
    return x, y
