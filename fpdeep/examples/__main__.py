"""`python -m fpdeep.examples` rewrites the bundled example models."""

from fpdeep.examples import write_examples

write_examples()
