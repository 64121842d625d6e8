"""Co-simulation: the simulator glue, and training steps run and checked against the golden
model."""
