"""The namespace controller (kube-controller-manager's ``namespace-controller``):
:mod:`.controller` (timing, finalize), :mod:`.deleter` (one pass over the content),
:mod:`.conditions` (the status conditions, pure)."""

from fakekube.controllers.namespace.controller import NamespaceConfig, NamespaceController

__all__ = ["NamespaceConfig", "NamespaceController"]
