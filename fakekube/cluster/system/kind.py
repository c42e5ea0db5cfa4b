"""What kind v0.29 installs after ``kubeadm init``: its CNI (kindnet) and its storage.

From kind's default manifests (pkg/build/nodeimage/const_cni.go, const_storage.go):

* kindnet: ClusterRole/ClusterRoleBinding/ServiceAccount ``kindnet`` and the DaemonSet
  ``kindnet`` in kube-system (host network, tolerates every taint, ``POD_SUBNET`` the pod CIDR);
* storage: namespace ``local-path-storage`` with the ``local-path-provisioner`` Deployment
  (1 replica, tolerating the control-plane taint), its ServiceAccount, Role, ClusterRole
  and bindings, ConfigMap ``local-path-config``, and StorageClass ``standard`` marked as
  the default class (``rancher.io/local-path``, WaitForFirstConsumer, Delete).

The objects are in the order kind's manifests list them.
"""

from __future__ import annotations

from typing import Any

from fakekube.cluster.system.kubeadm import CONTROL_PLANE_TAINT_KEY, RBAC

Obj = dict[str, Any]

KINDNET_IMAGE = "docker.io/kindest/kindnetd:v20250512-df8de77b"
LOCAL_PATH_PROVISIONER_IMAGE = "docker.io/kindest/local-path-provisioner:v20250214-acbabc1a"
LOCAL_PATH_HELPER_IMAGE = "docker.io/kindest/local-path-helper:v20241212-8ac705d0"
LOCAL_PATH_NAMESPACE = "local-path-storage"
LOCAL_PATH_ACCOUNT = "local-path-provisioner-service-account"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
STORAGE_CLASS = "standard"


def kindnet(cluster_cidr: str) -> list[Obj]:
    rules = [{"apiGroups": ["policy"], "resources": ["podsecuritypolicies"], "verbs": ["use"],
              "resourceNames": ["kindnet"]},
             {"apiGroups": [""], "resources": ["nodes", "pods", "namespaces"], "verbs": ["list", "watch"]},
             {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["list", "watch"]}]
    return [
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "kindnet"}, "rules": rules},
        {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": "kindnet"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kindnet"},
         "subjects": [{"kind": "ServiceAccount", "name": "kindnet", "namespace": "kube-system"}]},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "kindnet", "namespace": "kube-system"}},
        _kindnet_daemonset(cluster_cidr),
    ]


def _kindnet_daemonset(cluster_cidr: str) -> Obj:
    labels = {"tier": "node", "app": "kindnet", "k8s-app": "kindnet"}
    env = [{"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
           {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
           {"name": "POD_SUBNET", "value": cluster_cidr}]
    container = {
        "name": "kindnet-cni", "image": KINDNET_IMAGE, "env": env,
        "volumeMounts": [{"name": "cni-cfg", "mountPath": "/etc/cni/net.d"},
                         {"name": "xtables-lock", "mountPath": "/run/xtables.lock", "readOnly": False},
                         {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True},
                         {"name": "nri-plugin", "mountPath": "/var/run/nri"}],
        "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}, "limits": {"cpu": "100m", "memory": "50Mi"}},
        "securityContext": {"privileged": False, "capabilities": {"add": ["NET_RAW", "NET_ADMIN"]}},
    }
    pod_spec = {
        "hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": [{"operator": "Exists"}],
        "serviceAccountName": "kindnet", "containers": [container],
        "volumes": [{"name": "cni-cfg", "hostPath": {"path": "/etc/cni/net.d"}},
                    {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
                    {"name": "lib-modules", "hostPath": {"path": "/lib/modules"}},
                    {"name": "nri-plugin", "hostPath": {"path": "/var/run/nri"}}],
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "kindnet", "namespace": "kube-system", "labels": dict(labels)},
            "spec": {"selector": {"matchLabels": {"app": "kindnet"}},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}}


def local_path_storage() -> list[Obj]:
    namespace = LOCAL_PATH_NAMESPACE
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "name": "local-path-provisioner-role"}
    subjects = [{"kind": "ServiceAccount", "name": LOCAL_PATH_ACCOUNT, "namespace": namespace}]
    cluster_rules = [
        {"apiGroups": [""], "resources": ["nodes", "persistentvolumeclaims", "configmaps", "pods", "pods/log"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["persistentvolumes"],
         "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list", "watch"]},
    ]
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": LOCAL_PATH_ACCOUNT, "namespace": namespace}},
        {"apiVersion": RBAC, "kind": "Role",
         "metadata": {"name": "local-path-provisioner-role", "namespace": namespace},
         "rules": [{"apiGroups": [""], "resources": ["pods"],
                    "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"]}]},
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "local-path-provisioner-role"},
         "rules": cluster_rules},
        {"apiVersion": RBAC, "kind": "RoleBinding",
         "metadata": {"name": "local-path-provisioner-bind", "namespace": namespace},
         "roleRef": {**role_ref, "kind": "Role"}, "subjects": subjects},
        {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": "local-path-provisioner-bind"},
         "roleRef": {**role_ref, "kind": "ClusterRole"}, "subjects": subjects},
        _local_path_deployment(),
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": STORAGE_CLASS, "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
         "provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer",
         "reclaimPolicy": "Delete"},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "local-path-config", "namespace": namespace},
         "data": _local_path_config()},
    ]


def _local_path_deployment() -> Obj:
    labels = {"app": "local-path-provisioner"}
    container = {
        "name": "local-path-provisioner", "image": LOCAL_PATH_PROVISIONER_IMAGE, "imagePullPolicy": "IfNotPresent",
        "command": ["local-path-provisioner", "--debug", "start", "--helper-image", LOCAL_PATH_HELPER_IMAGE,
                    "--config", "/etc/config/config.json"],
        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/config/"}],
        "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "CONFIG_MOUNT_PATH", "value": "/etc/config/"}],
    }
    pod_spec = {
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": CONTROL_PLANE_TAINT_KEY, "operator": "Equal", "effect": "NoSchedule"},
                        {"key": "node-role.kubernetes.io/master", "operator": "Equal", "effect": "NoSchedule"}],
        "serviceAccountName": LOCAL_PATH_ACCOUNT, "containers": [container],
        "volumes": [{"name": "config-volume", "configMap": {"name": "local-path-config"}}],
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "local-path-provisioner", "namespace": LOCAL_PATH_NAMESPACE},
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}}


def _local_path_config() -> dict[str, str]:
    config_json = """{
        "nodePathMap":[
        {
                "node":"DEFAULT_PATH_FOR_NON_LISTED_NODES",
                "paths":["/var/local-path-provisioner"]
        }
        ]
}"""
    helper_pod = f"""apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  priorityClassName: system-node-critical
  tolerations:
    - key: node.kubernetes.io/disk-pressure
      operator: Exists
      effect: NoSchedule
  containers:
  - name: helper-pod
    image: {LOCAL_PATH_HELPER_IMAGE}
    imagePullPolicy: IfNotPresent"""
    return {"config.json": config_json,
            "setup": '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"',
            "teardown": '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"',
            "helperPod.yaml": helper_pod}
