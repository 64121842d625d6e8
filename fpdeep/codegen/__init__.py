"""Code generation: safe names, template rendering, output folders."""
