"""A board's on-chip tensor store as its RTL builds it (hw/board/fpdeep_store.sv), and what it
takes of the part's block RAM.

The store is banks of simple dual-port RAM: bank b holds ``depth`` words of ``width`` bits and
is kept ``copies`` times (one copy per resource that reads it, up to three, as block RAM is
replicated for read ports). `fpdeep.codegen.layout.board_layouts` decides from the step's
tasks which items a board keeps and how wide each is; the rules below turn that into banks,
and the planner's memory figures and fit check (`fpdeep.planning.planner.with_stores`) take
the same banks, so the memory a plan reports is the store the RTL has.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: The aspect ratios of one 36 Kib block RAM in simple dual-port mode, (depth, width)
#: (Xilinx UG573, "Block RAM Summary"; 512 x 72 only in simple dual-port mode).
BRAM36_SHAPES = ((32768, 1), (16384, 2), (8192, 4), (4096, 9), (2048, 18), (1024, 36), (512, 72))
#: An UltraRAM block is 4K x 72 bits and has no other shape (Xilinx UG573, "UltraRAM").
URAM_SHAPES = ((4096, 72),)

#: The kinds of stored items a board may keep in its off-chip memory, by item prefix (the
#: planner's storage classes): weights, biases and trained per-channel parameters; gradient
#: sums and SGD velocities; the stash of activations, errors, partial sums and argmax flags
#: (and the pooling unit's discarded side output, as large as its input).
OFF_CHIP = {"weights": ("w:", "b:", "p:", "r:"), "grads": ("acc:", "v:"),
            "stash": ("act:", "err:", "psum:", "argmax:", "discard:")}



def off_chip_kind(item: str) -> str | None:
    """The kind of data (a key of `OFF_CHIP`) stored item ``item`` is, None if none."""
    return next((kind for kind, prefixes in OFF_CHIP.items() if item.startswith(prefixes)),
                None)


#: Copies a bank may have: the store grants at most three reads of one bank per cycle.
MAX_READ_COPIES = 3
#: The fewest words a bank holds (a one-word bank would have a zero-bit address).
MIN_DEPTH = 2


def blocks(depth: int, width: int, shapes: Iterable[tuple[int, int]] = BRAM36_SHAPES) -> int:
    """Blocks of one RAM kind a ``depth`` x ``width`` memory takes: the cheapest of building it
    from blocks all of one shape, side by side for the width, stacked for the depth."""
    return min(math.ceil(width / w) * math.ceil(depth / d) for d, w in shapes)


def signed_bits(values: Iterable[int]) -> int:
    """The fewest bits that hold every one of ``values`` as a two's-complement number."""
    return max((max(v, ~v).bit_length() + 1 for v in values), default=1)


def read_copies(readers: int) -> int:
    """Copies of a bank read by ``readers`` resources: one each, so that none waits for
    another, up to the store's three read ports."""
    return min(MAX_READ_COPIES, max(1, readers))


def bank_depth(words: int, *, per_image: bool, images: int) -> int:
    """Words of a bank holding an item of ``words`` words, once or for each of ``images``."""
    return max(MIN_DEPTH, words * (images if per_image else 1))


@dataclass(frozen=True)
class StoreBank:
    """One bank: ``depth`` words of ``width`` bits, ``copies`` times."""

    item: str
    depth: int
    width: int
    copies: int = 1

    @property
    def bits(self) -> int:
        return self.depth * self.width * self.copies

    @property
    def bram_blocks(self) -> int:
        return self.copies * blocks(self.depth, self.width, BRAM36_SHAPES)

    @property
    def uram_blocks(self) -> int:
        return self.copies * blocks(self.depth, self.width, URAM_SHAPES)

    def as_dict(self) -> dict[str, Any]:
        return {"item": self.item, "depth": self.depth, "width": self.width,
                "read_ports": self.copies, "bits": self.bits,
                "bram36_blocks": self.bram_blocks}


@dataclass(frozen=True)
class BoardStore:
    """The tensor store of board ``board``, for steps of up to ``images`` images."""

    board: int
    images: int
    banks: tuple[StoreBank, ...]
    # the items kept in off-chip memory instead: their bits, and the bytes a one-image
    # training step reads and writes of them
    off_chip_bits: int = 0
    off_chip_traffic: int = 0

    @property
    def bits(self) -> int:
        return sum(b.bits for b in self.banks)

    @property
    def bram_blocks(self) -> int:
        return sum(b.bram_blocks for b in self.banks)

    def bits_of(self, *prefixes: str) -> int:
        """Bits of the banks whose item starts with one of ``prefixes``."""
        return sum(b.bits for b in self.banks if b.item.startswith(prefixes))

    def as_dict(self) -> dict[str, Any]:
        return {"board": self.board, "images": self.images,
                "banks": [b.as_dict() for b in self.banks], "bits": self.bits,
                "bram36_blocks": self.bram_blocks, "off_chip_bits": self.off_chip_bits,
                "off_chip_bytes_per_step_image": self.off_chip_traffic}


@dataclass(frozen=True)
class StorePlacement:
    """Which banks of a store go to block RAM and which to UltraRAM (None: it does not fit)."""

    bram: tuple[StoreBank, ...]
    uram: tuple[StoreBank, ...]

    @property
    def bram_blocks(self) -> int:
        return sum(b.bram_blocks for b in self.bram)

    @property
    def uram_blocks(self) -> int:
        return sum(b.uram_blocks for b in self.uram)


def place(store: BoardStore, *, bram_blocks: int, uram_blocks: int) -> StorePlacement | None:
    """Every bank in block RAM while it fits; otherwise the banks that take the most block
    RAM move to UltraRAM, as long as it has room. None when the store fits in neither."""
    bram = sorted(store.banks, key=lambda b: (b.bram_blocks, b.item), reverse=True)
    uram: list[StoreBank] = []
    used_bram = sum(b.bram_blocks for b in bram)
    used_uram = 0
    while used_bram > bram_blocks:
        movable = [b for b in bram if used_uram + b.uram_blocks <= uram_blocks]
        if not movable:
            return None
        bank = movable[0]
        bram.remove(bank)
        uram.append(bank)
        used_bram -= bank.bram_blocks
        used_uram += bank.uram_blocks
    order = {b.item: k for k, b in enumerate(store.banks)}
    return StorePlacement(tuple(sorted(bram, key=lambda b: order[b.item])),
                          tuple(sorted(uram, key=lambda b: order[b.item])))
