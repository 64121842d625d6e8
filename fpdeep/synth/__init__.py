"""`fpdeep synth`: every board of a build folder through open synthesis (Yosys) or the vendor
flow, its resource figures beside the planner's."""
