"""Which parts of a fresh kind cluster a fakekube cluster starts with (``systemPods``).

``kind create cluster`` (kind v0.29, the first with Kubernetes 1.33 as its default node
image) leaves a control-plane node running kubeadm's static pods, kubeadm's add-ons
(CoreDNS, kube-proxy), kind's CNI (kindnet) and its storage provisioner. Each part can be
left out; ``SystemPods()`` is all of them, :meth:`SystemPods.off` none.
"""

from __future__ import annotations

from typing import NamedTuple


class SystemPods(NamedTuple):
    """The kind-like content of a new cluster, part by part (docs/config.md, "System pods")."""

    #: The ``fakekube-control-plane`` node with kubeadm's static pods (etcd, kube-apiserver,
    #: kube-controller-manager, kube-scheduler) and kubeadm's ConfigMaps (kubeadm-config,
    #: kubelet-config, kube-public/cluster-info).
    control_plane: bool = True
    #: kubeadm's DNS add-on: Deployment ``coredns`` (2 replicas), Service ``kube-dns`` at the
    #: service CIDR's tenth address, ConfigMap ``coredns``, its ServiceAccount and RBAC.
    core_dns: bool = True
    #: kubeadm's proxy add-on: DaemonSet and ConfigMap ``kube-proxy``, ServiceAccount, RBAC.
    kube_proxy: bool = True
    #: kind's CNI: DaemonSet ``kindnet``, ServiceAccount, RBAC.
    kindnet: bool = True
    #: kind's storage: namespace ``local-path-storage`` with the ``local-path-provisioner``
    #: Deployment and its ConfigMap, and the default StorageClass ``standard``.
    local_path_storage: bool = True
    #: The control-plane node's ``node-role.kubernetes.io/control-plane:NoSchedule`` taint.
    #: None: kind's rule, tainted when the cluster has other nodes, not when it is the only one.
    control_plane_taint: bool | None = None

    @classmethod
    def off(cls) -> SystemPods:
        """No system content: the nodes asked for and nothing else."""
        return cls(**{name: False for name in cls._fields if name != "control_plane_taint"})

    @property
    def any(self) -> bool:
        """Is any part on? (Then the cluster boots: see :data:`fakekube.cluster.system.BOOT_S`.)"""
        return any((self.control_plane, self.core_dns, self.kube_proxy, self.kindnet, self.local_path_storage))


def as_system_pods(value: SystemPods | bool | None) -> SystemPods:
    """``ClusterConfig.system_pods`` as parts: True is everything, False or None (the
    in-process default) nothing."""
    if isinstance(value, SystemPods):
        return value
    if value is True:
        return SystemPods()
    if value is False or value is None:
        return SystemPods.off()
    raise ValueError(f"system_pods: must be True, False or a SystemPods, got {value!r}")
