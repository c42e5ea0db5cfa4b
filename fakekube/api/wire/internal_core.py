"""Upstream's internal ``core`` types (``pkg/apis/core``) as ``encoding/json`` writes them.

Some messages embed an internal struct marshalled to JSON: a pod update that changes a
forbidden field shows ``diff.Diff`` of the old and new internal ``core.PodSpec``
(``json.MarshalIndent``, one space), a suspended Job's template change shows the new
``core.PodSpec`` (1.36). Internal types have no JSON tags, so every field is written,
under its Go name, in declaration order, with Go's zero values (``null`` for a nil
pointer, slice or map, ``""``, ``0``, ``false``), maps with their keys sorted. A client
compares those texts, so the order and names here are upstream's.

:data:`STRUCTS` is data derived from Kubernetes 1.36's ``pkg/apis/core/types.go``: every
struct reachable from ``PodSpec``, its fields in declaration order as (Go name, Go type)
or (Go name, Go type, v1 JSON name) where the v1 name (``k8s.io/api/core/v1/types.go``)
is not the Go name with its first letter lowered; an empty Go name is an embedded struct
(its fields are promoted), an empty v1 name a field v1 keeps elsewhere (the pod's host
namespaces, at the top of v1's ``PodSpec``). A type name not listed is a named string
(``RestartPolicy``) unless :func:`internal_json` knows it.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from fakekube.objects import canonical_quantity

Obj = dict[str, Any]

#: The internal PodSecurityContext fields v1 keeps at the top of PodSpec (the v1 → internal
#: conversion moves them in, and always makes a PodSecurityContext).
POD_SPEC_HOST_FIELDS = ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "hostUsers")

_SCALAR_ZEROS: dict[str, Any] = {"string": "", "bool": False, "int": 0, "int32": 0, "int64": 0, "float64": 0,
                                 "types.UID": "", "intstr.IntOrString": 0}
#: External types whose own JSON tags apply: written as v1 holds them (omitempty, so as stored).
_TAGGED = frozenset({"metav1.LabelSelector", "metav1.Time"})
#: ``metav1.ObjectMeta``'s JSON names in its declaration order (every one ``omitempty``).
_OBJECT_META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                      "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
                      "annotations", "ownerReferences", "finalizers", "managedFields")

#: core.Container's fields, which EphemeralContainerCommon repeats.
_CONTAINER_FIELDS: tuple[tuple[str, ...], ...] = (
    ("Name", "string"), ("Image", "string"), ("Command", "[]string"), ("Args", "[]string"),
    ("WorkingDir", "string"), ("Ports", "[]ContainerPort"), ("EnvFrom", "[]EnvFromSource"), ("Env", "[]EnvVar"),
    ("Resources", "ResourceRequirements"), ("ResizePolicy", "[]ContainerResizePolicy"),
    ("RestartPolicy", "*ContainerRestartPolicy"), ("RestartPolicyRules", "[]ContainerRestartRule"),
    ("VolumeMounts", "[]VolumeMount"), ("VolumeDevices", "[]VolumeDevice"), ("LivenessProbe", "*Probe"),
    ("ReadinessProbe", "*Probe"), ("StartupProbe", "*Probe"), ("Lifecycle", "*Lifecycle"),
    ("TerminationMessagePath", "string"), ("TerminationMessagePolicy", "TerminationMessagePolicy"),
    ("ImagePullPolicy", "PullPolicy"), ("SecurityContext", "*SecurityContext"), ("Stdin", "bool"),
    ("StdinOnce", "bool"), ("TTY", "bool", "tty"),
)
STRUCTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "PodSpec": (("Volumes", "[]Volume"), ("InitContainers", "[]Container"), ("Containers", "[]Container"),
        ("EphemeralContainers", "[]EphemeralContainer"), ("RestartPolicy", "RestartPolicy"),
        ("TerminationGracePeriodSeconds", "*int64"), ("ActiveDeadlineSeconds", "*int64"),
        ("DNSPolicy", "DNSPolicy", "dnsPolicy"), ("NodeSelector", "map[string]string"),
        ("ServiceAccountName", "string"), ("AutomountServiceAccountToken", "*bool"), ("NodeName", "string"),
        ("SecurityContext", "*PodSecurityContext"), ("ImagePullSecrets", "[]LocalObjectReference"),
        ("Hostname", "string"), ("Subdomain", "string"), ("SetHostnameAsFQDN", "*bool"), ("Affinity", "*Affinity"),
        ("SchedulerName", "string"), ("Tolerations", "[]Toleration"), ("HostAliases", "[]HostAlias"),
        ("PriorityClassName", "string"), ("Priority", "*int32"), ("PreemptionPolicy", "*PreemptionPolicy"),
        ("DNSConfig", "*PodDNSConfig", "dnsConfig"), ("ReadinessGates", "[]PodReadinessGate"),
        ("RuntimeClassName", "*string"), ("Overhead", "ResourceList"), ("EnableServiceLinks", "*bool"),
        ("TopologySpreadConstraints", "[]TopologySpreadConstraint"), ("OS", "*PodOS", "os"),
        ("SchedulingGates", "[]PodSchedulingGate"), ("ResourceClaims", "[]PodResourceClaim"),
        ("Resources", "*ResourceRequirements"), ("HostnameOverride", "*string"),
        ("SchedulingGroup", "*PodSchedulingGroup"),),
    "PodTemplateSpec": (("", "metav1.ObjectMeta"), ("Spec", "PodSpec"),),
    "Volume": (("Name", "string"), ("", "VolumeSource"),),
    "Container": _CONTAINER_FIELDS,
    "EphemeralContainer": (("", "EphemeralContainerCommon"), ("TargetContainerName", "string"),),
    "PodSecurityContext": (("HostNetwork", "bool", ""), ("HostPID", "bool", ""), ("HostIPC", "bool", ""),
        ("ShareProcessNamespace", "*bool", ""), ("HostUsers", "*bool", ""),
        ("SELinuxOptions", "*SELinuxOptions", "seLinuxOptions"),
        ("WindowsOptions", "*WindowsSecurityContextOptions"), ("RunAsUser", "*int64"), ("RunAsGroup", "*int64"),
        ("RunAsNonRoot", "*bool"), ("SupplementalGroups", "[]int64"),
        ("SupplementalGroupsPolicy", "*SupplementalGroupsPolicy"), ("FSGroup", "*int64", "fsGroup"),
        ("FSGroupChangePolicy", "*PodFSGroupChangePolicy", "fsGroupChangePolicy"), ("Sysctls", "[]Sysctl"),
        ("SeccompProfile", "*SeccompProfile"), ("AppArmorProfile", "*AppArmorProfile"),
        ("SELinuxChangePolicy", "*PodSELinuxChangePolicy", "seLinuxChangePolicy"),),
    "LocalObjectReference": (("Name", "string"),),
    "Affinity": (("NodeAffinity", "*NodeAffinity"), ("PodAffinity", "*PodAffinity"),
        ("PodAntiAffinity", "*PodAntiAffinity"),),
    "Toleration": (("Key", "string"), ("Operator", "TolerationOperator"), ("Value", "string"),
        ("Effect", "TaintEffect"), ("TolerationSeconds", "*int64"),),
    "HostAlias": (("IP", "string", "ip"), ("Hostnames", "[]string"),),
    "PodDNSConfig": (("Nameservers", "[]string"), ("Searches", "[]string"), ("Options", "[]PodDNSConfigOption"),),
    "PodReadinessGate": (("ConditionType", "PodConditionType"),),
    "TopologySpreadConstraint": (("MaxSkew", "int32"), ("TopologyKey", "string"),
        ("WhenUnsatisfiable", "UnsatisfiableConstraintAction"), ("LabelSelector", "*metav1.LabelSelector"),
        ("MinDomains", "*int32"), ("NodeAffinityPolicy", "*NodeInclusionPolicy"),
        ("NodeTaintsPolicy", "*NodeInclusionPolicy"), ("MatchLabelKeys", "[]string"),),
    "PodOS": (("Name", "OSName"),),
    "PodSchedulingGate": (("Name", "string"),),
    "PodResourceClaim": (("Name", "string"), ("ResourceClaimName", "*string"),
        ("ResourceClaimTemplateName", "*string"),),
    "ResourceRequirements": (("Limits", "ResourceList"), ("Requests", "ResourceList"), ("Claims", "[]ResourceClaim"),),
    "PodSchedulingGroup": (("PodGroupName", "*string"),),
    "VolumeSource": (("HostPath", "*HostPathVolumeSource"), ("EmptyDir", "*EmptyDirVolumeSource"),
        ("GCEPersistentDisk", "*GCEPersistentDiskVolumeSource", "gcePersistentDisk"),
        ("AWSElasticBlockStore", "*AWSElasticBlockStoreVolumeSource", "awsElasticBlockStore"),
        ("GitRepo", "*GitRepoVolumeSource"), ("Secret", "*SecretVolumeSource"), ("NFS", "*NFSVolumeSource", "nfs"),
        ("ISCSI", "*ISCSIVolumeSource", "iscsi"), ("Glusterfs", "*GlusterfsVolumeSource"),
        ("PersistentVolumeClaim", "*PersistentVolumeClaimVolumeSource"), ("RBD", "*RBDVolumeSource", "rbd"),
        ("Quobyte", "*QuobyteVolumeSource"), ("FlexVolume", "*FlexVolumeSource"), ("Cinder", "*CinderVolumeSource"),
        ("CephFS", "*CephFSVolumeSource", "cephfs"), ("Flocker", "*FlockerVolumeSource"),
        ("DownwardAPI", "*DownwardAPIVolumeSource"), ("FC", "*FCVolumeSource", "fc"),
        ("AzureFile", "*AzureFileVolumeSource"), ("ConfigMap", "*ConfigMapVolumeSource"),
        ("VsphereVolume", "*VsphereVirtualDiskVolumeSource"), ("AzureDisk", "*AzureDiskVolumeSource"),
        ("PhotonPersistentDisk", "*PhotonPersistentDiskVolumeSource"), ("Projected", "*ProjectedVolumeSource"),
        ("PortworxVolume", "*PortworxVolumeSource"), ("ScaleIO", "*ScaleIOVolumeSource"),
        ("StorageOS", "*StorageOSVolumeSource", "storageos"), ("CSI", "*CSIVolumeSource", "csi"),
        ("Ephemeral", "*EphemeralVolumeSource"), ("Image", "*ImageVolumeSource"),),
    "ContainerPort": (("Name", "string"), ("HostPort", "int32"), ("ContainerPort", "int32"),
        ("Protocol", "Protocol"), ("HostIP", "string"),),
    "EnvFromSource": (("Prefix", "string"), ("ConfigMapRef", "*ConfigMapEnvSource"),
        ("SecretRef", "*SecretEnvSource"),),
    "EnvVar": (("Name", "string"), ("Value", "string"), ("ValueFrom", "*EnvVarSource"),),
    "ContainerResizePolicy": (("ResourceName", "ResourceName"), ("RestartPolicy", "ResourceResizeRestartPolicy"),),
    "ContainerRestartRule": (("Action", "ContainerRestartRuleAction"),
        ("ExitCodes", "*ContainerRestartRuleOnExitCodes"),),
    "VolumeMount": (("Name", "string"), ("ReadOnly", "bool"), ("RecursiveReadOnly", "*RecursiveReadOnlyMode"),
        ("MountPath", "string"), ("SubPath", "string"), ("MountPropagation", "*MountPropagationMode"),
        ("SubPathExpr", "string"),),
    "VolumeDevice": (("Name", "string"), ("DevicePath", "string"),),
    "Probe": (("", "ProbeHandler"), ("InitialDelaySeconds", "int32"), ("TimeoutSeconds", "int32"),
        ("PeriodSeconds", "int32"), ("SuccessThreshold", "int32"), ("FailureThreshold", "int32"),
        ("TerminationGracePeriodSeconds", "*int64"),),
    "Lifecycle": (("PostStart", "*LifecycleHandler"), ("PreStop", "*LifecycleHandler"), ("StopSignal", "*Signal"),),
    "SecurityContext": (("Capabilities", "*Capabilities"), ("Privileged", "*bool"),
        ("SELinuxOptions", "*SELinuxOptions", "seLinuxOptions"),
        ("WindowsOptions", "*WindowsSecurityContextOptions"), ("RunAsUser", "*int64"), ("RunAsGroup", "*int64"),
        ("RunAsNonRoot", "*bool"), ("ReadOnlyRootFilesystem", "*bool"), ("AllowPrivilegeEscalation", "*bool"),
        ("ProcMount", "*ProcMountType"), ("SeccompProfile", "*SeccompProfile"),
        ("AppArmorProfile", "*AppArmorProfile"),),
    "EphemeralContainerCommon": _CONTAINER_FIELDS,  # the same fields, as in types.go
    "SELinuxOptions": (("User", "string"), ("Role", "string"), ("Type", "string"), ("Level", "string"),),
    "WindowsSecurityContextOptions": (("GMSACredentialSpecName", "*string", "gmsaCredentialSpecName"),
        ("GMSACredentialSpec", "*string", "gmsaCredentialSpec"), ("RunAsUserName", "*string"),
        ("HostProcess", "*bool"),),
    "Sysctl": (("Name", "string"), ("Value", "string"),),
    "SeccompProfile": (("Type", "SeccompProfileType"), ("LocalhostProfile", "*string"),),
    "AppArmorProfile": (("Type", "AppArmorProfileType"), ("LocalhostProfile", "*string"),),
    "NodeAffinity": (("RequiredDuringSchedulingIgnoredDuringExecution", "*NodeSelector"),
        ("PreferredDuringSchedulingIgnoredDuringExecution", "[]PreferredSchedulingTerm"),),
    "PodAffinity": (("RequiredDuringSchedulingIgnoredDuringExecution", "[]PodAffinityTerm"),
        ("PreferredDuringSchedulingIgnoredDuringExecution", "[]WeightedPodAffinityTerm"),),
    "PodAntiAffinity": (("RequiredDuringSchedulingIgnoredDuringExecution", "[]PodAffinityTerm"),
        ("PreferredDuringSchedulingIgnoredDuringExecution", "[]WeightedPodAffinityTerm"),),
    "PodDNSConfigOption": (("Name", "string"), ("Value", "*string"),),
    "ResourceClaim": (("Name", "string"), ("Request", "string"),),
    "HostPathVolumeSource": (("Path", "string"), ("Type", "*HostPathType"),),
    "EmptyDirVolumeSource": (("Medium", "StorageMedium"), ("SizeLimit", "*resource.Quantity"),),
    "GCEPersistentDiskVolumeSource": (("PDName", "string", "pdName"), ("FSType", "string", "fsType"),
        ("Partition", "int32"), ("ReadOnly", "bool"),),
    "AWSElasticBlockStoreVolumeSource": (("VolumeID", "string"), ("FSType", "string", "fsType"),
        ("Partition", "int32"), ("ReadOnly", "bool"),),
    "GitRepoVolumeSource": (("Repository", "string"), ("Revision", "string"), ("Directory", "string"),),
    "SecretVolumeSource": (("SecretName", "string"), ("Items", "[]KeyToPath"), ("DefaultMode", "*int32"),
        ("Optional", "*bool"),),
    "NFSVolumeSource": (("Server", "string"), ("Path", "string"), ("ReadOnly", "bool"),),
    "ISCSIVolumeSource": (("TargetPortal", "string"), ("IQN", "string", "iqn"), ("Lun", "int32"),
        ("ISCSIInterface", "string", "iscsiInterface"), ("FSType", "string", "fsType"), ("ReadOnly", "bool"),
        ("Portals", "[]string"), ("DiscoveryCHAPAuth", "bool", "chapAuthDiscovery"),
        ("SessionCHAPAuth", "bool", "chapAuthSession"), ("SecretRef", "*LocalObjectReference"),
        ("InitiatorName", "*string"),),
    "GlusterfsVolumeSource": (("EndpointsName", "string", "endpoints"), ("Path", "string"), ("ReadOnly", "bool"),),
    "PersistentVolumeClaimVolumeSource": (("ClaimName", "string"), ("ReadOnly", "bool"),),
    "RBDVolumeSource": (("CephMonitors", "[]string", "monitors"), ("RBDImage", "string", "image"),
        ("FSType", "string", "fsType"), ("RBDPool", "string", "pool"), ("RadosUser", "string", "user"),
        ("Keyring", "string"), ("SecretRef", "*LocalObjectReference"), ("ReadOnly", "bool"),),
    "QuobyteVolumeSource": (("Registry", "string"), ("Volume", "string"), ("ReadOnly", "bool"), ("User", "string"),
        ("Group", "string"), ("Tenant", "string"),),
    "FlexVolumeSource": (("Driver", "string"), ("FSType", "string", "fsType"),
        ("SecretRef", "*LocalObjectReference"), ("ReadOnly", "bool"), ("Options", "map[string]string"),),
    "CinderVolumeSource": (("VolumeID", "string"), ("FSType", "string", "fsType"), ("ReadOnly", "bool"),
        ("SecretRef", "*LocalObjectReference"),),
    "CephFSVolumeSource": (("Monitors", "[]string"), ("Path", "string"), ("User", "string"),
        ("SecretFile", "string"), ("SecretRef", "*LocalObjectReference"), ("ReadOnly", "bool"),),
    "FlockerVolumeSource": (("DatasetName", "string"), ("DatasetUUID", "string"),),
    "DownwardAPIVolumeSource": (("Items", "[]DownwardAPIVolumeFile"), ("DefaultMode", "*int32"),),
    "FCVolumeSource": (("TargetWWNs", "[]string"), ("Lun", "*int32"), ("FSType", "string", "fsType"),
        ("ReadOnly", "bool"), ("WWIDs", "[]string", "wwids"),),
    "AzureFileVolumeSource": (("SecretName", "string"), ("ShareName", "string"), ("ReadOnly", "bool"),),
    "ConfigMapVolumeSource": (("", "LocalObjectReference"), ("Items", "[]KeyToPath"), ("DefaultMode", "*int32"),
        ("Optional", "*bool"),),
    "VsphereVirtualDiskVolumeSource": (("VolumePath", "string"), ("FSType", "string", "fsType"),
        ("StoragePolicyName", "string"), ("StoragePolicyID", "string"),),
    "AzureDiskVolumeSource": (("DiskName", "string"), ("DataDiskURI", "string", "diskURI"),
        ("CachingMode", "*AzureDataDiskCachingMode"), ("FSType", "*string", "fsType"), ("ReadOnly", "*bool"),
        ("Kind", "*AzureDataDiskKind"),),
    "PhotonPersistentDiskVolumeSource": (("PdID", "string"), ("FSType", "string", "fsType"),),
    "ProjectedVolumeSource": (("Sources", "[]VolumeProjection"), ("DefaultMode", "*int32"),),
    "PortworxVolumeSource": (("VolumeID", "string"), ("FSType", "string", "fsType"), ("ReadOnly", "bool"),),
    "ScaleIOVolumeSource": (("Gateway", "string"), ("System", "string"), ("SecretRef", "*LocalObjectReference"),
        ("SSLEnabled", "bool", "sslEnabled"), ("ProtectionDomain", "string"), ("StoragePool", "string"),
        ("StorageMode", "string"), ("VolumeName", "string"), ("FSType", "string", "fsType"), ("ReadOnly", "bool"),),
    "StorageOSVolumeSource": (("VolumeName", "string"), ("VolumeNamespace", "string"),
        ("FSType", "string", "fsType"), ("ReadOnly", "bool"), ("SecretRef", "*LocalObjectReference"),),
    "CSIVolumeSource": (("Driver", "string"), ("ReadOnly", "*bool"), ("FSType", "*string", "fsType"),
        ("VolumeAttributes", "map[string]string"), ("NodePublishSecretRef", "*LocalObjectReference"),),
    "EphemeralVolumeSource": (("VolumeClaimTemplate", "*PersistentVolumeClaimTemplate"),),
    "ImageVolumeSource": (("Reference", "string"), ("PullPolicy", "PullPolicy"),),
    "ConfigMapEnvSource": (("", "LocalObjectReference"), ("Optional", "*bool"),),
    "SecretEnvSource": (("", "LocalObjectReference"), ("Optional", "*bool"),),
    "EnvVarSource": (("FieldRef", "*ObjectFieldSelector"), ("ResourceFieldRef", "*ResourceFieldSelector"),
        ("ConfigMapKeyRef", "*ConfigMapKeySelector"), ("SecretKeyRef", "*SecretKeySelector"),
        ("FileKeyRef", "*FileKeySelector"),),
    "ContainerRestartRuleOnExitCodes": (("Operator", "ContainerRestartRuleOnExitCodesOperator"),
        ("Values", "[]int32"),),
    "ProbeHandler": (("Exec", "*ExecAction"), ("HTTPGet", "*HTTPGetAction", "httpGet"),
        ("TCPSocket", "*TCPSocketAction", "tcpSocket"), ("GRPC", "*GRPCAction", "grpc"),),
    "LifecycleHandler": (("Exec", "*ExecAction"), ("HTTPGet", "*HTTPGetAction", "httpGet"),
        ("TCPSocket", "*TCPSocketAction", "tcpSocket"), ("Sleep", "*SleepAction"),),
    "Capabilities": (("Add", "[]Capability"), ("Drop", "[]Capability"),),
    "NodeSelector": (("NodeSelectorTerms", "[]NodeSelectorTerm"),),
    "PreferredSchedulingTerm": (("Weight", "int32"), ("Preference", "NodeSelectorTerm"),),
    "PodAffinityTerm": (("LabelSelector", "*metav1.LabelSelector"), ("Namespaces", "[]string"),
        ("TopologyKey", "string"), ("NamespaceSelector", "*metav1.LabelSelector"), ("MatchLabelKeys", "[]string"),
        ("MismatchLabelKeys", "[]string"),),
    "WeightedPodAffinityTerm": (("Weight", "int32"), ("PodAffinityTerm", "PodAffinityTerm"),),
    "KeyToPath": (("Key", "string"), ("Path", "string"), ("Mode", "*int32"),),
    "DownwardAPIVolumeFile": (("Path", "string"), ("FieldRef", "*ObjectFieldSelector"),
        ("ResourceFieldRef", "*ResourceFieldSelector"), ("Mode", "*int32"),),
    "VolumeProjection": (("Secret", "*SecretProjection"), ("DownwardAPI", "*DownwardAPIProjection"),
        ("ConfigMap", "*ConfigMapProjection"), ("ServiceAccountToken", "*ServiceAccountTokenProjection"),
        ("ClusterTrustBundle", "*ClusterTrustBundleProjection"), ("PodCertificate", "*PodCertificateProjection"),),
    "PersistentVolumeClaimTemplate": (("", "metav1.ObjectMeta"), ("Spec", "PersistentVolumeClaimSpec"),),
    "ObjectFieldSelector": (("APIVersion", "string", "apiVersion"), ("FieldPath", "string"),),
    "ResourceFieldSelector": (("ContainerName", "string"), ("Resource", "string"), ("Divisor", "resource.Quantity"),),
    "ConfigMapKeySelector": (("", "LocalObjectReference"), ("Key", "string"), ("Optional", "*bool"),),
    "SecretKeySelector": (("", "LocalObjectReference"), ("Key", "string"), ("Optional", "*bool"),),
    "FileKeySelector": (("VolumeName", "string"), ("Path", "string"), ("Key", "string"), ("Optional", "*bool"),),
    "ExecAction": (("Command", "[]string"),),
    "HTTPGetAction": (("Path", "string"), ("Port", "intstr.IntOrString"), ("Host", "string"),
        ("Scheme", "URIScheme"), ("HTTPHeaders", "[]HTTPHeader", "httpHeaders"),),
    "TCPSocketAction": (("Port", "intstr.IntOrString"), ("Host", "string"),),
    "GRPCAction": (("Port", "int32"), ("Service", "*string"),),
    "SleepAction": (("Seconds", "int64"),),
    "NodeSelectorTerm": (("MatchExpressions", "[]NodeSelectorRequirement"),
        ("MatchFields", "[]NodeSelectorRequirement"),),
    "SecretProjection": (("", "LocalObjectReference"), ("Items", "[]KeyToPath"), ("Optional", "*bool"),),
    "DownwardAPIProjection": (("Items", "[]DownwardAPIVolumeFile"),),
    "ConfigMapProjection": (("", "LocalObjectReference"), ("Items", "[]KeyToPath"), ("Optional", "*bool"),),
    "ServiceAccountTokenProjection": (("Audience", "string"), ("ExpirationSeconds", "int64"), ("Path", "string"),),
    "ClusterTrustBundleProjection": (("Name", "*string"), ("SignerName", "*string"),
        ("LabelSelector", "*metav1.LabelSelector"), ("Optional", "*bool"), ("Path", "string"),),
    "PodCertificateProjection": (("SignerName", "string"), ("KeyType", "string"), ("MaxExpirationSeconds", "*int32"),
        ("CredentialBundlePath", "string"), ("KeyPath", "string"), ("CertificateChainPath", "string"),
        ("UserAnnotations", "map[string]string"),),
    "PersistentVolumeClaimSpec": (("AccessModes", "[]PersistentVolumeAccessMode"),
        ("Selector", "*metav1.LabelSelector"), ("Resources", "VolumeResourceRequirements"), ("VolumeName", "string"),
        ("StorageClassName", "*string"), ("VolumeMode", "*PersistentVolumeMode"),
        ("DataSource", "*TypedLocalObjectReference"), ("DataSourceRef", "*TypedObjectReference"),
        ("VolumeAttributesClassName", "*string"),),
    "HTTPHeader": (("Name", "string"), ("Value", "string"),),
    "NodeSelectorRequirement": (("Key", "string"), ("Operator", "NodeSelectorOperator"), ("Values", "[]string"),),
    "VolumeResourceRequirements": (("Limits", "ResourceList"), ("Requests", "ResourceList"),),
    "TypedLocalObjectReference": (("APIGroup", "*string", "apiGroup"), ("Kind", "string"), ("Name", "string"),),
    "TypedObjectReference": (("APIGroup", "*string", "apiGroup"), ("Kind", "string"), ("Name", "string"),
        ("Namespace", "*string"),),
}


def internal_json(go_type: str, value: Any) -> Any:
    """``value`` (a v1 JSON value of the field typed ``go_type`` in the internal package)
    as ``encoding/json`` writes the internal type: dicts in Go field order."""
    if go_type.startswith("*"):
        return None if value is None else internal_json(go_type[1:], value)
    if go_type == "[]byte":
        return value
    if go_type.startswith("[]"):
        return None if value is None else [internal_json(go_type[2:], item) for item in value]
    if go_type.startswith("map["):
        item_type = go_type[go_type.index("]") + 1:]
        return None if value is None else {key: internal_json(item_type, value[key]) for key in sorted(value)}
    if go_type == "ResourceList":
        return None if value is None else {key: canonical_quantity(value[key]) for key in sorted(value)}
    if go_type == "resource.Quantity":
        return canonical_quantity(value) if value is not None else "0"
    if go_type == "metav1.ObjectMeta":
        return _object_meta(value or {})
    if go_type in _TAGGED:
        return value if value is not None else ({} if go_type != "metav1.Time" else None)
    if go_type in STRUCTS:
        return _struct(go_type, value or {})
    return value if value is not None else _SCALAR_ZEROS.get(go_type, "")


def _struct(name: str, value: Obj) -> Obj:
    out: Obj = {}
    if name == "PodSpec":  # the host namespaces move into an always-present security context
        host = {key: value[key] for key in POD_SPEC_HOST_FIELDS if key in value}
        value = {**value, "securityContext": {**(value.get("securityContext") or {}), **host}}
    for row in STRUCTS[name]:
        go_name, go_type = row[0], row[1]
        if not go_name:  # embedded: its fields are promoted (v1 inlines it too)
            embedded = internal_json(go_type, value.get("metadata") if go_type == "metav1.ObjectMeta" else value)
            out.update(embedded if isinstance(embedded, dict) else {})
            continue
        key = row[2] if len(row) > 2 else go_name[:1].lower() + go_name[1:]
        out[go_name] = internal_json(go_type, value.get(key or go_name[:1].lower() + go_name[1:]))
    return out


def _object_meta(meta: Obj) -> Obj:
    """Tagged ``metav1.ObjectMeta``: its fields in Go order, labels and annotations sorted."""
    out: Obj = {}
    for key in _OBJECT_META_ORDER:
        if meta.get(key) not in (None, "", 0, [], {}):
            value = meta[key]
            out[key] = {k: value[k] for k in sorted(value)} if key in ("labels", "annotations") else value
    return out


def diff_text(old: Any, new: Any) -> str:
    """apimachinery's ``diff.Diff`` (from 1.34): both values as ``json.MarshalIndent`` with a
    one-space indent, then go-difflib's unified diff (3 lines of context, no file header)."""
    lines = difflib.unified_diff(_pretty(old).splitlines(keepends=True), _pretty(new).splitlines(keepends=True), n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in list(lines)[2:])


def _pretty(value: Any) -> str:
    """``json.MarshalIndent(value, "", " ")``: Go's escapes of ``<``, ``>``, ``&``, U+2028/9."""
    text = json.dumps(value, indent=1, ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text + "\n"
