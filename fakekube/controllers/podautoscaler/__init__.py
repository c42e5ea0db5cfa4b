"""The HorizontalPodAutoscaler controller (kube-controller-manager's ``horizontal-pod-autoscaler-controller``)."""

from fakekube.controllers.podautoscaler.controller import HorizontalController

__all__ = ["HorizontalController"]
