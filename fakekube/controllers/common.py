"""What the controllers share that is not a Kubernetes object rule: for now, nothing but
the DisruptionTarget condition a controller sets before it deletes a pod."""

from __future__ import annotations

from fakekube.objects.pods import with_disruption_target

__all__ = ["with_disruption_target"]
