"""Kubernetes object rules shared by the scheduler, the controllers and the kubelets.

Pure functions over object dicts: no I/O, no store, no clock reads (time is passed in).
It imports nothing above the store (DESIGN.md part 4), so every part above may use it.
"""

from fakekube.objects.kinds import Resource

__all__ = ["Resource"]
