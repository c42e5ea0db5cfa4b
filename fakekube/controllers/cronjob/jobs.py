"""The Job a CronJob creates for one scheduled time (upstream ``getJobFromTemplate2``, 1.33).

Its name is ``<cronjob>-<scheduled time in minutes since the Unix epoch>``, so the same
scheduled time can never make two Jobs (the name is the lock); labels and annotations are
the template's, plus ``batch.kubernetes.io/cronjob-scheduled-timestamp`` (RFC 3339 in the
CronJob's time zone); the CronJob is its controller owner; its spec is the template's.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any, Mapping

from fakekube.objects._json import deep_copy
from fakekube.objects.constants import ANNOTATION_CRONJOB_SCHEDULED_TIMESTAMP
from fakekube.objects.owners import owner_reference

Obj = dict[str, Any]


def job_name(cron_job: Mapping[str, Any], scheduled: datetime) -> str:
    """``getJobName``."""
    return f"{cron_job['metadata']['name']}-{int(scheduled.timestamp()) // 60}"


def go_rfc3339(moment: datetime, zone: tzinfo) -> str:
    """Go's ``Format(time.RFC3339)`` of ``moment`` in ``zone`` (``Z`` for a zero offset)."""
    local = moment.astimezone(zone)
    offset = local.utcoffset()
    offset_s = int(offset.total_seconds()) if offset is not None else 0
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if offset_s == 0:
        return text + "Z"
    sign, offset_s = ("-", -offset_s) if offset_s < 0 else ("+", offset_s)
    return f"{text}{sign}{offset_s // 3600:02d}:{offset_s % 3600 // 60:02d}"


def job_from_template(cron_job: Mapping[str, Any], scheduled: datetime, zone: tzinfo) -> Obj:
    """The Job to create for ``scheduled``."""
    meta = cron_job["metadata"]
    template = (cron_job.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    annotations = dict(template_meta.get("annotations") or {})
    annotations[ANNOTATION_CRONJOB_SCHEDULED_TIMESTAMP] = go_rfc3339(scheduled, zone)
    job_meta: Obj = {"name": job_name(cron_job, scheduled), "namespace": meta["namespace"]}
    if template_meta.get("labels"):
        job_meta["labels"] = dict(template_meta["labels"])
    job_meta["annotations"] = annotations
    job_meta["ownerReferences"] = [owner_reference(cron_job, "batch/v1", "CronJob")]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta,
            "spec": deep_copy(template.get("spec") or {})}
