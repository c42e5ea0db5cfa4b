"""The rest of kube-apiserver's bootstrap RBAC policy: kube-controller-manager's controller
roles, the CSR approver and node-client roles, and the add-on roles nothing binds.

``plugin/pkg/auth/authorizer/rbac/bootstrappolicy`` (``controller_policy.go``, ``policy.go``;
its testdata lists every object): a ``system:controller:<name>`` ClusterRole per controller,
bound to the ServiceAccount ``<name>`` in ``kube-system`` (kube-controller-manager runs each
controller with its own account), kube-system's and kube-public's controller Roles, and the
``system:certificates.k8s.io:*``, ``system:heapster``, ``system:kube-aggregator``,
``system:kubelet-api-admin``, ``system:node-bootstrapper``, ``system:node-problem-detector``
and ``system:persistent-volume-provisioner`` ClusterRoles. Read from kube-apiserver 1.36.2
and its 1.33 emulation: the rules are the same in both; a role whose feature is off in a
release does not exist there (the minor each first appears in, by its gate's default:
DynamicResourceAllocation 1.34, VolumeAttributesClass 1.34, DRADeviceTaints 1.36).

Pure data; fakekube/cluster/rbacpolicy.py stores it with the rest.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def rule(verbs: str, groups: str, resources: str, names: str = "") -> Obj:
    """A resource rule from space-separated words (``-`` is the core group "")."""
    out: Obj = {"verbs": verbs.split(), "apiGroups": ["" if g == "-" else g for g in groups.split()],
                "resources": resources.split()}
    if names:
        out["resourceNames"] = names.split()
    return out


def urls(verbs: str, paths: str) -> Obj:
    return {"verbs": verbs.split(), "nonResourceURLs": paths.split()}


CONTROLLER_PREFIX = "system:controller:"
#: The group of ``signers``, a resource for authorization only (who may approve or sign for a
#: signer name), never served: named apart from the served types' (group, plural) pairs.
CERTIFICATES = "certificates.k8s.io"

#: (name, the first minor that has it, rules), in name order.
CLUSTER_ROLES: tuple[tuple[str, int, tuple[Obj, ...]], ...] = (
    ("system:certificates.k8s.io:certificatesigningrequests:nodeclient", 33, (
        rule("create", "certificates.k8s.io", "certificatesigningrequests/nodeclient"),
    )),
    ("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", 33, (
        rule("create", "certificates.k8s.io", "certificatesigningrequests/selfnodeclient"),
    )),
    ("system:certificates.k8s.io:kube-apiserver-client-approver", 33, (
        rule("approve", CERTIFICATES, "signers", "kubernetes.io/kube-apiserver-client"),
    )),
    ("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver", 33, (
        rule("approve", CERTIFICATES, "signers", "kubernetes.io/kube-apiserver-client-kubelet"),
    )),
    ("system:certificates.k8s.io:kubelet-serving-approver", 33, (
        rule("approve", CERTIFICATES, "signers", "kubernetes.io/kubelet-serving"),
    )),
    ("system:certificates.k8s.io:legacy-unknown-approver", 33, (
        rule("approve", CERTIFICATES, "signers", "kubernetes.io/legacy-unknown"),
    )),
    ("system:controller:attachdetach-controller", 33, (
        rule("list watch", "-", "persistentvolumeclaims persistentvolumes"),
        rule("get list watch", "-", "nodes"),
        rule("patch update", "-", "nodes/status"),
        rule("list watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
        rule("create delete get list watch", "storage.k8s.io", "volumeattachments"),
        rule("get list watch", "storage.k8s.io", "csidrivers"),
        rule("get list watch", "storage.k8s.io", "csinodes"),
    )),
    ("system:controller:certificate-controller", 33, (
        rule("delete get list watch", "certificates.k8s.io", "certificatesigningrequests"),
        rule("update", "certificates.k8s.io", "certificatesigningrequests/approval certificatesigningrequests/status"),
        rule("approve", CERTIFICATES, "signers", "kubernetes.io/kube-apiserver-client-kubelet"),
        rule("sign", CERTIFICATES, "signers", "kubernetes.io/kube-apiserver-client "
             "kubernetes.io/kube-apiserver-client-kubelet kubernetes.io/kubelet-serving kubernetes.io/legacy-unknown"),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:clusterrole-aggregation-controller", 33, (
        rule("escalate get list patch update watch", "rbac.authorization.k8s.io", "clusterroles"),
    )),
    ("system:controller:cronjob-controller", 33, (
        rule("get list update watch", "batch", "cronjobs"),
        rule("create delete get list patch update watch", "batch", "jobs"),
        rule("update", "batch", "cronjobs/status"),
        rule("update", "batch", "cronjobs/finalizers"),
        rule("delete list watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:daemon-set-controller", 33, (
        rule("get list watch", "apps extensions", "daemonsets"),
        rule("update", "apps extensions", "daemonsets/status"),
        rule("update", "apps extensions", "daemonsets/finalizers"),
        rule("list watch", "-", "nodes"),
        rule("create delete list patch watch", "-", "pods"),
        rule("create", "-", "pods/binding"),
        rule("create delete get list patch update watch", "apps", "controllerrevisions"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:deployment-controller", 33, (
        rule("get list update watch", "apps extensions", "deployments"),
        rule("update", "apps extensions", "deployments/status"),
        rule("update", "apps extensions", "deployments/finalizers"),
        rule("create delete get list patch update watch", "apps extensions", "replicasets"),
        rule("get list update watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:device-taint-eviction-controller", 36, (
        rule("delete get list watch", "-", "pods"),
        rule("patch update", "-", "pods/status"),
        rule("get list watch", "resource.k8s.io", "resourceclaims"),
        rule("get list watch", "resource.k8s.io", "resourceslices"),
        rule("get list watch", "resource.k8s.io", "deviceclasses"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:disruption-controller", 33, (
        rule("get list watch", "apps extensions", "deployments"),
        rule("get list watch", "apps extensions", "replicasets"),
        rule("get list watch", "-", "replicationcontrollers"),
        rule("get list watch", "policy", "poddisruptionbudgets"),
        rule("get list watch", "apps", "statefulsets"),
        rule("update", "policy", "poddisruptionbudgets/status"),
        rule("patch update", "-", "pods/status"),
        rule("get", "*", "*/scale"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:endpoint-controller", 33, (
        rule("get list watch", "-", "pods services"),
        rule("create delete get list update watch", "-", "endpoints"),
        rule("create", "-", "endpoints/restricted"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:endpointslice-controller", 33, (
        rule("get list watch", "-", "nodes pods services"),
        rule("update", "-", "services/finalizers"),
        rule("create delete get list update watch", "discovery.k8s.io", "endpointslices"),
        rule("create", "discovery.k8s.io", "endpointslices/restricted"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:endpointslicemirroring-controller", 33, (
        rule("get list watch", "-", "endpoints services"),
        rule("update", "-", "services/finalizers"),
        rule("update", "-", "endpoints/finalizers"),
        rule("create delete get list update watch", "discovery.k8s.io", "endpointslices"),
        rule("create", "discovery.k8s.io", "endpointslices/restricted"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:ephemeral-volume-controller", 33, (
        rule("get list watch", "-", "pods"),
        rule("update", "-", "pods/finalizers"),
        rule("create get list watch", "-", "persistentvolumeclaims"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:expand-controller", 33, (
        rule("get list patch update watch", "-", "persistentvolumes"),
        rule("patch update", "-", "persistentvolumeclaims/status"),
        rule("get list watch", "-", "persistentvolumeclaims"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:generic-garbage-collector", 33, (
        rule("delete get list patch update watch", "*", "*"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:horizontal-pod-autoscaler", 33, (
        rule("get list watch", "autoscaling", "horizontalpodautoscalers"),
        rule("update", "autoscaling", "horizontalpodautoscalers/status"),
        rule("get update", "*", "*/scale"),
        rule("list watch", "-", "pods"),
        rule("list watch", "metrics.k8s.io", "pods"),
        rule("get list watch", "custom.metrics.k8s.io", "*"),
        rule("get list watch", "external.metrics.k8s.io", "*"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:job-controller", 33, (
        rule("get list patch update watch", "batch", "jobs"),
        rule("update", "batch", "jobs/status"),
        rule("update", "batch", "jobs/finalizers"),
        rule("create delete list patch watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:legacy-service-account-token-cleaner", 33, (
        rule("get", "-", "configmaps", "kube-apiserver-legacy-service-account-token-tracking"),
        rule("delete patch", "-", "secrets"),
    )),
    ("system:controller:namespace-controller", 33, (
        rule("delete get list watch", "-", "namespaces"),
        rule("update", "-", "namespaces/finalize namespaces/status"),
        rule("delete deletecollection get list watch", "*", "*"),
    )),
    ("system:controller:node-controller", 33, (
        rule("delete get list patch update watch", "-", "nodes"),
        rule("patch update", "-", "nodes/status"),
        rule("patch update", "-", "pods/status"),
        rule("delete get list watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:persistent-volume-binder", 33, (
        rule("create delete get list update watch", "-", "persistentvolumes"),
        rule("update", "-", "persistentvolumes/status"),
        rule("get list update watch", "-", "persistentvolumeclaims"),
        rule("update", "-", "persistentvolumeclaims/status"),
        rule("create delete get list watch", "-", "pods"),
        rule("get list watch", "storage.k8s.io", "storageclasses"),
        rule("list watch", "-", "nodes"),
        rule("create patch update", "- events.k8s.io", "events"),
        rule("watch", "-", "events"),
    )),
    ("system:controller:pod-garbage-collector", 33, (
        rule("delete list watch", "-", "pods"),
        rule("get list watch", "-", "nodes"),
        rule("patch", "-", "pods/status"),
    )),
    ("system:controller:pv-protection-controller", 33, (
        rule("get list update watch", "-", "persistentvolumes"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:pvc-protection-controller", 33, (
        rule("get list update watch", "-", "persistentvolumeclaims"),
        rule("update", "-", "persistentvolumeclaims/status"),
        rule("get list watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:replicaset-controller", 33, (
        rule("get list update watch", "apps extensions", "replicasets"),
        rule("update", "apps extensions", "replicasets/status"),
        rule("update", "apps extensions", "replicasets/finalizers"),
        rule("create delete list patch watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:replication-controller", 33, (
        rule("get list update watch", "-", "replicationcontrollers"),
        rule("update", "-", "replicationcontrollers/status"),
        rule("update", "-", "replicationcontrollers/finalizers"),
        rule("create delete list patch watch", "-", "pods"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:resource-claim-controller", 34, (
        rule("get list watch", "-", "pods"),
        rule("update", "-", "pods/finalizers"),
        rule("create delete get list watch", "resource.k8s.io", "resourceclaims"),
        rule("patch update", "resource.k8s.io", "resourceclaims resourceclaims/status"),
        rule("patch update", "-", "pods/status"),
        rule("create patch update", "- events.k8s.io", "events"),
        rule("patch update", "resource.k8s.io", "resourceclaims/binding"),
    )),
    ("system:controller:resourcequota-controller", 33, (
        rule("list watch", "*", "*"),
        rule("update", "-", "resourcequotas/status"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:root-ca-cert-publisher", 33, (
        rule("create update", "-", "configmaps"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:route-controller", 33, (
        rule("list watch", "-", "nodes"),
        rule("patch", "-", "nodes/status"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:selinux-warning-controller", 33, (
        rule("create patch update", "- events.k8s.io", "events"),
        rule("get list watch", "-", "persistentvolumes"),
        rule("get list watch", "-", "persistentvolumeclaims"),
        rule("get list watch", "-", "pods"),
        rule("get list watch", "storage.k8s.io", "csidrivers"),
    )),
    ("system:controller:service-account-controller", 33, (
        rule("create", "-", "serviceaccounts"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:service-ca-cert-publisher", 33, (
        rule("create update", "-", "configmaps"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:service-cidrs-controller", 33, (
        rule("get list patch update watch", "networking.k8s.io", "servicecidrs"),
        rule("patch update", "networking.k8s.io", "servicecidrs/finalizers"),
        rule("patch update", "networking.k8s.io", "servicecidrs/status"),
        rule("get list watch", "networking.k8s.io", "ipaddresses"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:service-controller", 33, (
        rule("get list watch", "-", "services"),
        rule("patch update", "-", "services/status"),
        rule("list watch", "-", "nodes"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:statefulset-controller", 33, (
        rule("list watch", "-", "pods"),
        rule("get list watch", "apps", "statefulsets"),
        rule("update", "apps", "statefulsets/status"),
        rule("update", "apps", "statefulsets/finalizers"),
        rule("create delete get patch update", "-", "pods"),
        rule("create delete get list patch update watch", "apps", "controllerrevisions"),
        rule("create get list watch", "-", "persistentvolumeclaims"),
        rule("delete update", "-", "persistentvolumeclaims"),
        rule("update", "-", "pods/finalizers"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:ttl-after-finished-controller", 33, (
        rule("delete get list watch", "batch", "jobs"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:ttl-controller", 33, (
        rule("list patch update watch", "-", "nodes"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:validatingadmissionpolicy-status-controller", 33, (
        rule("get list watch", "admissionregistration.k8s.io", "validatingadmissionpolicies"),
        rule("get patch update", "admissionregistration.k8s.io", "validatingadmissionpolicies/status"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:controller:volumeattributesclass-protection-controller", 34, (
        rule("get list watch", "-", "persistentvolumeclaims"),
        rule("get list watch", "-", "persistentvolumes"),
        rule("get list update watch", "storage.k8s.io", "volumeattributesclasses"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:heapster", 33, (
        rule("get list watch", "-", "events namespaces nodes pods"),
        rule("get list watch", "extensions", "deployments"),
    )),
    ("system:kube-aggregator", 33, (
        rule("get list watch", "-", "endpoints services"),
    )),
    ("system:kubelet-api-admin", 33, (
        rule("get list watch", "-", "nodes"),
        rule("proxy", "-", "nodes"),
        rule("*", "-", "nodes/log nodes/metrics nodes/proxy nodes/stats"),
        rule("*", "-", "nodes/configz nodes/healthz nodes/pods"),
    )),
    ("system:node-bootstrapper", 33, (
        rule("create get list watch", "certificates.k8s.io", "certificatesigningrequests"),
    )),
    ("system:node-problem-detector", 33, (
        rule("get", "-", "nodes"),
        rule("patch", "-", "nodes/status"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("system:persistent-volume-provisioner", 33, (
        rule("create delete get list watch", "-", "persistentvolumes"),
        rule("get list update watch", "-", "persistentvolumeclaims"),
        rule("get list watch", "storage.k8s.io", "storageclasses"),
        rule("watch", "-", "events"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
)

#: kube-system's and kube-public's controller Roles: (namespace, name, rules); each is bound
#: to the ServiceAccount of its name's suffix in kube-system.
NAMESPACE_ROLES: tuple[tuple[str, str, tuple[Obj, ...]], ...] = (
    ("kube-public", "system:controller:bootstrap-signer", (
        rule("get list watch", "-", "configmaps"),
        rule("update", "-", "configmaps", "cluster-info"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
    ("kube-system", "system:controller:bootstrap-signer", (
        rule("get list watch", "-", "secrets"),
    )),
    ("kube-system", "system:controller:cloud-provider", (
        rule("create get list watch", "-", "configmaps"),
    )),
    ("kube-system", "system:controller:token-cleaner", (
        rule("delete get list watch", "-", "secrets"),
        rule("create patch update", "- events.k8s.io", "events"),
    )),
)


def controller_account(role_name: str) -> Obj:
    """The subject a ``system:controller:<name>`` role is bound to: kube-system's ``<name>``."""
    return {"kind": "ServiceAccount", "name": role_name[len(CONTROLLER_PREFIX):], "namespace": "kube-system"}


def cluster_roles(minor: int) -> list[tuple[str, tuple[Obj, ...]]]:
    """The ClusterRoles of release 1.``minor`` (name, rules)."""
    return [(name, rules) for name, since, rules in CLUSTER_ROLES if since <= minor]
