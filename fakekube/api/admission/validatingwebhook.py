"""ValidatingAdmissionWebhook (k8s.io/apiserver/pkg/admission/plugin/webhook/validating): the
ValidatingWebhookConfigurations' webhooks, called through the shared dispatcher
(:mod:`.webhooks`) with the whole store lock released (the write path re-checks its object
afterwards). Upstream calls them in parallel; here every one is called in order, and the
first refusal in that order wins, carrying all their warnings.
"""

from __future__ import annotations

from typing import Callable, ContextManager

from fakekube.api.admission.attributes import DELETE, OPERATIONS, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.api.admission.webhooks import VALIDATING, WebhookAdmission


class ValidatingAdmissionWebhook(Handler):
    name = "ValidatingAdmissionWebhook"
    operations = frozenset(OPERATIONS)

    def __init__(self, webhooks: WebhookAdmission, unlocked: Callable[[], ContextManager[None]]) -> None:
        self.webhooks = webhooks
        self.unlocked = unlocked

    def validate(self, a: Attributes) -> None:
        obj = None if a.operation == DELETE else a.obj
        hooks = self.webhooks.matching(VALIDATING, a, obj)
        if not hooks:
            return
        with self.unlocked():
            a.warnings += self.webhooks.validate(a, obj, hooks)


def new(context: PluginContext) -> ValidatingAdmissionWebhook:
    assert context.webhooks is not None, "the webhook plugins need the apiserver's dispatcher"
    return ValidatingAdmissionWebhook(context.webhooks, context.unlocked)
