"""admissionregistration.k8s.io/v1: webhook configurations, ValidatingAdmissionPolicies and (1.36)
MutatingAdmissionPolicies.

All six types are cluster-scoped and in the ``api-extensions`` category. Defaults are
upstream's ``SetDefaults_*`` (a webhook: failurePolicy Fail, matchPolicy Equivalent, empty
selectors, timeoutSeconds 10, reinvocationPolicy Never; a rule's scope ``*``; a service's
port 443; a policy: failurePolicy Fail, its match resources like a webhook's; a paramRef:
parameterNotFoundAction Deny), validation is upstream's ``ValidateValidatingWebhookConfiguration``
and friends with their messages; CEL expressions must compile (no type checking, see
docs/api.md "Admission webhooks and policies"). The apiserver calls what these declare:
``fakekube.api.admission.webhooks`` and ``fakekube.api.admission.policies``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import (
    go_strings,
    is_dns1035_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_path_segment_name,
    name_is_dns_subdomain,
    validate_label_selector,
)
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table.admission import (
    MUTATING_POLICY_BINDING_TABLE,
    MUTATING_POLICY_TABLE,
    POLICY_BINDING_TABLE,
    POLICY_TABLE,
    WEBHOOK_TABLE,
)

Obj = dict[str, Any]

GROUP = "admissionregistration.k8s.io"
CATEGORIES = ("api-extensions",)

FAIL, IGNORE = "Fail", "Ignore"
FAILURE_POLICIES = [FAIL, IGNORE]
MATCH_POLICIES = ["Equivalent", "Exact"]
NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
REINVOCATION_POLICIES = ["IfNeeded", "Never"]
SCOPES = ["*", "Cluster", "Namespaced"]
#: The AdmissionReview versions this apiserver (and the release before it) understands.
REVIEW_VERSIONS = ["v1", "v1beta1"]
VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"]
POLICY_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
#: What a webhook's match condition may reference, and a policy's expressions (``params``
#: only with a paramKind; match conditions see no ``variables``).
WEBHOOK_CONDITION_VARIABLES = ("object", "oldObject", "request", "authorizer")
POLICY_VARIABLES = ("object", "oldObject", "request", "namespaceObject", "authorizer", "variables")
DEFAULT_TIMEOUT_S = 10
DEFAULT_SERVICE_PORT = 443
URL_FORM = "; desired format: https://host[/path]"


# -- defaults ------------------------------------------------------------------
def default_webhook(hook: Obj, mutating: bool) -> None:
    """``SetDefaults_{Validating,Mutating}Webhook`` with its rules' and service's defaults."""
    hook.setdefault("failurePolicy", FAIL)
    hook.setdefault("matchPolicy", "Equivalent")
    if hook.get("namespaceSelector") is None:
        hook["namespaceSelector"] = {}
    if hook.get("objectSelector") is None:
        hook["objectSelector"] = {}
    if hook.get("timeoutSeconds") is None:
        hook["timeoutSeconds"] = DEFAULT_TIMEOUT_S
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    for rule in hook.get("rules") or []:
        if isinstance(rule, dict) and rule.get("scope") is None:
            rule["scope"] = "*"
    service = (hook.get("clientConfig") or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = DEFAULT_SERVICE_PORT


def default_match_resources(match: Obj) -> None:
    """``SetDefaults_MatchResources`` and its rules' scope."""
    match.setdefault("matchPolicy", "Equivalent")
    if match.get("namespaceSelector") is None:
        match["namespaceSelector"] = {}
    if match.get("objectSelector") is None:
        match["objectSelector"] = {}
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or []:
            if isinstance(rule, dict) and rule.get("scope") is None:
                rule["scope"] = "*"


# -- validation: rules -----------------------------------------------------------
def _has_wildcard(values: list[str]) -> bool:
    return "*" in values


def _resources_errors(resources: list[str], path: str) -> list[FieldError]:
    """``validateResources``: ``x/*``, ``*/x``, ``*/*`` and ``*`` exclude what they cover."""
    errs: list[FieldError] = []
    if not resources:
        errs.append(errors.required(path))
    with_wild_sub: set[str] = set()
    sub_with_wild_res: set[str] = set()
    double = single = plain = False
    for i, res_sub in enumerate(resources):
        if res_sub == "":
            errs.append(errors.required(f"{path}[{i}]"))
            continue
        double = double or res_sub == "*/*"
        single = single or res_sub == "*"
        if "/" not in res_sub:
            plain = res_sub != "*"
            continue
        res, sub = res_sub.split("/", 1)
        if res in with_wild_sub:
            errs.append(errors.invalid(f"{path}[{i}]", res_sub, f"if '{res}/*' is present, must not specify {res_sub}"))
        if sub in sub_with_wild_res:
            errs.append(errors.invalid(f"{path}[{i}]", res_sub, f"if '*/{sub}' is present, must not specify {res_sub}"))
        if sub == "*":
            with_wild_sub.add(res)
        if res == "*":
            sub_with_wild_res.add(sub)
    if len(resources) > 1 and double:
        errs.append(errors.invalid(path, go_strings(resources), "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(errors.invalid(path, go_strings(resources),
                                   "if '*' is present, must not specify other resources without subresources"))
    return errs


def _dict(value: Any) -> Obj:
    """``value`` if it is an object, else an empty one (validation reads malformed bodies)."""
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def rule_errors(rule: Obj, path: str) -> list[FieldError]:
    """``validateRuleWithOperations`` (subresources allowed)."""
    errs: list[FieldError] = []
    operations = _strings(rule.get("operations"))
    if not operations:
        errs.append(errors.required(f"{path}.operations"))
    if len(operations) > 1 and _has_wildcard(operations):
        errs.append(errors.invalid(f"{path}.operations", go_strings(operations),
                                   "if '*' is present, must not specify other operations"))
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errs.append(errors.not_supported(f"{path}.operations[{i}]", operation, OPERATIONS))
    groups, versions = _strings(rule.get("apiGroups")), _strings(rule.get("apiVersions"))
    if not groups:
        errs.append(errors.required(f"{path}.apiGroups"))
    if len(groups) > 1 and _has_wildcard(groups):
        errs.append(errors.invalid(f"{path}.apiGroups", go_strings(groups),
                                   "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(errors.required(f"{path}.apiVersions"))
    if len(versions) > 1 and _has_wildcard(versions):
        errs.append(errors.invalid(f"{path}.apiVersions", go_strings(versions),
                                   "if '*' is present, must not specify other API versions"))
    errs += [errors.required(f"{path}.apiVersions[{i}]") for i, v in enumerate(versions) if v == ""]
    errs += _resources_errors(_strings(rule.get("resources")), f"{path}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(errors.not_supported(f"{path}.scope", scope, SCOPES))
    return errs


# -- validation: webhooks ----------------------------------------------------------
def fully_qualified_name_errors(name: str, path: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three labels."""
    if not name:
        return [errors.required(path)]
    problems = is_dns1123_subdomain(name)
    if problems:
        return [errors.invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [errors.invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def url_errors(url: str, path: str) -> list[FieldError]:
    """``ValidateWebhookURL`` with https forced."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [errors.required(path, f"url must be a valid URL: {exc}{URL_FORM}")]
    errs: list[FieldError] = []
    if parts.scheme != "https":
        errs.append(errors.invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + URL_FORM))
    host = parts.netloc.rsplit("@", 1)[-1]
    if not host:
        errs.append(errors.invalid(path, host, "host must be provided" + URL_FORM))
    if "@" in parts.netloc:
        errs.append(errors.invalid(path, parts.netloc.rsplit("@", 1)[0], "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(errors.invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(errors.invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def service_errors(service: Obj, path: str) -> list[FieldError]:
    """``ValidateWebhookService``: name, namespace, port, and a path of DNS-subdomain segments."""
    errs: list[FieldError] = []
    if not service.get("name"):
        errs.append(errors.required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        errs.append(errors.required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", DEFAULT_SERVICE_PORT)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(errors.invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if url_path is None or url_path in ("", "/"):
        return errs
    if url_path == "//":
        return errs + [errors.invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(errors.invalid(f"{path}.path", url_path, "must start with a '/'"))
    to_check = url_path[1:]
    if to_check.endswith("/"):
        to_check = to_check[:-1]
    for i, step in enumerate(to_check.split("/")):
        if not step:
            errs.append(errors.invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [errors.invalid(f"{path}.path", url_path, f"segment[{i}]: {m}") for m in is_dns1123_subdomain(step)]
    return errs


def cel_errors(expression: str, path: str, variables: tuple[str, ...]) -> list[FieldError]:
    """An expression that does not compile, as upstream's ``convertCELErrorToValidationError``.
    Syntax fakekube's CEL engine lacks (``.?x``) is not the expression's fault: accepted here,
    it fails when evaluated (docs/api.md "CEL")."""
    from fakekube.api.wire import cel  # the CEL engine loads with the first policy (cold start)
    try:
        cel.compile(expression, variables)
    except cel.CelError as exc:
        if "unsupported syntax" in str(exc):
            return []
        return [errors.invalid(path, expression, f"compilation failed: {exc}")]
    return []


def match_condition_errors(conditions: Any, path: str,
                           variables: tuple[str, ...] = WEBHOOK_CONDITION_VARIABLES) -> list[FieldError]:
    """``validateMatchConditions``: at most 64, named, with an expression that compiles."""
    items = conditions if isinstance(conditions, list) else []
    errs: list[FieldError] = []
    if len(items) > 64:
        errs.append(errors.FieldError(errors.FIELD_TOO_MANY, path, "must have at most 64 items", len(items)))
    names: set[str] = set()
    for i, condition in enumerate(items):
        condition = _dict(condition)
        expression = str(condition.get("expression") or "").strip()
        if not expression:
            errs.append(errors.required(f"{path}[{i}].expression"))
        else:
            errs += cel_errors(expression, f"{path}[{i}].expression", variables)
        name = str(condition.get("name") or "")
        if not name:
            errs.append(errors.required(f"{path}[{i}].name"))
        else:
            errs += [errors.invalid(f"{path}[{i}].name", name, m) for m in is_qualified_name(name)]
            if name in names:
                errs.append(errors.duplicate(f"{path}[{i}].name", name))
            names.add(name)
    return errs


def _review_version_errors(versions: list[str], path: str) -> list[FieldError]:
    if not versions:
        return [errors.required(path, f"must specify one of {', '.join(REVIEW_VERSIONS)}")]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(errors.invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [errors.invalid(f"{path}[{i}]", version, m) for m in is_dns1035_label(version)]
    if not any(v in REVIEW_VERSIONS for v in versions):
        errs.append(errors.invalid(path, go_strings(versions), f"must include at least one of {', '.join(REVIEW_VERSIONS)}"))
    return errs


def webhook_errors(hook: Obj, path: str, mutating: bool) -> list[FieldError]:
    """``validate{Validating,Mutating}Webhook``, in upstream's order."""
    errs = fully_qualified_name_errors(str(hook.get("name") or ""), f"{path}.name")
    for i, rule in enumerate(hook.get("rules") or []):
        errs += rule_errors(_dict(rule), f"{path}.rules[{i}]")
    if hook.get("failurePolicy") not in FAILURE_POLICIES:
        errs.append(errors.not_supported(f"{path}.failurePolicy", hook.get("failurePolicy"), FAILURE_POLICIES))
    if hook.get("matchPolicy") not in MATCH_POLICIES:
        errs.append(errors.not_supported(f"{path}.matchPolicy", hook.get("matchPolicy"), MATCH_POLICIES))
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(errors.required(f"{path}.sideEffects", f"must specify one of {', '.join(NO_SIDE_EFFECTS)}"))
    elif side_effects not in NO_SIDE_EFFECTS:
        errs.append(errors.not_supported(f"{path}.sideEffects", side_effects, NO_SIDE_EFFECTS))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        errs.append(errors.invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"))
    errs += validate_label_selector(hook.get("namespaceSelector"), f"{path}.namespaceSelector")
    errs += validate_label_selector(hook.get("objectSelector"), f"{path}.objectSelector")
    if mutating and hook.get("reinvocationPolicy") not in REINVOCATION_POLICIES:
        errs.append(errors.not_supported(f"{path}.reinvocationPolicy", hook.get("reinvocationPolicy"),
                                         REINVOCATION_POLICIES))
    client = _dict(hook.get("clientConfig"))
    url, service = client.get("url"), client.get("service")
    if (url is None) == (service is None):
        errs.append(errors.required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif url is not None:
        errs += url_errors(str(url), f"{path}.clientConfig.url")
    else:
        errs += service_errors(_dict(service), f"{path}.clientConfig.service")
    return errs + match_condition_errors(hook.get("matchConditions"), f"{path}.matchConditions")


class WebhookConfigurationStrategy(Strategy):
    """Mutating and ValidatingWebhookConfigurations: defaults per webhook; names unique."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion
    tracks_generation = True

    def __init__(self, mutating: bool) -> None:
        self.mutating = mutating

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        for hook in obj.get("webhooks") or []:
            if isinstance(hook, dict):
                default_webhook(hook, self.mutating)

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        names: set[str] = set()
        for i, hook in enumerate(obj.get("webhooks") or []):
            hook = _dict(hook)
            errs += webhook_errors(hook, f"webhooks[{i}]", self.mutating)
            errs += _review_version_errors(_strings(hook.get("admissionReviewVersions")),
                                           f"webhooks[{i}].admissionReviewVersions")
            name = str(hook.get("name") or "")
            if name and name in names:
                errs.append(errors.duplicate(f"webhooks[{i}].name", name))
            names.add(name)
        return errs


MUTATING_WEBHOOK_CONFIGURATIONS = ResourceType(
    GROUP, "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", namespaced=False,
    categories=CATEGORIES, strategy=WebhookConfigurationStrategy(mutating=True), table=WEBHOOK_TABLE,
)
VALIDATING_WEBHOOK_CONFIGURATIONS = ResourceType(
    GROUP, "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", namespaced=False,
    categories=CATEGORIES, strategy=WebhookConfigurationStrategy(mutating=False), table=WEBHOOK_TABLE,
)


# -- validation: policies ------------------------------------------------------------
def match_resources_errors(match: Obj, path: str) -> list[FieldError]:
    """``validateMatchResources``."""
    errs: list[FieldError] = []
    if match.get("matchPolicy") not in MATCH_POLICIES:
        errs.append(errors.not_supported(f"{path}.matchPolicy", match.get("matchPolicy"), MATCH_POLICIES))
    errs += validate_label_selector(match.get("namespaceSelector"), f"{path}.namespaceSelector")
    errs += validate_label_selector(match.get("objectSelector"), f"{path}.objectSelector")
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(match.get(key) or []):
            rule = _dict(rule)
            names: set[str] = set()
            for j, name in enumerate(_strings(rule.get("resourceNames"))):
                errs += [errors.invalid(f"{path}.{key}[{i}].resourceNames[{j}]", name, m)
                         for m in is_valid_path_segment_name(name)]
                if name in names:
                    errs.append(errors.duplicate(f"{path}.{key}[{i}].resourceNames[{j}]", name))
                names.add(name)
            errs += rule_errors(rule, f"{path}.{key}[{i}]")
    return errs


def param_kind_errors(kind: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    api_version = str(kind.get("apiVersion") or "")
    if not api_version:
        errs.append(errors.required(f"{path}.apiVersion"))
    elif api_version.count("/") > 1:
        errs.append(errors.invalid(f"{path}.apiVersion", api_version, f"unexpected GroupVersion string: {api_version}"))
    else:
        group, _, version = api_version.rpartition("/")
        if group and is_dns1123_subdomain(group):
            errs.append(errors.invalid(f"{path}.apiVersion", group, ",".join(is_dns1123_subdomain(group))))
        if not version:
            errs.append(errors.invalid(f"{path}.apiVersion", api_version, "version must be specified"))
        elif is_dns1035_label(version):
            errs.append(errors.invalid(f"{path}.apiVersion", version, ",".join(is_dns1035_label(version))))
    name = str(kind.get("kind") or "")
    if not name:
        errs.append(errors.required(f"{path}.kind"))
    elif is_dns1035_label(name.lower()):
        errs.append(errors.invalid(f"{path}.kind", name, "may have mixed case, but should otherwise match: "
                                   + ",".join(is_dns1035_label(name.lower()))))
    return errs


def validation_errors(validation: Obj, path: str, variables: tuple[str, ...]) -> list[FieldError]:
    """``validateValidation``: an expression (that compiles), and its message's rules."""
    errs: list[FieldError] = []
    expression = str(validation.get("expression") or "")
    if not expression.strip():
        errs.append(errors.required(f"{path}.expression", "expression is not specified"))
    else:
        errs += cel_errors(expression, f"{path}.expression", variables)
    message_expression = validation.get("messageExpression")
    if message_expression and not str(message_expression).strip():
        errs.append(errors.invalid(f"{path}.messageExpression", message_expression, "must be non-empty if specified"))
    elif message_expression:
        errs += cel_errors(str(message_expression), f"{path}.messageExpression", variables)
    message = validation.get("message")
    if message and not str(message).strip():
        errs.append(errors.invalid(f"{path}.message", message, "message must be non-empty if specified"))
    elif message and ("\n" in str(message).strip() or "\r" in str(message).strip()):
        errs.append(errors.invalid(f"{path}.message", message, "message must not contain line breaks"))
    reason = validation.get("reason")
    if reason is not None and reason not in POLICY_REASONS:
        errs.append(errors.not_supported(f"{path}.reason", reason, POLICY_REASONS))
    return errs


def _policy_head_errors(spec: Obj) -> list[FieldError]:
    """What validating and mutating policies check first: the failure policy, the param kind
    and the match constraints (which must name resource rules)."""
    errs: list[FieldError] = []
    if spec.get("failurePolicy") not in FAILURE_POLICIES:
        errs.append(errors.not_supported("spec.failurePolicy", spec.get("failurePolicy"), FAILURE_POLICIES))
    if isinstance(spec.get("paramKind"), dict):
        errs += param_kind_errors(spec["paramKind"], "spec.paramKind")
    match = spec.get("matchConstraints")
    if not isinstance(match, dict):
        errs.append(errors.required("spec.matchConstraints"))
    else:
        errs += match_resources_errors(match, "spec.matchConstraints")
        if not match.get("resourceRules"):
            errs.append(errors.required("spec.matchConstraints.resourceRules"))
    return errs


class ValidatingAdmissionPolicyStrategy(Strategy):
    """ValidatingAdmissionPolicies: the spec, with a status subresource the apiserver's
    type checker would fill (fakekube leaves ``status.typeChecking`` unset)."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion
    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("failurePolicy", FAIL)
        if isinstance(spec.get("matchConstraints"), dict):
            default_match_resources(spec["matchConstraints"])

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _dict(obj.get("spec"))
        errs = _policy_head_errors(spec)
        variables = POLICY_VARIABLES + (("params",) if isinstance(spec.get("paramKind"), dict) else ())
        errs += match_condition_errors(spec.get("matchConditions"), "spec.matchConditions",
                                       tuple(v for v in variables if v != "variables"))
        for i, variable in enumerate(spec.get("variables") or []):
            variable = _dict(variable)
            if not str(variable.get("name") or "").strip():
                errs.append(errors.required(f"spec.variables[{i}].name", "name is not specified"))
            expression = str(variable.get("expression") or "")
            if not expression.strip():
                errs.append(errors.required(f"spec.variables[{i}].expression", "expression is not specified"))
            else:
                errs += cel_errors(expression, f"spec.variables[{i}].expression", variables)
        validations, audits = spec.get("validations") or [], spec.get("auditAnnotations") or []
        if not validations and not audits:
            why = "validations or auditAnnotations must contain at least one item"
            return errs + [errors.required("spec.validations", why), errors.required("spec.auditAnnotations", why)]
        for i, validation in enumerate(validations):
            errs += validation_errors(_dict(validation), f"spec.validations[{i}]", variables)
        return errs


VALIDATING_ADMISSION_POLICIES = ResourceType(
    GROUP, "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", namespaced=False,
    categories=CATEGORIES, subresources=(STATUS,), strategy=ValidatingAdmissionPolicyStrategy(), table=POLICY_TABLE,
)


def param_ref_errors(ref: Obj, path: str) -> list[FieldError]:
    """``validateParamRef``: a name or a selector, and what to do when none is found."""
    errs: list[FieldError] = []
    name, selector = str(ref.get("name") or ""), ref.get("selector")
    if name:
        errs += [errors.invalid(f"{path}.name", name, m) for m in is_valid_path_segment_name(name)]
        if selector is not None:
            errs.append(errors.forbidden(f"{path}.name", "name and selector are mutually exclusive"))
    if selector is not None:
        errs += validate_label_selector(selector, f"{path}.selector")
        if name:
            errs.append(errors.forbidden(f"{path}.selector", "name and selector are mutually exclusive"))
    if not name and selector is None:
        errs.append(errors.required(path, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        errs.append(errors.required(f"{path}.parameterNotFoundAction"))
    elif action not in ("Deny", "Allow"):
        errs.append(errors.not_supported(f"{path}.parameterNotFoundAction", action, ["Deny", "Allow"]))
    return errs


def validation_actions_errors(actions: list[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(errors.not_supported(f"{path}[{i}]", action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(errors.duplicate(f"{path}[{i}]", action))
        seen.add(action)
    if "Deny" in seen and "Warn" in seen:
        errs.append(errors.invalid(path, go_strings(actions), "must not contain both Deny and Warn (repeating the same "
                                   "validation failure information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(errors.required(path, "at least one validation action is required"))
    return errs


class _PolicyBindingStrategy(Strategy):
    """What validating and mutating policy bindings share: which policy, with which params,
    for what. ``match_path`` is where match-resource errors point (the validating binding's
    keeps upstream's typo)."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion
    tracks_generation = True
    match_path = "spec.matchResources"

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if isinstance(spec.get("matchResources"), dict):
            default_match_resources(spec["matchResources"])
        ref = spec.get("paramRef")
        if isinstance(ref, dict) and ref.get("parameterNotFoundAction") is None:
            ref["parameterNotFoundAction"] = "Deny"

    def _binding_errors(self, spec: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        policy = str(spec.get("policyName") or "")
        if not policy:
            errs.append(errors.required("spec.policyName"))
        else:
            errs += [errors.invalid("spec.policyName", policy, m) for m in name_is_dns_subdomain(policy)]
        if isinstance(spec.get("paramRef"), dict):
            errs += param_ref_errors(spec["paramRef"], "spec.paramRef")
        if isinstance(spec.get("matchResources"), dict):
            errs += match_resources_errors(spec["matchResources"], self.match_path)
        return errs


class ValidatingAdmissionPolicyBindingStrategy(_PolicyBindingStrategy):
    """ValidatingAdmissionPolicyBindings, and the actions a failed check takes."""

    match_path = "spec.matchResouces"  # upstream's path has its typo

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _dict(obj.get("spec"))
        return self._binding_errors(spec) + validation_actions_errors(_strings(spec.get("validationActions")),
                                                                      "spec.validationActions")


VALIDATING_ADMISSION_POLICY_BINDINGS = ResourceType(
    GROUP, "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", namespaced=False,
    categories=CATEGORIES, strategy=ValidatingAdmissionPolicyBindingStrategy(), table=POLICY_BINDING_TABLE,
)


# -- MutatingAdmissionPolicies (GA in 1.36): stored and validated; fakekube applies no mutation
MUTATING_OPERATIONS = ["*", "CREATE", "UPDATE"]
PATCH_TYPES = ("ApplyConfiguration", "JSONPatch")


def _mutating_operations_errors(match: Obj, path: str) -> list[FieldError]:
    """Only creates and updates can be mutated (``supportedMutatingOperations``)."""
    errs: list[FieldError] = []
    for rule in match.get("resourceRules") or []:
        for op in _dict(rule).get("operations") or []:
            if op not in MUTATING_OPERATIONS:
                errs.append(errors.not_supported(f"{path}.resourceRules.operations", op, MUTATING_OPERATIONS))
    return errs


def mutation_errors(mutation: Obj, path: str, variables: tuple[str, ...]) -> list[FieldError]:
    """``validateMutation``: a patch type and the one expression it names (which must compile)."""
    patch_type = mutation.get("patchType")
    if not patch_type:
        return [errors.required(f"{path}.patchType")]
    if patch_type not in PATCH_TYPES:
        return [errors.not_supported(f"{path}.patchType", patch_type, list(PATCH_TYPES))]
    own, other = ("jsonPatch", "applyConfiguration") if patch_type == "JSONPatch" else ("applyConfiguration", "jsonPatch")
    errs: list[FieldError] = []
    body = mutation.get(own)
    if not isinstance(body, dict):
        errs.append(errors.required(f"{path}.{own}", f"must be specified when patchType is {patch_type}"))
    elif not str(body.get("expression") or "").strip():
        errs.append(errors.required(f"{path}.{own}.expression", ""))
    else:
        errs += cel_errors(str(body["expression"]), f"{path}.{own}.expression", variables)
    if mutation.get(other) is not None:
        errs.append(errors.invalid(f"{path}.{other}", "{" + other + "}", f"must not be specified when patchType is {patch_type}"))
    return errs


class MutatingAdmissionPolicyStrategy(Strategy):
    """MutatingAdmissionPolicies (``ValidateMutatingAdmissionPolicy``): stored with upstream's
    defaults and validation; the apiserver does not apply their mutations (docs/api.md)."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("failurePolicy", FAIL)
        if isinstance(spec.get("matchConstraints"), dict):
            default_match_resources(spec["matchConstraints"])

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _dict(obj.get("spec"))
        errs = _policy_head_errors(spec)
        if isinstance(spec.get("matchConstraints"), dict):
            errs += _mutating_operations_errors(spec["matchConstraints"], "spec.matchConstraints")
        variables = POLICY_VARIABLES + (("params",) if isinstance(spec.get("paramKind"), dict) else ())
        errs += match_condition_errors(spec.get("matchConditions"), "spec.matchConditions",
                                       tuple(v for v in variables if v != "variables"))
        mutations = spec.get("mutations") or []
        if not mutations:
            errs.append(errors.required("spec.mutations", "mutations must contain at least one item"))
        for i, mutation in enumerate(mutations):
            errs += mutation_errors(_dict(mutation), f"spec.mutations[{i}]", variables)
        reinvocation = spec.get("reinvocationPolicy")
        if not reinvocation:
            errs.append(errors.required("spec.reinvocationPolicy"))
        elif reinvocation not in REINVOCATION_POLICIES:
            errs.append(errors.not_supported("spec.reinvocationPolicy", reinvocation, REINVOCATION_POLICIES))
        return errs


MUTATING_ADMISSION_POLICIES = ResourceType(
    GROUP, "v1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", namespaced=False,
    categories=CATEGORIES, strategy=MutatingAdmissionPolicyStrategy(), table=MUTATING_POLICY_TABLE,
)


class MutatingAdmissionPolicyBindingStrategy(_PolicyBindingStrategy):
    """MutatingAdmissionPolicyBindings (``validateMutatingAdmissionPolicyBindingSpec``)."""

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _dict(obj.get("spec"))
        errs = self._binding_errors(spec)
        if isinstance(spec.get("matchResources"), dict):
            errs += _mutating_operations_errors(spec["matchResources"], "spec.matchResources")
        return errs


MUTATING_ADMISSION_POLICY_BINDINGS = ResourceType(
    GROUP, "v1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", namespaced=False,
    categories=CATEGORIES, strategy=MutatingAdmissionPolicyBindingStrategy(), table=MUTATING_POLICY_BINDING_TABLE,
)
