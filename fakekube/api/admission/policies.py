"""ValidatingAdmissionPolicies: CEL validations bound to writes by their bindings —
upstream's ``ValidatingAdmissionPolicy`` admission plugin (plugin/policy/validating).

For each binding (by name) whose policy exists: the policy's ``matchConstraints`` and the
binding's ``matchResources`` must both match the write (rules with resourceNames and
exclusions, namespace and object selectors), then the policy's ``matchConditions``; its
params come from the binding's ``paramRef`` (one object by name, or each object a selector
picks; none found: ``parameterNotFoundAction``). Variables are evaluated in order; each
validation that is not true is a violation, acted on by the binding's ``validationActions``:
Deny refuses the write (upstream's message and the validation's reason, Invalid by default),
Warn adds a ``Warning``, Audit is dropped (fakekube has no audit log). An expression that
fails follows the policy's ``failurePolicy``.

Cost, as upstream bounds it: each expression run has the per-call limit (past it: the
expression ``resulted in error: operation cancelled: actual cost limit exceeded``); the
variables, validations and messages of one binding's evaluation (per params object)
share a budget of 10,000,000 and its matchConditions one of 2,500,000; a run that would
overdraw it fails the evaluation with ``validation failed due to running out of cost
budget, no further validation rules will be run`` (then ``failurePolicy`` decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from fakekube.api.machinery.errors import ApiError
from fakekube.api.registry import Registry
from fakekube.api.admission.attributes import DELETE, Attributes
from fakekube.api.admission.webhooks import EXEMPT_KINDS, GROUP, evaluate_conditions, object_matches, rule_matches
from fakekube.objects.labels import compile_selector
from fakekube.store import Store

if TYPE_CHECKING:
    from fakekube.api.wire import cel

Obj = dict[str, Any]

POLICIES = (GROUP, "validatingadmissionpolicies")
BINDINGS = (GROUP, "validatingadmissionpolicybindings")
#: The variables a policy's expressions may use (``authorizer`` is declared, never bound).
VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "authorizer")
REASON_CODES = {"Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}


class Decision:
    """One violation (or failure) of a policy for one write."""

    __slots__ = ("policy", "binding", "message", "reason")

    def __init__(self, policy: str, binding: str, message: str, reason: str = "") -> None:
        self.policy = policy
        self.binding = binding
        self.message = message
        self.reason = reason


class PolicyOutcome:
    """What the bound policies made of one write: denials (the first one answers) and warnings."""

    __slots__ = ("denials", "warnings")

    def __init__(self, denials: list[Decision] | None = None, warnings: list[str] | None = None) -> None:
        self.denials: list[Decision] = [] if denials is None else denials
        self.warnings: list[str] = [] if warnings is None else warnings


class PolicyAdmission:
    """Evaluates the cluster's ValidatingAdmissionPolicies for a write."""

    def __init__(self, store: Store, registry: Callable[[], Registry]) -> None:
        self.store = store
        self._registry = registry

    def active(self) -> bool:
        return bool(self.store.count(BINDINGS))

    def validate(self, attrs: Attributes, obj: Obj | None, request: Obj) -> list[str]:
        """Run every bound policy; returns warnings, raises upstream's 4xx on a denial."""
        if attrs.rt.group == GROUP and attrs.rt.kind in EXEMPT_KINDS or not attrs.rt.persisted:
            return []
        outcome = PolicyOutcome()
        bindings, _ = self.store.list(BINDINGS, "")
        for binding in sorted(bindings, key=lambda b: b["metadata"]["name"]):
            spec = binding.get("spec") or {}
            policy = self.store.get(POLICIES, ("", str(spec.get("policyName") or "")))
            if policy is not None:
                self._apply(policy, binding, attrs, obj, request, outcome)
        if outcome.denials:
            raise denial(attrs, obj, outcome.denials[0])
        return outcome.warnings

    # -- one binding ---------------------------------------------------------
    def _apply(self, policy: Obj, binding: Obj, attrs: Attributes, obj: Obj | None, request: Obj,
               outcome: PolicyOutcome) -> None:
        spec, binding_spec = policy.get("spec") or {}, binding.get("spec") or {}
        if not self._resources_match(spec.get("matchConstraints"), attrs, obj):
            return
        if binding_spec.get("matchResources") and not self._resources_match(binding_spec["matchResources"], attrs, obj):
            return
        names = (policy["metadata"]["name"], binding["metadata"]["name"])
        fail = spec.get("failurePolicy", "Fail") != "Ignore"
        actions = binding_spec.get("validationActions") or []
        base = {"object": _typed(attrs, obj), "oldObject": _typed(attrs, attrs.old), "request": request,
                "namespaceObject": self._namespace_object(attrs)}
        try:
            params_list = self._params(spec, binding_spec, attrs)
        except _Failure as failure:
            if fail:
                outcome.denials.append(Decision(*names, str(failure)))
            return
        from fakekube.api.wire import cel  # see _program
        for params in params_list:
            activation = dict(base, params=params)
            budget = cel.CostBudget(cel.RUNTIME_COST_BUDGET)
            try:
                conditions_budget = cel.CostBudget(cel.MATCH_CONDITIONS_COST_BUDGET)
                if not self._conditions_hold(spec.get("matchConditions") or [], activation, conditions_budget):
                    continue
                activation["variables"] = self._variables(spec.get("variables") or [], activation, budget)
                violations = self._violations(spec.get("validations") or [], activation, budget)
            except _Failure as failure:
                if fail:
                    outcome.denials.append(Decision(*names, str(failure)))
                continue
            for message, reason in violations:
                decision = Decision(*names, message, reason)
                if "Deny" in actions:
                    outcome.denials.append(decision)
                if "Warn" in actions:
                    outcome.warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{names[0]}' "
                                            f"with binding '{names[1]}': {message}")

    def _resources_match(self, match: Any, attrs: Attributes, obj: Obj | None) -> bool:
        """``MatchResources``: included by a rule (and its resourceNames; no rules: every
        resource), not excluded, selectors."""
        match = match if isinstance(match, dict) else {}
        rules = match.get("resourceRules") or []
        if rules and not any(_named_rule_matches(rule, attrs) for rule in rules):
            return False
        if any(_named_rule_matches(rule, attrs) for rule in match.get("excludeResourceRules") or []):
            return False
        return self._namespace_matches(match.get("namespaceSelector"), attrs, obj) and \
            object_matches(match.get("objectSelector"), obj, attrs.old)

    def _namespace_matches(self, selector: Obj | None, attrs: Attributes, obj: Obj | None) -> bool:
        is_namespace = attrs.rt.key == ("", "namespaces")
        matcher = compile_selector(selector or {})
        if matcher.everything or (not attrs.namespace and not is_namespace):
            return True
        if is_namespace and attrs.operation != DELETE:
            labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
        else:
            labels = ((self._namespace_object(attrs) or {}).get("metadata") or {}).get("labels") or {}
        return matcher.matches(labels)

    def _namespace_object(self, attrs: Attributes) -> Obj | None:
        if not attrs.namespace or attrs.rt.key == ("", "namespaces"):
            return None
        namespace = self.store.get(("", "namespaces"), ("", attrs.namespace))
        return None if namespace is None else {"apiVersion": "v1", "kind": "Namespace", **namespace}

    def _params(self, spec: Obj, binding_spec: Obj, attrs: Attributes) -> list[Obj | None]:
        """The params each evaluation gets: [None] without a paramKind."""
        kind, ref = spec.get("paramKind"), binding_spec.get("paramRef")
        if not isinstance(kind, dict):
            return [None]
        if not isinstance(ref, dict):
            raise _Failure("failed to configure binding: paramRef is required when paramKind is set")
        rt = self._registry().by_kind(str(kind.get("apiVersion") or ""), str(kind.get("kind") or ""))
        if rt is None:
            raise _Failure(f"failed to configure policy: failed to find resource referenced by paramKind: "
                           f"'{kind.get('apiVersion', '')}, Kind={kind.get('kind', '')}'")
        namespace = str(ref.get("namespace") or (attrs.namespace if rt.namespaced else ""))
        if ref.get("name"):
            found = self.store.get(rt.key, (namespace if rt.namespaced else "", str(ref["name"])))
            params = [] if found is None else [found]
        else:
            matcher = compile_selector(ref.get("selector") or {})
            listed, _ = self.store.list(rt.key, namespace if rt.namespaced else "")
            params = [p for p in listed if matcher.matches((p.get("metadata") or {}).get("labels") or {})]
        if not params:
            if ref.get("parameterNotFoundAction") == "Allow":
                return []
            raise _Failure("failed to configure binding: no params found for policy binding with `Deny` "
                           "parameterNotFoundAction")
        return [{"apiVersion": rt.api_version, "kind": rt.kind, **p} for p in params]

    # -- CEL -----------------------------------------------------------------
    def _program(self, expression: str) -> cel.Program:
        from fakekube.api.wire import cel  # the CEL engine loads with the first policy (cold start)
        try:
            return cel.compiled(expression, VARIABLES)  # once per process (not the cluster's state)
        except cel.CelError as exc:
            raise _Failure(f"compilation failed: {exc}") from None

    def _evaluate(self, expression: str, activation: Obj, budget: cel.CostBudget) -> Any:
        from fakekube.api.wire import cel  # see _program
        try:
            return self._program(expression).evaluate(activation, budget)
        except cel.BudgetExhausted as exc:
            raise _OutOfBudget(str(exc)) from None
        except cel.EvaluationError as exc:
            raise _Failure(f"expression '{expression}' resulted in error: {exc}") from None

    def _conditions_hold(self, conditions: list[Obj], activation: Obj, budget: cel.CostBudget) -> bool:
        """Any condition false: no match; else errors are a failure (failurePolicy decides)."""
        matches, problems = evaluate_conditions(conditions, activation,
                                                lambda expression: self._program(expression).with_budget(budget))
        if matches and problems:
            raise _Failure(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
        return matches

    def _variables(self, variables: list[Obj], activation: Obj, budget: cel.CostBudget) -> Obj:
        """Each variable in order (later ones see earlier ones); one that fails is left out,
        so only an expression that uses it fails (running out of budget fails them all)."""
        values: Obj = {}
        for variable in variables:
            try:
                values[str(variable.get("name"))] = self._evaluate(str(variable.get("expression") or ""),
                                                                   dict(activation, variables=values), budget)
            except _OutOfBudget:
                raise
            except _Failure:
                continue
        return values

    def _violations(self, validations: list[Obj], activation: Obj, budget: cel.CostBudget) -> list[tuple[str, str]]:
        found = []
        for validation in validations:
            expression = str(validation.get("expression") or "")
            result = self._evaluate(expression, activation, budget)
            if result is True:
                continue
            if result is not False:
                raise _Failure(f"expression '{expression}' resulted in error: expected a boolean, got {result!r}")
            found.append((self._message(validation, activation, budget), str(validation.get("reason") or "")))
        return found

    def _message(self, validation: Obj, activation: Obj, budget: cel.CostBudget) -> str:
        """messageExpression's string if usable, else message, else ``failed expression: …``."""
        if validation.get("messageExpression"):
            try:
                text = self._evaluate(str(validation["messageExpression"]), activation, budget)
            except _OutOfBudget as exc:
                raise _Failure(f"failed messageExpression: {exc}") from None
            except _Failure:
                text = None
            if isinstance(text, str) and text.strip() and "\n" not in text.strip():
                return text.strip()
        if str(validation.get("message") or "").strip():
            return str(validation["message"]).strip()
        return f"failed expression: {str(validation.get('expression') or '').strip()}"


class _Failure(Exception):
    """An expression or configuration that failed; the policy's failurePolicy decides."""


class _OutOfBudget(_Failure):
    """The evaluation's cost budget is spent: nothing more of it runs."""


def _named_rule_matches(rule: Obj, attrs: Attributes) -> bool:
    names = rule.get("resourceNames") or []
    return rule_matches(rule, attrs) and (not names or attrs.name in names)


def _typed(attrs: Attributes, obj: Obj | None) -> Obj | None:
    if obj is None:
        return None
    return {"apiVersion": attrs.rt.api_version, "kind": attrs.kind, **obj}


def denial(attrs: Attributes, obj: Obj | None, decision: Decision) -> ApiError:
    """Upstream's refusal: ``admission.NewForbidden`` worded, with the validation's reason
    (Invalid by default) and its code, and the message repeated as a cause."""
    message = (f"ValidatingAdmissionPolicy '{decision.policy}' with binding '{decision.binding}' "
               f"denied request: {decision.message}")
    meta = (obj or {}).get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    rt = attrs.rt
    resource = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
    reason = decision.reason or "Invalid"
    details: Obj = {"name": name, "group": rt.group, "kind": rt.plural, "causes": [{"message": message}]}
    return ApiError(REASON_CODES.get(reason, 500), reason, f'{resource} "{name}" is forbidden: {message}', details)
