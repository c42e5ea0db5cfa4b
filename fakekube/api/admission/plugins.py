"""The plugin registry: every admission plugin by its upstream name, in kube-apiserver's
order (``pkg/kubeapiserver/options/plugins.go``: ``AllOrderedPlugins``), with upstream's
default-on set and the ``--enable-admission-plugins``/``--disable-admission-plugins``
rules (``k8s.io/apiserver/pkg/server/options/admission.go``).

Every upstream name is accepted. The ones fakekube implements are :data:`FACTORIES`;
the others (AlwaysPullImages, PodNodeSelector, NodeRestriction, RuntimeClass,
CertificateApproval, CertificateSigning...) are known names that build nothing — enabling one changes
nothing (docs/api.md). FakekubeBehaviour, fakekube's own, runs with the in-tree
plugins, before the webhooks and policies. A new plugin is one module with a ``new``
factory, named here.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from fakekube.api.admission import (alwaysadmit, alwaysdeny, certificatesubjectrestriction, defaultstorageclass,
                                    defaulttolerationseconds, fakekubebehaviour, limitranger, mutatingwebhook,
                                    namespacelifecycle, priority, resourcequota, serviceaccount,
                                    storageobjectinuseprotection, taintnodesbycondition, validatingadmissionpolicy,
                                    validatingwebhook)
from fakekube.api.admission.chain import Chain
from fakekube.api.admission.interfaces import Interface, PluginContext

#: kube-apiserver 1.36's ``AllOrderedPlugins`` (the same names since 1.33, bar the newest
#: feature-gated ones), with fakekube's own FakekubeBehaviour where new in-tree plugins go.
ALL_ORDERED_PLUGINS: tuple[str, ...] = (
    "AlwaysAdmit", "NamespaceAutoProvision", "NamespaceLifecycle", "NamespaceExists",
    "LimitPodHardAntiAffinityTopology", "LimitRanger", "ServiceAccount", "NodeRestriction",
    "TaintNodesByCondition", "AlwaysPullImages", "ImagePolicyWebhook", "PodSecurity", "PodNodeSelector",
    "Priority", "DefaultTolerationSeconds", "PodTolerationRestriction", "EventRateLimit",
    "ExtendedResourceToleration", "DefaultStorageClass", "StorageObjectInUseProtection", "PodGroupProtection",
    "OwnerReferencesPermissionEnforcement", "PersistentVolumeClaimResize", "RuntimeClass",
    "CertificateApproval", "CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction",
    "DefaultIngressClass", "DenyServiceExternalIPs", "PodTopologyLabels", "PodGroupWorkloadExists",
    "NodeDeclaredFeatureValidator", "JobValidation", "PodResizeValidator",
    "FakekubeBehaviour",
    # webhook, resourcequota, and deny plugins must go at the end (upstream's comment)
    "MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook", "ResourceQuota", "AlwaysDeny",
)

#: ``DefaultOffAdmissionPlugins``: everything else is on by default.
DEFAULT_OFF: frozenset[str] = frozenset((
    "AlwaysAdmit", "NamespaceAutoProvision", "NamespaceExists", "LimitPodHardAntiAffinityTopology",
    "NodeRestriction", "AlwaysPullImages", "ImagePolicyWebhook", "PodNodeSelector", "PodTolerationRestriction",
    "EventRateLimit", "ExtendedResourceToleration", "OwnerReferencesPermissionEnforcement",
    "DenyServiceExternalIPs", "AlwaysDeny",
))

#: The plugins fakekube implements, by name.
FACTORIES: dict[str, Callable[[PluginContext], Interface]] = {
    "AlwaysAdmit": alwaysadmit.new,
    "NamespaceLifecycle": namespacelifecycle.new,
    "LimitRanger": limitranger.new,
    "ServiceAccount": serviceaccount.new,
    "TaintNodesByCondition": taintnodesbycondition.new,
    "Priority": priority.new,
    "DefaultTolerationSeconds": defaulttolerationseconds.new,
    "DefaultStorageClass": defaultstorageclass.new,
    "StorageObjectInUseProtection": storageobjectinuseprotection.new,
    "CertificateSubjectRestriction": certificatesubjectrestriction.new,
    "FakekubeBehaviour": fakekubebehaviour.new,
    "MutatingAdmissionWebhook": mutatingwebhook.new,
    "ValidatingAdmissionPolicy": validatingadmissionpolicy.new,
    "ValidatingAdmissionWebhook": validatingwebhook.new,
    "ResourceQuota": resourcequota.new,
    "AlwaysDeny": alwaysdeny.new,
}

#: What runs by default: the default-on plugins, in order.
DEFAULT_PLUGINS: tuple[str, ...] = tuple(name for name in ALL_ORDERED_PLUGINS if name not in DEFAULT_OFF)

#: The plugins whose create phases never change or refuse an Event (core/v1 or
#: events.k8s.io/v1) — they act on pods, claims, nodes, CSRs or priority classes only —
#: and those that act on an Event only through what the caller of a trusted create checks
#: itself: the webhook and policy plugins (only while their objects exist), NamespaceLifecycle
#: (a missing or terminating namespace) and ResourceQuota (only while a quota exists).
#: ``APIServer.create_recorded_event`` takes its fast path only under a chain of these;
#: tests/unit/test_admission_events_quiet.py runs each on an Event create.
EVENT_QUIET_PLUGINS: frozenset[str] = frozenset((
    "AlwaysAdmit", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "Priority", "DefaultTolerationSeconds",
    "DefaultStorageClass", "StorageObjectInUseProtection", "CertificateSubjectRestriction", "FakekubeBehaviour",
    "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
    "NamespaceLifecycle", "ResourceQuota",
))


class UnknownPlugins(ValueError):
    """Upstream's ``AdmissionOptions.Validate`` errors, joined as its aggregate error prints them."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")


def check_names(enable: Iterable[str], disable: Iterable[str]) -> None:
    """Refuse names kube-apiserver does not know, and a name both enabled and disabled."""
    enable, disable = list(enable), list(disable)
    known = set(ALL_ORDERED_PLUGINS)
    problems = [f'enable-admission-plugins plugin "{name}" is unknown' for name in enable if name not in known]
    problems += [f'disable-admission-plugins plugin "{name}" is unknown' for name in disable if name not in known]
    both = sorted(set(enable) & set(disable))
    if both:
        problems.append(f"[{' '.join(both)}] in enable-admission-plugins and disable-admission-plugins overlapped")
    if problems:
        raise UnknownPlugins(problems)


def enabled_plugins(enable: Iterable[str] = (), disable: Iterable[str] = ()) -> tuple[str, ...]:
    """``enabledPluginNames``: the default-on plugins, plus ``enable``, minus ``disable``, in
    upstream's order (the order given on the command line does not matter)."""
    enable, disable = list(enable), list(disable)
    check_names(enable, disable)
    off = (DEFAULT_OFF | set(disable)) - set(enable)
    return tuple(name for name in ALL_ORDERED_PLUGINS if name not in off)


def build_chain(names: Iterable[str], context: PluginContext) -> Chain:
    """The chain of the named plugins fakekube implements, in upstream's order."""
    wanted = set(names)
    check_names(wanted, ())
    return Chain([FACTORIES[name](context) for name in ALL_ORDERED_PLUGINS if name in wanted and name in FACTORIES])
