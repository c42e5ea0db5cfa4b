"""Admission webhooks: which ones a write matches, the AdmissionReview v1 they get, and what
their answers do — upstream's ``MutatingAdmissionWebhook`` and ``ValidatingAdmissionWebhook``.

Matching, in upstream's order: the write is not on an admission configuration itself; the
rules (operations, groups, versions, resources with ``*``/``*/*``/subresources, scope); the
namespaceSelector (on the namespace's labels — a Namespace's own for its create and update);
the objectSelector (new or old object's labels); the matchConditions (CEL). A dry run
reaches only webhooks whose sideEffects are None or NoneOnDryRun (400 otherwise).

Mutating webhooks run one after the other, configurations by name and webhooks in order;
a JSONPatch answer is applied, the patched object decoded into its type as upstream decodes
it (a value of the wrong type, or nesting past the body bound, is a 500 InternalError
whatever the failurePolicy) and the type's defaults run again; a webhook with
``reinvocationPolicy: IfNeeded`` is called once more when a later webhook changed the object.
Validating webhooks run in the same order (upstream runs them in parallel; the first denial
in order wins here). A call that fails — no answer within ``timeoutSeconds`` (a deadline
for the whole call), an answer that does not decode, an undecodable patch — follows
``failurePolicy``: Ignore skips it, Fail refuses the write with upstream's 500 ``failed
calling webhook`` message. No store lock is held during a call (the apiserver releases
it), so a webhook may read the apiserver.
"""

from __future__ import annotations

import base64
import threading
from typing import Any, Callable, NamedTuple, TYPE_CHECKING

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.jsonutil import deep_copy, nests_deeper_than
from fakekube.api.registry import ResourceType
from fakekube.api.wire import decoding, patch
from fakekube.api.wire.schema import SchemaSet
from fakekube.api.admission.attributes import DELETE, Attributes
from fakekube.api.admission.webhook_call import CallFailed, WebhookTransport
from fakekube.objects.labels import compile_selector
from fakekube.random import SeededRandom
from fakekube.store import Store

if TYPE_CHECKING:
    from fakekube.api.wire import cel

Obj = dict[str, Any]

GROUP = "admissionregistration.k8s.io"
MUTATING = (GROUP, "mutatingwebhookconfigurations")
VALIDATING = (GROUP, "validatingwebhookconfigurations")
#: Kinds admission never reaches (upstream's IsExemptAdmissionConfigurationResource).
EXEMPT_KINDS = frozenset(("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                          "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                          "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"))
REVIEW_API_VERSION = "admission.k8s.io/v1"
#: The variables a match condition may use.
CONDITION_VARIABLES = ("object", "oldObject", "request", "authorizer", "authorizer.requestResource")


class Hook(NamedTuple):
    """One webhook of one configuration, as stored (defaults applied)."""

    configuration: str
    spec: Obj

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")

    @property
    def ignore_failures(self) -> bool:
        return self.spec.get("failurePolicy") == "Ignore"


class AdmissionResult:
    """What the mutating phase made of the object, and the warnings to send back."""

    __slots__ = ("obj", "warnings")

    def __init__(self, obj: Obj | None, warnings: list[str]) -> None:
        self.obj = obj
        self.warnings = warnings


class WebhookAdmission:
    """Calls the webhooks the cluster's configurations declare."""

    def __init__(self, store: Store, rng: SeededRandom, transport: WebhookTransport | None = None) -> None:
        self.store = store
        self.transport = transport or WebhookTransport()
        self._rng = rng
        self._rng_lock = threading.Lock()

    def active(self) -> bool:
        """Any webhook configuration at all (the write path's fast check)."""
        return bool(self.store.count(MUTATING) or self.store.count(VALIDATING))

    # -- matching ------------------------------------------------------------
    def hooks(self, resource: tuple[str, str]) -> list[Hook]:
        """Every webhook of the mutating or validating configurations, by configuration name."""
        configurations, _ = self.store.list(resource, "")
        ordered = sorted(configurations, key=lambda c: c["metadata"]["name"])
        return [Hook(c["metadata"]["name"], hook) for c in ordered for hook in c.get("webhooks") or []]

    def matching(self, resource: tuple[str, str], attrs: Attributes, obj: Obj | None) -> list[Hook]:
        """The webhooks of ``resource`` whose rules and selectors match the write (conditions
        are checked at call time: they see the object as earlier webhooks left it)."""
        if attrs.rt.kind in EXEMPT_KINDS and attrs.rt.group == GROUP or not attrs.rt.persisted:
            return []
        if not self.store.count(resource):
            return []
        return [hook for hook in self.hooks(resource) if self._matches(hook, attrs, obj)]

    def _matches(self, hook: Hook, attrs: Attributes, obj: Obj | None) -> bool:
        if not any(rule_matches(rule, attrs) for rule in hook.spec.get("rules") or []):
            return False
        return self._namespace_matches(hook.spec.get("namespaceSelector"), attrs, obj) and \
            object_matches(hook.spec.get("objectSelector"), obj, attrs.old)

    def _namespace_matches(self, selector: Obj | None, attrs: Attributes, obj: Obj | None) -> bool:
        """Upstream's namespace matcher: cluster-scoped objects (but Namespaces) always match."""
        is_namespace = attrs.rt.key == ("", "namespaces")
        if not attrs.namespace and not is_namespace:
            return True
        matcher = compile_selector(selector or {})
        if matcher.everything:
            return True
        if is_namespace and not attrs.subresource and attrs.operation != DELETE:
            labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
        else:
            namespace = self.store.get(("", "namespaces"), ("", attrs.namespace))
            labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
        return matcher.matches(labels)

    # -- the review ----------------------------------------------------------
    def review(self, attrs: Attributes, obj: Obj | None) -> Obj:
        """An ``admission.k8s.io/v1`` AdmissionReview of the write."""
        rt = attrs.rt
        kind = {"group": rt.group, "version": rt.version, "kind": attrs.kind}
        resource = {"group": rt.group, "version": rt.version, "resource": rt.plural}
        request: Obj = {"uid": self._uid(), "kind": kind, "resource": resource}
        if attrs.subresource:
            request["subResource"] = attrs.subresource
        request.update({"requestKind": kind, "requestResource": resource})
        if attrs.subresource:
            request["requestSubResource"] = attrs.subresource
        if attrs.name:
            request["name"] = attrs.name
        if attrs.namespace:
            request["namespace"] = attrs.namespace
        request.update({"operation": attrs.operation, "userInfo": attrs.user_info.to_json(),
                        "object": _typed(rt, obj, attrs.kind), "oldObject": _typed(rt, attrs.old),
                        "dryRun": attrs.dry_run, "options": attrs.options_object()})
        return {"kind": "AdmissionReview", "apiVersion": REVIEW_API_VERSION, "request": request}

    def _uid(self) -> str:
        with self._rng_lock:
            return self._rng.uid()

    # -- calling -------------------------------------------------------------
    def mutate(self, attrs: Attributes, obj: Obj, hooks: list[Hook], redefault: Callable[[Obj], None]) -> AdmissionResult:
        """Run the mutating ``hooks`` over ``obj`` (a private copy the caller gives up)."""
        warnings: list[str] = []
        called_if_needed: list[str] = []
        reinvoke: set[str] = set()
        try:
            for hook in hooks:
                before = obj
                obj = self._mutate_once(attrs, obj, hook, warnings, redefault)
                if obj is not before and obj != before:
                    reinvoke.update(called_if_needed)
                if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                    called_if_needed.append(hook.name)
            for hook in hooks:
                if hook.name in reinvoke:
                    obj = self._mutate_once(attrs, obj, hook, warnings, redefault)
        except ApiError as refused:  # one at a time: the first refusal ends it, with what was earned
            refused.warnings = warnings + refused.warnings
            raise
        return AdmissionResult(obj, warnings)

    def _mutate_once(self, attrs: Attributes, obj: Obj, hook: Hook, warnings: list[str],
                     redefault: Callable[[Obj], None]) -> Obj:
        operations = self._call(attrs, obj, hook, warnings, mutating=True)
        if not operations:
            return obj
        try:  # upstream: an InternalError whatever the failurePolicy
            patched = patch.apply_operations(_typed(attrs.rt, obj), operations)
        except patch.JsonPatchFailure as exc:
            raise internal(str(exc)) from None
        _check_decodable(patched)
        assert isinstance(patched, dict)
        patched.pop("apiVersion", None)
        patched.pop("kind", None)
        redefault(patched)
        return patched

    def validate(self, attrs: Attributes, obj: Obj | None, hooks: list[Hook]) -> list[str]:
        """Run every validating hook (upstream calls them all, in parallel); returns their
        warnings, or raises the first refusal in order carrying every hook's warnings."""
        warnings: list[str] = []
        refusal: ApiError | None = None
        for hook in hooks:
            try:
                self._call(attrs, obj, hook, warnings, mutating=False)
            except ApiError as refused:
                refusal = refusal or refused
        if refusal is not None:
            refusal.warnings = warnings + refusal.warnings
            raise refusal
        return warnings

    def _call(self, attrs: Attributes, obj: Obj | None, hook: Hook, warnings: list[str],
              mutating: bool) -> list[Obj] | None:
        """Call one webhook: None when it was skipped (conditions, or Ignore after a failure);
        else, once it allowed the write, the JSON patch operations of its answer (none for
        a validating webhook). A denial raises."""
        if attrs.dry_run and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        review = self.review(attrs, obj)
        try:
            if not self._conditions_match(hook, review, attrs):
                return None
            endpoint = self.transport.endpoint(hook.spec.get("clientConfig") or {}, self._service_exists(hook))
            answer = self.transport.post(endpoint, (hook.spec.get("clientConfig") or {}).get("caBundle"), review,
                                         int(hook.spec.get("timeoutSeconds") or 10))
            response = _verified(answer, review["request"]["uid"], mutating)
        except CallFailed as failure:
            return self._failed(hook, failure)
        warnings.extend(response.get("warnings") or [])  # strings: _verified decoded them
        if not response.get("allowed"):
            raise denial(hook.name, response.get("status"))
        if not response.get("patch"):
            return []
        try:
            operations = _patch_operations(response["patch"])
            if operations and response.get("patchType") != "JSONPatch":
                raise CallFailed(f'unsupported patch type "{response.get("patchType")}"')
        except CallFailed as failure:
            return self._failed(hook, failure)
        return operations

    @staticmethod
    def _failed(hook: Hook, failure: CallFailed) -> None:
        """A failed call: skipped under ``failurePolicy: Ignore``, else the write's 500."""
        if hook.ignore_failures:
            return None
        raise calling_failed(hook.name, str(failure)) from None

    def _conditions_match(self, hook: Hook, review: Obj, attrs: Attributes) -> bool:
        """Upstream's match-condition matcher: any condition false skips the webhook; else
        errors follow failurePolicy (Fail: 403 naming the errors, Ignore: skip)."""
        conditions = hook.spec.get("matchConditions") or []
        if not conditions:
            return True
        request = review["request"]
        activation = {"object": request["object"], "oldObject": request["oldObject"], "request": request}
        matches, problems = evaluate_conditions(conditions, activation, self._condition)
        if not matches or not problems:
            return matches
        if hook.ignore_failures:
            return False
        why = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        raise errors.forbidden_error(attrs.rt.group, attrs.rt.plural, attrs.name, why)

    def _condition(self, expression: str) -> cel.Program:
        from fakekube.api.wire import cel  # the CEL engine loads with the first matchCondition (cold start)
        return cel.compiled(expression, ("object", "oldObject", "request", "authorizer"))  # once per process

    def _service_exists(self, hook: Hook) -> bool:
        service = (hook.spec.get("clientConfig") or {}).get("service")
        if not isinstance(service, dict):
            return False
        key = (str(service.get("namespace") or ""), str(service.get("name") or ""))
        return self.store.get(("", "services"), key) is not None


def evaluate_conditions(conditions: list[Obj], activation: Obj,
                        compiled: Callable[[str], cel.Program]) -> tuple[bool, list[str]]:
    """Every condition evaluated: (False, …) when one is false, else (True, the errors)."""
    from fakekube.api.wire import cel  # the CEL engine loads with the first matchCondition (cold start)
    problems: list[str] = []
    for condition in conditions:
        expression = str(condition.get("expression") or "")
        try:
            value = compiled(expression).evaluate(activation)
        except cel.CelError as exc:
            problems.append(f"expression '{expression}' resulted in error: {exc}")
            continue
        if value is False:
            return False, []
        if value is not True:
            problems.append(f"expression '{expression}' resulted in error: no such overload")
    return True, problems


def rule_matches(rule: Obj, attrs: Attributes) -> bool:
    """Upstream's rules matcher: scope, operation, group, version, then resource/subresource."""
    rt = attrs.rt
    return (_scope_matches(rule.get("scope"), attrs) and _any(rule.get("operations"), attrs.operation)
            and _any(rule.get("apiGroups"), rt.group) and _any(rule.get("apiVersions"), rt.version)
            and any(_resource_matches(str(r), rt.plural, attrs.subresource) for r in rule.get("resources") or []))


def _any(values: Any, wanted: str) -> bool:
    return any(v == "*" or v == wanted for v in values or [])


def _scope_matches(scope: Any, attrs: Attributes) -> bool:
    """``Namespaced`` never matches a Namespace object; ``Cluster`` always does."""
    is_namespace = attrs.rt.key == ("", "namespaces")
    if scope in (None, "*"):
        return True
    if scope == "Namespaced":
        return not is_namespace and bool(attrs.namespace)
    if scope == "Cluster":
        return is_namespace or not attrs.namespace
    return False


def _resource_matches(rule_resource: str, resource: str, subresource: str) -> bool:
    """``pods`` (no subresource), ``pods/status``, ``*`` (every resource, no subresource),
    ``pods/*``, ``*/status``, ``*/*``."""
    res, _, sub = rule_resource.partition("/")
    return (res == "*" or res == resource) and (sub == "*" or sub == subresource)


def object_matches(selector: Obj | None, obj: Obj | None, old: Obj | None) -> bool:
    """The objectSelector matches the new or the old object's labels."""
    matcher = compile_selector(selector or {})
    if matcher.everything:
        return True
    return any(candidate is not None and matcher.matches((candidate.get("metadata") or {}).get("labels") or {})
               for candidate in (obj, old))


def calling_failed(webhook: str, why: str) -> ApiError:
    """``apierrors.NewInternalError(ErrCallingWebhook)``."""
    return internal(f'failed calling webhook "{webhook}": {why}')


def internal(message: str) -> ApiError:
    """``apierrors.NewInternalError``: a 500 whose one cause repeats the message."""
    return ApiError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})


def _typed(rt: ResourceType, obj: Obj | None, kind: str = "") -> Obj | None:
    if obj is None:
        return None
    return {"apiVersion": rt.api_version, "kind": kind or rt.kind, **deep_copy(obj)}


def _verified(answer: Obj, uid: str, mutating: bool) -> Obj:
    """Upstream's ``VerifyAdmissionResponse`` for v1 reviews, after the answer decoded into
    an AdmissionReview (:func:`_decode_problem`), in its order and words."""
    response = answer.get("response")
    problem = _decode_problem(response) if isinstance(response, dict) else None
    if problem is not None:
        raise CallFailed(f"failed to call webhook: {problem}")
    if not isinstance(response, dict):
        raise _invalid("webhook response was absent")
    if response.get("uid") != uid:
        raise _invalid(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    api_version = str(answer.get("apiVersion") or "")
    if api_version != REVIEW_API_VERSION or answer.get("kind") != "AdmissionReview":
        shown = api_version if "/" in api_version else f"/{api_version}"  # Go's GroupVersionKind.String
        raise _invalid(f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
                       f"got {shown}, Kind={answer.get('kind') or ''}")
    has_patch, patch_type = bool(response.get("patch")), response.get("patchType")
    if not mutating:
        if has_patch:
            raise _invalid("validating webhook may not return response.patch")
        if patch_type is not None:
            raise _invalid("validating webhook may not return response.patchType")
        return response
    if has_patch and patch_type is None:
        raise _invalid("webhook returned response.patch but not response.patchType")
    if not has_patch and patch_type is not None:
        raise _invalid("webhook returned response.patchType but not response.patch")
    if patch_type == "":
        raise _invalid('webhook returned invalid response.patchType of ""')
    return response


def _invalid(why: str) -> CallFailed:
    return CallFailed(f"received invalid webhook response: {why}")


def _decode_problem(response: Obj) -> str | None:
    """Go's first error decoding the response fields fakekube reads into the typed
    AdmissionResponse (``allowed`` a bool, ``patch`` base64 bytes, ``warnings`` strings), in
    the answer's order; None when they decode."""
    for key, value in response.items():
        if value is None:
            continue
        if key == "allowed" and not isinstance(value, bool):
            return _mistyped(value, "allowed", "bool")
        if key == "patchType" and not isinstance(value, str):
            return _mistyped(value, "patchType", "v1.PatchType")
        if key == "patch":
            if not isinstance(value, str):
                return _mistyped(value, "patch", "[]uint8")
            problem = decoding.base64_problem(value)
            if problem is not None:
                return problem
        if key == "warnings":
            if not isinstance(value, list):
                return _mistyped(value, "warnings", "[]string")
            wrong = next((w for w in value if not isinstance(w, str)), None)
            if wrong is not None:
                return _mistyped(wrong, "warnings", "string")
    return None


def _mistyped(value: Any, field: str, go_type: str) -> str:
    return (f"json: cannot unmarshal {decoding.json_kind(value)} into Go struct field "
            f"AdmissionResponse.response.{field} of type {go_type}")


def _patch_operations(encoded: str) -> list[Obj]:
    """``jsonpatch.DecodePatch`` of an answer's patch (base64 checked when decoded); JSON
    nested past the body bound or not a list of operations is a failed call."""
    raw = base64.b64decode(encoded.replace("\r", "").replace("\n", ""))
    try:
        operations = decoding.parse_json(raw)
    except decoding.SyntaxFailure as exc:
        raise CallFailed(f"received undecodable patch in webhook response: {exc}") from None
    if operations is None:  # Go decodes null into an empty patch
        return []
    problem = patch.operations_problem(operations)
    if problem is not None:
        raise CallFailed(f"received undecodable patch in webhook response: {problem}")
    return list(operations)


def _check_decodable(patched: Any) -> None:
    """Upstream decodes the patched JSON back into the type: what its serializer refuses
    before the typed step (nesting past the body bound, not an object, a mistyped
    apiVersion or kind) is an InternalError in its words."""
    why: str | None
    if isinstance(patched, (dict, list)) and nests_deeper_than(patched):
        why = decoding.too_deep_value_error(patched)
    else:
        why = decoding.interpret_problem(patched)
    if why is not None:
        raise internal(f"couldn't get version/kind; json parse error: {why}")


def decode_patched(rt: ResourceType, patched: Obj, schemas: SchemaSet) -> None:
    """Decode a webhook's patched object into the type's Go struct, in place, as upstream
    does after each patch: unknown fields go, nulls become zero values, and a value of the
    wrong type is an InternalError (``json: cannot unmarshal number into Go struct field
    ConfigMap.data of type string``) whatever the failurePolicy. Custom resources decode
    into unstructured objects, which take anything (their schema prunes and validates)."""
    problem, _ = decoding.decode_and_find_unknown(patched, schemas, rt.group, rt.version, rt.kind)
    if problem:
        raise internal(problem)


def check_request_namespace(rt: ResourceType, obj: Obj, request_namespace: str) -> None:
    """``EnsureObjectNamespaceMatchesRequestNamespace`` after mutating admission: a webhook
    may not move a namespaced object to another namespace (400); a namespace it removed is
    the request's again, and one it gave a cluster-scoped object is dropped."""
    meta = obj.setdefault("metadata", {})
    expected = request_namespace if rt.namespaced else ""
    found = meta.get("namespace") or ""
    if found == expected:
        return
    if not expected:
        meta.pop("namespace", None)
    elif not found:
        meta["namespace"] = expected
    else:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")


def denial(webhook: str, status: Any) -> ApiError:
    """A webhook's refusal (upstream's ``ToStatusErr``): its status, at least a 400, the
    message prefixed with who denied it."""
    status = status if isinstance(status, dict) else {}
    code = status.get("code") if isinstance(status.get("code"), int) else 0
    denied_by = f'admission webhook "{webhook}" denied the request'
    message, reason = str(status.get("message") or ""), str(status.get("reason") or "")
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    details = status.get("details")  # sent as the webhook sent it: present (maybe empty) or not
    return ApiError(max(code, 400), reason, text, dict(details) if isinstance(details, dict) else None)
