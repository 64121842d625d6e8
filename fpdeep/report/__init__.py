"""Reports: text, JSON and HTML of plans, workloads and simulation outcomes."""
