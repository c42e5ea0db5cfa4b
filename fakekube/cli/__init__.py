"""The ``fakekube`` command line (DESIGN.md part 10)."""
