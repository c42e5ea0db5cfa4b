"""The StatefulSet controller (kube-controller-manager's ``statefulset-controller``):
fakekube/controllers/statefulset/controller.py."""

from fakekube.controllers.statefulset.controller import StatefulSetController

__all__ = ["StatefulSetController"]
