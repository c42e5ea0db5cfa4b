"""Does a busy cluster stay the same size? Events, objects and RSS for a per-minute CronJob (issue 19).

One node and one CronJob whose Job runs ``echo hi`` every minute (a Job, a pod and about
ten Events a minute: the CronJob's, the Job's, the scheduler's and the kubelet's). The
cluster is advanced one virtual day at a time; after each day this prints the Events
stored, all objects stored, the process's RSS (``/proc/self/statm``, after a full
collection) and the wall time the day took. With kube-apiserver's ``--event-ttl``
(``ClusterConfig.event_ttl_s``, 1 h) the Event count stays at about an hour's worth.

Each day's wall and CPU time are printed beside it, then their median (min–max) and the
load at start and end (``measure.py``). The days are not interleaved rounds of one
scenario: each runs on the state the previous left, which is what this benchmark is for.

Run ``python benchmarks/bench_events.py`` (``--days 8``, ``--event-ttl 3600``; 0 keeps
Events forever, as ``--event-ttl 0`` does upstream; ``--days 1`` for a smoke run). Wall
time is read with perf_counter; fakekube itself never reads it.
"""

from __future__ import annotations

import argparse
import gc
import os
from typing import Any

import measure
from fakekube import Cluster

DAY_S = 86_400.0
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_BYTES / 1e6


def cron_job() -> dict[str, Any]:
    template = {"spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "main", "image": "busybox", "command": ["sh", "-c", "echo hi"]}]}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick", "namespace": "default"},
            "spec": {"schedule": "* * * * *", "jobTemplate": template}}


def build(event_ttl_s: float | None) -> Cluster:
    """One node and the CronJob (``event_ttl_s`` None: the config's default)."""
    knob: dict[str, Any] = {"event_ttl_s": event_ttl_s} if event_ttl_s is not None else {}
    cluster = Cluster(nodes=1, immutability_guard=False, **knob)
    cluster.create(cron_job())
    return cluster


def objects(cluster: Cluster) -> int:
    return sum(cluster.store.count(resource) for resource in cluster.store.resources())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=8, help="virtual days to run (default 8)")
    parser.add_argument("--event-ttl", type=float, default=None,
                        help="event TTL in seconds (default: the cluster's, 3600; 0 keeps Events forever)")
    args = parser.parse_args()
    cluster = build(args.event_ttl)
    ttl = getattr(cluster.config, "event_ttl_s", "(no TTL in this code)")
    start = measure.Load.now()
    print(f"per-minute CronJob, event TTL {ttl}; RSS at start {rss_mb():.0f} MB")
    print(f"{'day':>4} {'events':>8} {'objects':>8} {'RSS MB':>8} {'wall s':>8} {'CPU s':>8}")
    days = measure.Series()
    for day in range(1, args.days + 1):
        sample = measure.time_call(lambda: cluster.advance(DAY_S))
        days.add(sample)
        print(f"{day:>4} {cluster.store.count(('', 'events')):>8} {objects(cluster):>8} {rss_mb():>8.0f} "
              f"{sample.wall_s:>8.1f} {sample.cpu_s:>8.1f}", flush=True)
    print(measure.load_line(start, measure.Load.now()))
    print(f"a virtual day: wall {measure.format_spread(measure.spread(days.wall_s))} s, "
          f"CPU {measure.format_spread(measure.spread(days.cpu_s))} s")


if __name__ == "__main__":
    main()
