"""ValidatingAdmissionPolicy (k8s.io/apiserver/pkg/admission/plugin/policy/validating): the
bound ValidatingAdmissionPolicies' CEL validations (:mod:`.policies`), evaluated with the
store lock released (they may be costly), before the validating webhooks.
"""

from __future__ import annotations

from typing import Callable, ContextManager

from fakekube.api.admission.attributes import DELETE, OPERATIONS, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.api.admission.policies import PolicyAdmission
from fakekube.api.admission.webhooks import WebhookAdmission


class ValidatingAdmissionPolicy(Handler):
    name = "ValidatingAdmissionPolicy"
    operations = frozenset(OPERATIONS)

    def __init__(self, policies: PolicyAdmission, webhooks: WebhookAdmission,
                 unlocked: Callable[[], ContextManager[None]]) -> None:
        self.policies = policies
        #: The AdmissionReview a policy's ``request`` variable is (its uid from the webhooks' stream).
        self.webhooks = webhooks
        self.unlocked = unlocked

    def validate(self, a: Attributes) -> None:
        if not self.policies.active():
            return
        obj = None if a.operation == DELETE else a.obj
        with self.unlocked():
            a.warnings += self.policies.validate(a, obj, self.webhooks.review(a, obj)["request"])


def new(context: PluginContext) -> ValidatingAdmissionPolicy:
    assert context.webhooks is not None, "the policy plugin needs the apiserver's dispatcher"
    return ValidatingAdmissionPolicy(PolicyAdmission(context.store, context.registry), context.webhooks,
                                     context.unlocked)
