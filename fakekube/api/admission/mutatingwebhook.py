"""MutatingAdmissionWebhook (k8s.io/apiserver/pkg/admission/plugin/webhook/mutating): the
MutatingWebhookConfigurations' webhooks, called through the shared dispatcher
(:mod:`.webhooks`) with the whole store lock released, so a webhook may read (or write)
the apiserver and no other writer waits on it; the write path checks afterwards whether
its object changed meanwhile, and starts again if so.

A CONNECT (exec, attach, port-forward, proxy) reaches the webhooks that match it with its
options as the object; what they patch into it is dropped (the connection's options are
already read).
"""

from __future__ import annotations

from typing import Any, Callable, ContextManager

from fakekube.api.admission.attributes import CONNECT, DELETE, OPERATIONS, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.api.admission.webhooks import MUTATING, WebhookAdmission, check_request_namespace
from fakekube.api.registry import ResourceType

Obj = dict[str, Any]


class MutatingAdmissionWebhook(Handler):
    name = "MutatingAdmissionWebhook"
    operations = frozenset(OPERATIONS)

    def __init__(self, webhooks: WebhookAdmission, unlocked: Callable[[], ContextManager[None]],
                 after_patch: Callable[[ResourceType, Obj], None]) -> None:
        self.webhooks = webhooks
        self.unlocked = unlocked
        self.after_patch = after_patch

    def admit(self, a: Attributes) -> None:
        hooks = self.webhooks.matching(MUTATING, a, a.obj)
        if not hooks:
            return
        if a.operation in (DELETE, CONNECT):  # the object is not theirs to change
            with self.unlocked():
                result = self.webhooks.mutate(a, (a.obj or {}) if a.operation == CONNECT else {}, hooks, lambda o: None)
            a.warnings += result.warnings
            return
        assert a.obj is not None
        shown = a.obj
        with self.unlocked():
            result = self.webhooks.mutate(a, shown, hooks, lambda o: self.after_patch(a.rt, o))
        a.warnings += result.warnings
        mutated = result.obj if result.obj is not None else shown
        check_request_namespace(a.rt, mutated, a.namespace)
        a.obj = mutated


def new(context: PluginContext) -> MutatingAdmissionWebhook:
    assert context.webhooks is not None, "the webhook plugins need the apiserver's dispatcher"
    return MutatingAdmissionWebhook(context.webhooks, context.unlocked, context.after_patch)
