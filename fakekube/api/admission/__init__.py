"""Admission: one plugin protocol, one ordered chain, enabled by upstream's plugin names.

kube-apiserver runs every write (and connect) through its admission chain: the mutating
phase after the object is decoded and defaulted and its managedFields are set, the
validating phase after the type's own validation, just before storage. fakekube does the
same at the same points (``fakekube.api.verbs.apiserver``), with the plugins upstream
runs by default, each in a module of its own, shaped as upstream's:

- :mod:`.interfaces`: the :class:`Interface` protocol (``handles``, ``admit``,
  ``validate``), the :class:`Handler` base, and :class:`PluginContext`, what a plugin is
  built with.
- :mod:`.attributes`: :class:`Attributes`, what a request is to admission.
- :mod:`.chain`: :class:`Chain`, the enabled plugins in order.
- :mod:`.plugins`: the registry — every name in kube-apiserver's order, the default-on
  set, ``--enable-admission-plugins``/``--disable-admission-plugins``.
- The plugins: :mod:`.namespacelifecycle`, :mod:`.limitranger`, :mod:`.serviceaccount`,
  :mod:`.priority`, :mod:`.defaulttolerationseconds`, :mod:`.defaultstorageclass`,
  :mod:`.storageobjectinuseprotection`, :mod:`.fakekubebehaviour`,
  :mod:`.mutatingwebhook`, :mod:`.validatingadmissionpolicy`, :mod:`.validatingwebhook`,
  :mod:`.resourcequota`, :mod:`.alwaysadmit`, :mod:`.alwaysdeny`; the webhooks' dispatch
  and calls in :mod:`.webhooks`, :mod:`.webhook_call`, :mod:`.webhook_https`, the
  policies' evaluation in :mod:`.policies`.

The RBAC escalation check is not here: upstream it is the RBAC types' storage, not an
admission plugin (``fakekube.api.auth.escalation``, called by the verbs for RBAC objects).
"""

from fakekube.api.admission.attributes import CONNECT, CREATE, DELETE, OPERATIONS, UPDATE, Attributes, namespace_of
from fakekube.api.admission.chain import Chain
from fakekube.api.admission.interfaces import AdmissionOptions, Handler, Interface, PluginContext
from fakekube.api.admission.plugins import (ALL_ORDERED_PLUGINS, DEFAULT_OFF, DEFAULT_PLUGINS, EVENT_QUIET_PLUGINS, FACTORIES,
                                            UnknownPlugins, build_chain, check_names, enabled_plugins)
from fakekube.api.admission.webhook_call import WebhookTransport
from fakekube.api.admission.webhooks import WebhookAdmission

__all__ = [
    "ALL_ORDERED_PLUGINS", "CONNECT", "CREATE", "DEFAULT_OFF", "DEFAULT_PLUGINS", "DELETE", "EVENT_QUIET_PLUGINS",
    "FACTORIES",
    "OPERATIONS", "UPDATE",
    "AdmissionOptions", "Attributes", "Chain", "Handler", "Interface", "PluginContext", "UnknownPlugins",
    "WebhookAdmission", "WebhookTransport",
    "build_chain", "check_names", "enabled_plugins", "namespace_of",
]
