"""The task graph of a training step on the generated boards and its cycle model."""
