"""The Kubernetes releases fakekube emulates, and everything that differs between them.

One table, read by every layer that decides something by version (the apiserver's
discovery, ``/version``, field-error rendering and defaults; the controllers' and the
kubelets' defaults), so a difference between releases lives here and nowhere else.
Each row says where it was measured or read: "reference" is a real kube-apiserver 1.36.2
run natively and with ``--emulated-version`` 1.33/1.34/1.35; the feature gates' defaults
are upstream's versioned specs (``pkg/features/kube_features.go``), the rest the release's
own source.

What every supported release shares (the built-in types of 1.33, controller timings such
as ``--node-monitor-grace-period`` 50 s) is not repeated per release: a row exists only
where the answer changes between 1.33 and 1.36, plus the few values every release
needs stated (its build).

Pure data and pure functions; nothing here reads a clock or a global setting.
"""

from __future__ import annotations

import hashlib
from typing import Mapping, NamedTuple

#: The releases a cluster may emulate, oldest first.
SUPPORTED_VERSIONS = ("1.33", "1.34", "1.35", "1.36")
#: What a cluster emulates when nobody says otherwise: the newest release.
DEFAULT_VERSION = "1.36"

# Field errors' bad values (``field.Error.ErrorBody``): up to 1.33 a non-scalar value was
# printed with Go's ``%#v`` (``map[string]string{"a":"b"}``, ``[]string{"x"}``; nil as the
# quoted string ``"null"``); from 1.34 (kubernetes/kubernetes#132314, apimachinery v0.34.0)
# it is ``json.Marshal``'d (``{"a":"b"}``, ``["x"]``, ``null``).
GO_VALUES = "go"
JSON_VALUES = "json"


class Build(NamedTuple):
    """What ``/version`` says of the binary besides its version: the v1.XX.0 release's
    date and the Go it was built with. The commit is fakekube's own stand-in (see
    :func:`git_commit`): nothing a client decides on."""

    build_date: str
    go_version: str


class Release(NamedTuple):
    """Everything fakekube does differently for one release (a row of the table)."""

    #: "1.36"
    version: str
    minor: int
    build: Build
    #: How a field error shows a bad value: :data:`GO_VALUES` or :data:`JSON_VALUES`.
    field_error_values: str
    #: ObjectMeta's zero ``creationTimestamp`` is serialised as ``null`` (templates, discovery
    #: documents, reviews) up to 1.33; from 1.34 it is omitted (kubernetes/kubernetes#130989,
    #: ``omitzero``). Reference: the 1.36 binary omits it.
    null_creation_timestamp: bool
    #: The feature gates fakekube consults, at this release's default.
    feature_gates: Mapping[str, bool]
    #: "group/resource" → the group-version upstream stores it as ("v1" is core), where that
    #: is not the served one (discovery's ``storageVersionHash``; measured at the reference).
    storage_versions: Mapping[str, str]
    #: Message texts that changed between releases, by a short name (see :data:`_MESSAGE_SINCE`).
    messages: Mapping[str, str]
    #: kube-controller-manager's ``--node-monitor-grace-period`` default: 50 s since 1.32
    #: (kubernetes/kubernetes#126287; 40 s before), unchanged through 1.36.
    node_monitor_grace_period_s: float
    #: A DELETE body that does not decode as DeleteOptions (a wrong kind, a mistyped field) is
    #: a 400 BadRequest from 1.35 (kubernetes/kubernetes#133358); before, the decoder's plain
    #: error went out as a 500 without reason.
    delete_options_bad_request: bool
    #: Impersonation headers without a user are a 400 BadRequest from 1.35 (the filter's
    #: rewrite into its own package, with constrained impersonation); before, a plain 500.
    impersonation_bad_request: bool
    #: A TokenRequest's answer carries the ServiceAccount's uid from 1.34, and a request naming
    #: another uid is a 409 (kubernetes/kubernetes#132803; TokenRequestServiceAccountUIDValidation,
    #: beta and on from 1.34); up to 1.33 the create handler cleared a request's uid and
    #: answered none. Reference: the 1.36 binary.
    token_request_uid: bool
    #: A failed CEL rule of a custom resource shows the value it judged from 1.35
    #: (kubernetes/kubernetes#132798, #133832): a number, string or bool as itself, an object
    #: or array not at all (``spec: Invalid value: size must ...``); before, the schema type
    #: (``Invalid value: "object": ...``).
    cel_rule_shows_value: bool
    #: A forbidden pod update's message ends with apimachinery's ``diff.Diff`` of the old and
    #: new internal PodSpec (from 1.34, kubernetes/kubernetes#132221: a unified diff of their
    #: indented JSON); before, go-cmp's ``cmp.Diff`` of the structs.
    pod_spec_json_diff: bool
    #: ListOptions has ``shardSelector`` (ShardedListAndWatch, alpha) from 1.36: the OpenAPI
    #: documents list it among every list, watch and deletecollection parameter (apimachinery
    #: v0.36's types.go; none before). Reference: the 1.36 binary.
    list_shard_selector: bool

    @property
    def major(self) -> int:
        return 1

    def enabled(self, gate: str) -> bool:
        """Is ``gate`` on by default in this release? Unknown gates raise (a typo must not
        read as "off")."""
        return self.feature_gates[gate]

    def serves(self, group: str, version: str, plural: str) -> bool:
        """Does a kube-apiserver of this release serve ``group/version/plural`` by default?
        Resources not in :data:`SERVED_SINCE` are served by every supported release."""
        return SERVED_SINCE.get(f"{group}/{version}/{plural}", 0) <= self.minor

    def storage_group_version(self, group: str, plural: str, served_version: str) -> tuple[str, str]:
        """(group, version) objects of ``group/plural`` are stored as: discovery's
        ``storageVersionHash`` is of it (a core group is "")."""
        stored = self.storage_versions.get(f"{group}/{plural}")
        if stored is None:
            return group, served_version
        stored_group, _, stored_version = stored.rpartition("/")
        return stored_group, stored_version

    def git_version(self, patch: int) -> str:
        return f"v1.{self.minor}.{patch}"

    def message(self, name: str) -> str:
        return self.messages[name]


def git_commit(version: str, patch: int) -> str:
    """A fixed 40-hex commit for ``/version``: the sha1 of the git version, the same on
    every run. Not upstream's commit (fakekube is not built from it); docs/api.md says so."""
    return hashlib.sha1(f"fakekube v{version}.{patch}".encode()).hexdigest()


# ----------------------------------------------------------------------------- the rows

#: Resources a release starts serving by default: "group/version/plural" → first minor.
#: Reference: /apis of 1.33/1.34/1.35 (emulated) and 1.36. resource.k8s.io/v1 (DRA) and
#: storage.k8s.io/v1 VolumeAttributesClass went GA in 1.34; admissionregistration v1
#: MutatingAdmissionPolicy in 1.36. Nothing served by 1.33 is gone by 1.36.
SERVED_SINCE: dict[str, int] = {
    "resource.k8s.io/v1/deviceclasses": 34,
    "resource.k8s.io/v1/resourceclaims": 34,
    "resource.k8s.io/v1/resourceclaimtemplates": 34,
    "resource.k8s.io/v1/resourceslices": 34,
    "storage.k8s.io/v1/volumeattributesclasses": 34,
    "admissionregistration.k8s.io/v1/mutatingadmissionpolicies": 36,
    "admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings": 36,
}

#: Storage versions that are not the served one, common to every release: CRDs are stored
#: as apiextensions v1beta1 (kube-apiserver's apiextensions config), events.k8s.io Events as
#: core v1 Events (cohabiting resources; the group is empty). Reference: every release.
_COMMON_STORAGE = {"apiextensions.k8s.io/customresourcedefinitions": "apiextensions.k8s.io/v1beta1",
                   "events.k8s.io/events": "v1"}
#: A version is stored once the release before could read it (the newest version the
#: release's minimum compatibility version serves): in 1.34 DRA as v1beta2 and
#: VolumeAttributesClass as v1beta1 (their v1 is new in 1.34), in 1.36 MutatingAdmissionPolicy
#: as v1beta1; 1.35 stores the first two as v1.
_DRA_RESOURCES = ("deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices")
_STORAGE_1_34 = {**_COMMON_STORAGE, **{f"resource.k8s.io/{r}": "resource.k8s.io/v1beta2" for r in _DRA_RESOURCES},
                 "storage.k8s.io/volumeattributesclasses": "storage.k8s.io/v1beta1"}
_STORAGE_1_36 = {**_COMMON_STORAGE,
                 **{f"admissionregistration.k8s.io/{r}": "admissionregistration.k8s.io/v1beta1"
                    for r in ("mutatingadmissionpolicies", "mutatingadmissionpolicybindings")}}

#: The gates whose default changes between 1.33 and 1.36 and that change what fakekube does
#: (upstream's versioned feature specs):
#: - PodObservedGenerationTracking: alpha (off) in 1.33, on from 1.34 (GA 1.35). The kubelet
#:   writes ``status.observedGeneration`` and each condition's ``observedGeneration``; with it
#:   off the apiserver drops a client's ``status.observedGeneration``. (``metadata.generation``
#:   is set on every pod from 1.33 on, ungated: kubernetes/kubernetes#130181.)
#: - DeploymentReplicaSetTerminatingReplicas: on from 1.35: Deployments and ReplicaSets
#:   report ``status.terminatingReplicas``.
#: - OrderedNamespaceDeletion: on in every supported release (beta 1.33, GA 1.34).
#: - RelaxedServiceNameValidation: on from 1.36 (beta): a Service's name is a DNS-1123 label
#:   (``must not contain dots`` for a dotted one), not a DNS-1035 label.
#: - WatchList: beta, switched off for 1.33 (upstream's streaming encoders did better) and on
#:   again from 1.34: with it off a watch's ``sendInitialEvents`` is a 422.
#: - MutablePodResourcesForSuspendedJobs, MutableSchedulingDirectivesForSuspendedJobs: alpha
#:   (off) in 1.35, on from 1.36 (beta): a suspended Job that has no active pods (never
#:   started, or with its Suspended condition) may change its containers' resources and its
#:   scheduling directives; any other template change is refused on ``spec.template.spec``.
#: The gates of the APIs a release adds (DRA, VolumeAttributesClass, MutatingAdmissionPolicy)
#: are :data:`SERVED_SINCE`: fakekube stores those objects and acts on none of them.
_GATE_SINCE = {
    "PodObservedGenerationTracking": 34,
    "DeploymentReplicaSetTerminatingReplicas": 35,
    "OrderedNamespaceDeletion": 33,
    "RelaxedServiceNameValidation": 36,
    "ConstrainedImpersonation": 36,
    "WatchList": 34,
    "MutablePodResourcesForSuspendedJobs": 36,
    "MutableSchedulingDirectivesForSuspendedJobs": 36,
}

#: Message texts that changed (apimachinery's validation, read at each release's tag):
#: - owner_reference_empty: ``metadata.ownerReferences.kind: Invalid value: "": kind must
#:   not be empty`` up to 1.33; ``must not be empty`` from 1.34 (the field is in the path).
#: - label_key_noun: a label key with more than one "/": ``a qualified name must consist of
#:   …`` up to 1.34, ``a valid label key must consist of …`` from 1.35.
#: - label_length_unit: a label key's or value's length limit ``must be no more than 63
#:   characters`` up to 1.34, ``… 63 bytes`` from 1.35 (the same move of label checks into
#:   apimachinery's ``api/validate/content``, whose MaxLenError counts bytes; 1.36 measured).
_MESSAGE_SINCE: dict[str, tuple[tuple[int, str], ...]] = {
    "owner_reference_empty": ((33, "{field} must not be empty"), (34, "must not be empty")),
    "label_key_noun": ((33, "a qualified name"), (35, "a valid label key")),
    "label_length_unit": ((33, "characters"), (35, "bytes")),
}

#: ``--node-monitor-grace-period``'s default in every supported release.
NODE_MONITOR_GRACE_PERIOD_S = 50.0

#: v1.XX.0's release date, and a Go of the minor the release was built with (a stand-in, not a measured build).
_BUILDS = {
    33: Build("2025-04-23T00:00:00Z", "go1.24.2"),
    34: Build("2025-08-27T00:00:00Z", "go1.24.6"),
    35: Build("2025-12-17T00:00:00Z", "go1.25.5"),
    36: Build("2026-04-22T00:00:00Z", "go1.26.2"),
}


def _at(minor: int, since: tuple[tuple[int, str], ...]) -> str:
    return [text for first, text in since if first <= minor][-1]


def _release(minor: int) -> Release:
    return Release(
        version=f"1.{minor}", minor=minor, build=_BUILDS[minor],
        field_error_values=GO_VALUES if minor <= 33 else JSON_VALUES,
        null_creation_timestamp=minor <= 33,
        feature_gates={gate: since <= minor for gate, since in _GATE_SINCE.items()},
        storage_versions=_STORAGE_1_36 if minor >= 36 else _STORAGE_1_34 if minor == 34 else _COMMON_STORAGE,
        messages={name: _at(minor, since) for name, since in _MESSAGE_SINCE.items()},
        node_monitor_grace_period_s=NODE_MONITOR_GRACE_PERIOD_S,
        delete_options_bad_request=minor >= 35,
        impersonation_bad_request=minor >= 35,
        token_request_uid=minor >= 34,
        cel_rule_shows_value=minor >= 35,
        pod_spec_json_diff=minor >= 34,
        list_shard_selector=minor >= 36,
    )


#: The table: every supported release's row.
RELEASES: dict[str, Release] = {version: _release(int(version.split(".")[1])) for version in SUPPORTED_VERSIONS}


class UnsupportedVersion(ValueError):
    """A Kubernetes version fakekube does not emulate; the message lists the ones it does."""


def release(version: str) -> Release:
    """The row of ``version`` ("1.34", or "v1.34"): a minor release; the patch a cluster
    reports is ``ClusterConfig.patch_version``.

    Raises :class:`UnsupportedVersion` for anything else, naming the supported releases."""
    found = RELEASES.get(str(version).strip().removeprefix("v"))
    if found is None:
        hint = " (give the minor release; the patch is patch_version)" if str(version).count(".") == 2 else ""
        raise UnsupportedVersion(f"Kubernetes version {version!r} is not supported: fakekube emulates "
                                 f"{', '.join(SUPPORTED_VERSIONS)} (default {DEFAULT_VERSION}){hint}")
    return found


__all__ = ["DEFAULT_VERSION", "GO_VALUES", "JSON_VALUES", "RELEASES", "SERVED_SINCE", "SUPPORTED_VERSIONS",
           "Build", "Release", "UnsupportedVersion", "git_commit", "release"]
