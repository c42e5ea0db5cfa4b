"""The DaemonSet controller (kube-controller-manager's ``daemonset-controller``, 1.33).

One daemon pod per eligible node (node affinity, nodeSelector, taints against the pod's
tolerations plus the ones every daemon pod gets), pinned by node affinity and bound by
the default scheduler; RollingUpdate (maxUnavailable, maxSurge) and OnDelete; failed pods
replaced with back-off; ControllerRevisions; status. Pure rules in :mod:`.placement`,
:mod:`.manage`, :mod:`.rollout`, :mod:`.history` and :mod:`.status`; one sync in
:mod:`.sync`; change routing in :mod:`.controller`.
"""

from fakekube.controllers.daemonset.backoff import FailedPodBackoff
from fakekube.controllers.daemonset.controller import DaemonSetController

__all__ = ["DaemonSetController", "FailedPodBackoff"]
