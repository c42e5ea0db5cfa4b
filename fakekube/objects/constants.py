"""Well-known labels, annotations and finalizers, spelled once.

Kubelets label nodes, controllers stamp hashes and revisions on what they create, and
tests select on all of them; a typo in one of these strings silently matches nothing,
so every part names them through these constants. Values are upstream's
(k8s.io/api ``core/v1/well_known_labels.go``, ``apps/v1/types.go``, ``batch/v1/types.go``,
``discovery/v1/well_known_labels.go`` and the controllers that set them).
"""

from __future__ import annotations

# --- nodes -------------------------------------------------------------------------
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_OS = "kubernetes.io/os"
LABEL_ARCH = "kubernetes.io/arch"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
#: Deprecated zone and region labels, still read by the node lifecycle controller's zoning.
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
LABEL_NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
LABEL_NODE_ROLE_CONTROL_PLANE = "node-role.kubernetes.io/control-plane"
LABEL_NODE_EXCLUDE_FROM_EXTERNAL_LB = "node.kubernetes.io/exclude-from-external-load-balancers"
#: The node TTL controller's hint to kubelets on how long to cache objects.
ANNOTATION_NODE_TTL = "node.alpha.kubernetes.io/ttl"

# --- namespaces --------------------------------------------------------------------
#: Set by the API server on every namespace to its own name.
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"

# --- workloads (apps/v1) -----------------------------------------------------------
#: Deployments add it to ReplicaSets and their pods so sibling ReplicaSets never overlap.
LABEL_POD_TEMPLATE_HASH = "pod-template-hash"
#: StatefulSets and DaemonSets label pods with the ControllerRevision they came from.
LABEL_CONTROLLER_REVISION_HASH = "controller-revision-hash"
LABEL_STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
LABEL_POD_INDEX = "apps.kubernetes.io/pod-index"
LABEL_DAEMONSET_TEMPLATE_GENERATION = "pod-template-generation"
ANNOTATION_DAEMONSET_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
ANNOTATION_DEPLOYMENT_REVISION = "deployment.kubernetes.io/revision"
ANNOTATION_DEPLOYMENT_REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
ANNOTATION_DEPLOYMENT_DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
ANNOTATION_DEPLOYMENT_MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
#: ReplicaSets scale down pods with a lower cost first.
ANNOTATION_POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"

# --- jobs (batch/v1) ---------------------------------------------------------------
LABEL_JOB_CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LABEL_JOB_NAME = "batch.kubernetes.io/job-name"
#: The unprefixed forms the Job controller still writes next to the prefixed ones.
LABEL_LEGACY_JOB_CONTROLLER_UID = "controller-uid"
LABEL_LEGACY_JOB_NAME = "job-name"
LABEL_JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
ANNOTATION_JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
ANNOTATION_CRONJOB_SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
FINALIZER_JOB_TRACKING = "batch.kubernetes.io/job-tracking"

# --- services and endpoints --------------------------------------------------------
LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_ENDPOINTSLICE_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
ENDPOINTSLICE_CONTROLLER_NAME = "endpointslice-controller.k8s.io"
LABEL_SERVICE_HEADLESS = "service.kubernetes.io/headless"
LABEL_SERVICE_PROXY_NAME = "service.kubernetes.io/service-proxy-name"
ANNOTATION_ENDPOINTS_LAST_CHANGE_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
#: On an Endpoints cut to 1,000 addresses by the endpoints controller ("truncated").
ANNOTATION_ENDPOINTS_OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
#: The EndpointSlice mirroring controller leaves Endpoints with this label ("true") alone.
LABEL_ENDPOINTSLICE_SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
#: The service controller's finalizer on a LoadBalancer Service while its load balancer exists.
FINALIZER_LOAD_BALANCER_CLEANUP = "service.kubernetes.io/load-balancer-cleanup"

# --- pods (kubelet) ----------------------------------------------------------------
#: On a mirror pod: the hash of the static pod it reflects.
ANNOTATION_CONFIG_MIRROR = "kubernetes.io/config.mirror"
ANNOTATION_CONFIG_SOURCE = "kubernetes.io/config.source"
ANNOTATION_CONFIG_HASH = "kubernetes.io/config.hash"

# --- kubectl -----------------------------------------------------------------------
ANNOTATION_LAST_APPLIED_CONFIGURATION = "kubectl.kubernetes.io/last-applied-configuration"
#: ``kubectl rollout restart`` sets it on the pod template to force a rollout.
ANNOTATION_RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
ANNOTATION_CHANGE_CAUSE = "kubernetes.io/change-cause"

# --- finalizers --------------------------------------------------------------------
FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND_DELETION = "foregroundDeletion"
FINALIZER_PVC_PROTECTION = "kubernetes.io/pvc-protection"
FINALIZER_PV_PROTECTION = "kubernetes.io/pv-protection"
FINALIZER_VAC_PROTECTION = "kubernetes.io/vac-protection"
