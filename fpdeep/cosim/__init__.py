"""Co-simulation: the simulator glue, and training steps run and checked against the golden
model."""

#: The least default cycle limit of a simulated step or pass (`fpdeep.cosim.run.cycle_limit`).
DEFAULT_MAX_CYCLES = 2_000_000
