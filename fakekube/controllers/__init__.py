"""Controllers (DESIGN.md part 6): reconcile logic the engine drives, pure at the leaves."""
