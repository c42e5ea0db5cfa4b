"""The control API: ``/fakekube/v1/...`` for what Kubernetes has no verb for (DESIGN.md part 8)."""

from fakekube.control.app import ControlApp, attach

__all__ = ["ControlApp", "attach"]
