"""batch/v1 strategies: Jobs (with generated selectors) and CronJobs."""

from __future__ import annotations

import copy
import re
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.selectors import JOB_FIELD_SET
from fakekube.api.table import CRON_JOB_TABLE, JOB_TABLE
from fakekube.api.machinery.jsonutil import go_marshal
from fakekube.api.types._util import (
    FIELD_IMMUTABLE,
    GoLiteral,
    Obj,
    ensure_dict,
    go_label_selector,
    go_string_map,
    immutable,
    non_negative,
    required_one_of,
    selector_is_empty,
    selector_matches,
    selector_mismatch,
)
from fakekube.api.types.core_pods import default_pod_template, validate_pod_template, zero_creation_timestamp
from fakekube.api.wire.internal_core import internal_json
from fakekube import objects
from fakekube.objects import cronschedule

MAX_INT32 = 2**31 - 1
JOB_RESTART_POLICIES = ["OnFailure", "Never"]
CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
CRONJOB_NAME_MAX = 52
# Template fields a suspended, never-started Job may still change (KEP-2926).
_MUTABLE_WHILE_SUSPENDED_SPEC = ("nodeSelector", "affinity", "tolerations", "schedulingGates")


def default_job_spec(spec: Obj) -> None:
    """SetDefaults_Job's spec part. Only Job objects get it: a CronJob's jobTemplate
    gets just the pod-template defaults, as upstream."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    if not spec.get("completionMode"):
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if not spec.get("podReplacementPolicy"):
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False


def _copy_template_labels(job: Obj) -> None:
    """A Job without labels shows its template's labels (upstream aliases the map)."""
    labels = (((job.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
    meta = ensure_dict(job, "metadata")
    if labels and not meta.get("labels"):
        meta["labels"] = dict(labels)


def generate_job_selector(job: Obj) -> None:
    """Label the template with the Job's uid and name, and select on the uid.

    Done only when ``manualSelector`` is not true, as in upstream's strategy.
    """
    spec = ensure_dict(job, "spec")
    if spec.get("manualSelector"):
        return
    meta = job.get("metadata") or {}
    uid, name = meta.get("uid", ""), meta.get("name", "")
    template = ensure_dict(spec, "template")
    labels = ensure_dict(ensure_dict(template, "metadata"), "labels")
    labels.setdefault("batch.kubernetes.io/controller-uid", uid)
    labels.setdefault("batch.kubernetes.io/job-name", name)
    labels.setdefault("controller-uid", uid)
    labels.setdefault("job-name", name)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match_labels = selector.get("matchLabels")
    if not isinstance(match_labels, dict):
        match_labels = selector["matchLabels"] = {}
    match_labels.setdefault("batch.kubernetes.io/controller-uid", uid)  # a client's own selector gets it too


def _generated_selector_errors(job: Obj) -> list[FieldError]:
    """``validateGeneratedSelector``: unless ``manualSelector``, the template carries the
    generated labels with the Job's uid and name, and the selector selects them."""
    spec = job.get("spec") or {}
    selector = spec.get("selector")
    if spec.get("manualSelector") or selector is None:
        return []
    meta = job.get("metadata") or {}
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    errs: list[FieldError] = [] if uid else [errors.required("metadata.uid")]
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    expected = {"controller-uid": uid, "job-name": name,
                "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name}
    for key, value in expected.items():
        path = f"spec.template.metadata.labels[{key}]"
        if key not in labels:
            errs.append(errors.required(path, value))
        elif labels[key] != value:
            errs.append(errors.invalid(path, go_string_map(labels), f"must be '{value}'"))
    try:
        selects = objects.selector_matches(selector, expected)
    except ValueError:
        return errs
    if not selects:
        errs.append(errors.invalid("spec.selector", go_label_selector(selector), "`selector` not auto-generated"))
    return errs


def validate_job_spec(spec: Obj, prefix: str, *, selector_required: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in ("parallelism", "completions", "backoffLimit", "ttlSecondsAfterFinished", "backoffLimitPerIndex"):
        if spec.get(name) is not None:
            errs += non_negative(spec[name], f"{prefix}.{name}")
    if spec.get("activeDeadlineSeconds") is not None:  # zero is allowed: the Job fails at once
        errs += non_negative(spec["activeDeadlineSeconds"], f"{prefix}.activeDeadlineSeconds")
    mode = spec.get("completionMode")
    if mode not in (None, "NonIndexed", "Indexed"):
        errs.append(errors.not_supported(f"{prefix}.completionMode", mode, ["NonIndexed", "Indexed"]))
    if mode == "Indexed" and spec.get("completions") is None:
        errs.append(errors.required(f"{prefix}.completions", "when completion mode is Indexed"))
    selector = spec.get("selector")
    template = spec.get("template")
    if selector is None and selector_required:
        errs.append(errors.required(f"{prefix}.selector"))
    labels = ((template or {}).get("metadata") or {}).get("labels") or {}
    if selector is not None and not selector_is_empty(selector) and not selector_matches(selector, labels):
        errs.append(selector_mismatch(f"{prefix}.template", labels))
    if not isinstance(template, dict):
        return errs + [errors.required(f"{prefix}.template")]
    errs += validate_pod_template(template, f"{prefix}.template")
    restart = (template.get("spec") or {}).get("restartPolicy") or ""
    path = f"{prefix}.template.spec.restartPolicy"
    if restart in ("Always", ""):
        errs.append(errors.required(path, 'valid values: "OnFailure", "Never"'))
    elif restart not in JOB_RESTART_POLICIES:
        errs.append(errors.not_supported(path, restart, JOB_RESTART_POLICIES))
    return errs


def _munge_suspended_template(new_template: Obj, old_template: Obj) -> Obj:
    """The new template with the scheduling directives a suspended Job may change reset."""
    munged = copy.deepcopy(new_template)
    meta = ensure_dict(munged, "metadata")
    old_meta = old_template.get("metadata") or {}
    for name in ("labels", "annotations"):
        if name in old_meta:
            meta[name] = copy.deepcopy(old_meta[name])
        else:
            meta.pop(name, None)
    spec = ensure_dict(munged, "spec")
    old_spec = old_template.get("spec") or {}
    for name in _MUTABLE_WHILE_SUSPENDED_SPEC:
        if name in old_spec:
            spec[name] = copy.deepcopy(old_spec[name])
        else:
            spec.pop(name, None)
    return munged


def _template_update_errors(new_template: Obj, old_template: Obj, old_job: Obj) -> list[FieldError]:
    """``validatePodTemplateUpdate``: a Job's template is immutable, but while it is suspended
    its scheduling directives may change (before it started) and, with 1.36's
    MutablePodResourcesForSuspendedJobs, its containers' resources: then only the pod spec
    is compared, at ``spec.template.spec`` (the strategy's ``validationOptionsForJob``)."""
    release = errors.emulated()
    status = old_job.get("status") or {}
    suspended = bool((old_job.get("spec") or {}).get("suspend"))
    never_started = not status.get("startTime")
    suspended_condition = any(c.get("type") == "Suspended" and c.get("status") == "True"
                              for c in status.get("conditions") or [])
    mutable_template = suspended and (never_started or suspended_condition) and not status.get("active")
    mutable_scheduling = suspended and never_started
    if release.enabled("MutableSchedulingDirectivesForSuspendedJobs"):
        mutable_scheduling = mutable_template
    munged = _munge_suspended_template(new_template, old_template) if mutable_scheduling else new_template
    if suspended and mutable_template and release.enabled("MutablePodResourcesForSuspendedJobs"):
        new_spec, old_spec = new_template.get("spec") or {}, old_template.get("spec") or {}
        if _with_resources_of(munged.get("spec") or {}, old_spec) == old_spec:
            return []
        shown = go_marshal(internal_json("PodSpec", new_spec), sort_keys=False)
        return [errors.invalid("spec.template.spec", GoLiteral("core.PodSpec{...}", shown), FIELD_IMMUTABLE)]
    if munged == old_template:
        return []
    shown = go_marshal(internal_json("PodTemplateSpec", new_template), sort_keys=False)
    return [errors.invalid("spec.template", GoLiteral("core.PodTemplateSpec{...}", shown), FIELD_IMMUTABLE)]


def _with_resources_of(spec: Obj, other: Obj) -> Obj:
    """``spec`` with its containers' resources taken from ``other``'s, where the containers
    pair up by position and name (``validatePodResourceUpdatesOnly``, which copies the new
    resources into the old spec: the same comparison)."""
    out = dict(spec)
    for name in ("containers", "initContainers"):
        ours, theirs = spec.get(name) or [], other.get(name) or []
        if not ours or len(ours) != len(theirs):
            continue
        out[name] = [_resources_from(c, n) if c.get("name") == n.get("name") else c for c, n in zip(ours, theirs)]
    return out


def _resources_from(container: Obj, source: Obj) -> Obj:
    out = {key: value for key, value in container.items() if key != "resources"}
    if "resources" in source:
        out["resources"] = source["resources"]
    return out


class JobStrategy(Strategy):
    """Jobs: defaults, a generated uid selector, an immutable selector and template."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        default_job_spec(spec)
        default_pod_template(spec.get("template"), ctx.release)
        _copy_template_labels(obj)

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {}
        generate_job_selector(obj)
        _copy_template_labels(obj)

    def validate(self, obj: Obj) -> list[FieldError]:
        return _generated_selector_errors(obj) + validate_job_spec(obj.get("spec") or {}, "spec", selector_required=True)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_job_spec(new.get("spec") or {}, "spec", selector_required=True)  # no generated-selector check
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if not self._elastic_indexed(new_spec, old_spec):
            errs += immutable(new_spec.get("completions"), old_spec.get("completions"), "spec.completions")
        errs += immutable(new_spec.get("selector"), old_spec.get("selector"), "spec.selector",
                          go_label_selector(new_spec.get("selector")))
        errs += _template_update_errors(new_spec.get("template") or {}, old_spec.get("template") or {}, old)
        for name in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy"):
            errs += immutable(new_spec.get(name), old_spec.get(name), f"spec.{name}")
        return errs

    @staticmethod
    def _elastic_indexed(new_spec: Obj, old_spec: Obj) -> bool:
        """Indexed Jobs may scale completions together with parallelism."""
        return (new_spec.get("completionMode") == "Indexed"
                and new_spec.get("completions") == new_spec.get("parallelism")
                and old_spec.get("completions") == old_spec.get("parallelism"))


JOBS = ResourceType(
    "batch", "v1", "Job", "jobs", namespaced=True, categories=("all",), subresources=(STATUS,),
    strategy=JobStrategy(), table=JOB_TABLE, field_set=JOB_FIELD_SET,
)


def _schedule_errors(schedule: Any, time_zone: Any, allow_tz: bool) -> list[FieldError]:
    """validateScheduleFormat: robfig's ParseStandard, and no ``TZ``/``CRON_TZ`` in the schedule
    (``allow_tz``: an update whose old schedule had one may keep it, without ``timeZone``)."""
    if not schedule:
        return [errors.required("spec.schedule")]
    text = str(schedule)
    errs: list[FieldError] = []
    try:
        cronschedule.parse_standard(text)
    except cronschedule.ScheduleError as error:
        errs.append(errors.invalid("spec.schedule", schedule, str(error)))
    if allow_tz and "TZ" in text and time_zone is not None:
        errs.append(errors.invalid("spec.schedule", schedule,
                                   "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    elif not allow_tz and "TZ" in text:
        errs.append(errors.invalid("spec.schedule", schedule,
                                   "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    return errs


#: A part of an IANA zone name (upstream's validTimeZoneCharacters).
_TIME_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


def _time_zone_errors(time_zone: Any) -> list[FieldError]:
    """validateTimeZone: a non-empty IANA name that is not ``Local`` and that loads."""
    if time_zone is None:
        return []
    text = str(time_zone)
    if not text:
        return [errors.invalid("spec.timeZone", time_zone, "timeZone must be nil or non-empty string")]
    for part in text.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.fullmatch(part):
            return [errors.invalid("spec.timeZone", time_zone, f"unknown time zone {text}")]
    errs: list[FieldError] = []
    if text.lower() == "local":
        errs.append(errors.invalid("spec.timeZone", time_zone,
                                   "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
    try:
        cronschedule.load_location(text)
    except cronschedule.ScheduleError as error:
        errs.append(errors.invalid("spec.timeZone", time_zone, str(error)))
    return errs


class CronJobStrategy(Strategy):
    """CronJobs: Allow/false/3/1 defaults and the job template's pod defaults."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        if not spec.get("concurrencyPolicy"):
            spec["concurrencyPolicy"] = "Allow"
        if spec.get("suspend") is None:
            spec["suspend"] = False
        if spec.get("successfulJobsHistoryLimit") is None:
            spec["successfulJobsHistoryLimit"] = 3
        if spec.get("failedJobsHistoryLimit") is None:
            spec["failedJobsHistoryLimit"] = 1
        job_template = spec.get("jobTemplate")
        if isinstance(job_template, dict):
            zero_creation_timestamp(ensure_dict(job_template, "metadata"), ctx.release)
            default_pod_template(ensure_dict(job_template, "spec").get("template"), ctx.release)

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {}

    def validate(self, obj: Obj) -> list[FieldError]:
        return self._validate(obj, allow_tz=False)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self._validate(new, allow_tz="TZ" in str((old.get("spec") or {}).get("schedule") or ""))

    def _validate(self, obj: Obj, allow_tz: bool) -> list[FieldError]:
        name = (obj.get("metadata") or {}).get("name") or ""
        errs: list[FieldError] = []
        if len(name) > CRONJOB_NAME_MAX:
            errs.append(errors.invalid("metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"))
        spec = obj.get("spec") or {}
        errs += _schedule_errors(spec.get("schedule"), spec.get("timeZone"), allow_tz)
        errs += _time_zone_errors(spec.get("timeZone"))
        errs += required_one_of(spec.get("concurrencyPolicy"), "spec.concurrencyPolicy", CONCURRENCY_POLICIES)
        for limit in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit", "startingDeadlineSeconds"):
            if spec.get(limit) is not None:
                errs += non_negative(spec[limit], f"spec.{limit}")
        job_spec = (spec.get("jobTemplate") or {}).get("spec")
        if not isinstance(job_spec, dict):
            return errs + [errors.required("spec.jobTemplate.spec")]
        return errs + validate_job_spec(job_spec, "spec.jobTemplate.spec", selector_required=False)


CRON_JOBS = ResourceType(
    "batch", "v1", "CronJob", "cronjobs", namespaced=True, short_names=("cj",), categories=("all",),
    subresources=(STATUS,), strategy=CronJobStrategy(), table=CRON_JOB_TABLE,
)
