"""The design of the boards: what each board holds, lowered from a plan."""
