"""metrics-server as its published manifest installs it (components.yaml of v0.7.2), for a
cluster that serves ``metrics.k8s.io`` with its system pods on.

A kind user who installs metrics-server adds ``--kubelet-insecure-tls`` (kind's kubelets
serve self-signed certificates); the Deployment here has it. The APIService itself is
stored by fakekube/cluster/metricsserver.py (the figures come from the simulated kubelets,
not from this pod). Objects in the manifest's order.
"""

from __future__ import annotations

from typing import Any

from fakekube.cluster.system.kubeadm import RBAC

Obj = dict[str, Any]

METRICS_SERVER_IMAGE = "registry.k8s.io/metrics-server/metrics-server:v0.7.2"
_LABELS = {"k8s-app": "metrics-server"}
_ACCOUNT = {"kind": "ServiceAccount", "name": "metrics-server", "namespace": "kube-system"}


def metrics_server() -> list[Obj]:
    """ServiceAccount, RBAC, Service and Deployment of metrics-server in kube-system."""
    meta = {"labels": dict(_LABELS)}
    aggregate = {f"rbac.authorization.k8s.io/aggregate-to-{role}": "true" for role in ("admin", "edit", "view")}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {**meta, "name": "metrics-server", "namespace": "kube-system"}},
        {"apiVersion": RBAC, "kind": "ClusterRole",
         "metadata": {"labels": {**_LABELS, **aggregate}, "name": "system:aggregated-metrics-reader"},
         "rules": [{"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"], "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {**meta, "name": "system:metrics-server"},
         "rules": [{"apiGroups": [""], "resources": ["nodes/metrics"], "verbs": ["get"]},
                   {"apiGroups": [""], "resources": ["pods", "nodes"], "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": RBAC, "kind": "RoleBinding",
         "metadata": {**meta, "name": "metrics-server-auth-reader", "namespace": "kube-system"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "extension-apiserver-authentication-reader"},
         "subjects": [dict(_ACCOUNT)]},
        _cluster_role_binding("metrics-server:system:auth-delegator", "system:auth-delegator"),
        _cluster_role_binding("system:metrics-server", "system:metrics-server"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {**meta, "name": "metrics-server", "namespace": "kube-system"},
         "spec": {"ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"}],
                  "selector": dict(_LABELS)}},
        _deployment(),
    ]


def _cluster_role_binding(name: str, role: str) -> Obj:
    return {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"labels": dict(_LABELS), "name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [dict(_ACCOUNT)]}


def _probe(path: str, initial_delay_s: int = 0) -> Obj:
    probe: Obj = {"failureThreshold": 3, "httpGet": {"path": path, "port": "https", "scheme": "HTTPS"},
                  "periodSeconds": 10}
    if initial_delay_s:
        probe["initialDelaySeconds"] = initial_delay_s
    return probe


def _deployment() -> Obj:
    container = {
        "name": "metrics-server", "image": METRICS_SERVER_IMAGE, "imagePullPolicy": "IfNotPresent",
        "args": ["--cert-dir=/tmp", "--secure-port=10250", "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
                 "--kubelet-use-node-status-port", "--metric-resolution=15s", "--kubelet-insecure-tls"],
        "livenessProbe": _probe("/livez"), "readinessProbe": _probe("/readyz", initial_delay_s=20),
        "ports": [{"containerPort": 10250, "name": "https", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                            "readOnlyRootFilesystem": True, "runAsNonRoot": True, "runAsUser": 1000,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "volumeMounts": [{"mountPath": "/tmp", "name": "tmp-dir"}],
    }
    pod_spec = {"containers": [container], "nodeSelector": {"kubernetes.io/os": "linux"},
                "priorityClassName": "system-cluster-critical", "serviceAccountName": "metrics-server",
                "volumes": [{"emptyDir": {}, "name": "tmp-dir"}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"labels": dict(_LABELS), "name": "metrics-server", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": dict(_LABELS)}, "strategy": {"rollingUpdate": {"maxUnavailable": 0}},
                     "template": {"metadata": {"labels": dict(_LABELS)}, "spec": pod_spec}}}
