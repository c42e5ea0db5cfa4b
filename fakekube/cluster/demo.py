"""Realistic clusters on demand: the objects ``fakekube serve --demo`` and ``Cluster.populate``
create, drawn from a seeded Faker so people can try kubectl, dashboards and their own tools on
something that looks like a company's cluster — and so the scale benchmarks get the same shape.

:func:`manifests` is pure: a seed and an app count give a list of plain manifests (namespaces
per team, then per app a ConfigMap, sometimes a Secret, a Deployment with a readiness probe
and a Service selecting it). Faker is seeded on its own instance (``Faker.seed_instance``,
never the global seed) with a fixed locale, so the same seed gives the same objects in any
process whatever PYTHONHASHSEED; it is imported only here, when called, so ``import fakekube``
and an in-process cluster do not load it.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Iterable

from fakekube.cluster import checks

Obj = dict[str, Any]

#: The locale every draw uses: Faker's providers are deterministic per seed only for a fixed one.
LOCALE = "en_US"
#: The longest word or company name a demo name takes (3 of them and 2 dashes fit a label's 63).
SLUG_CHARS = 20
#: Teams (namespaces) are drawn first; each app belongs to one of them.
MAX_TEAMS = 6
#: Where the demo's images live (every one pulls under the default ``plausible`` image policy).
REGISTRIES = ("ghcr.io", "quay.io", "registry.gitlab.com", "docker.io")
#: What a demo app is, and the port its container serves on.
APP_KINDS = (("api", 8080), ("web", 3000), ("worker", 9090), ("gateway", 8443), ("auth", 8081),
             ("search", 9200), ("billing", 8080), ("notifier", 8000), ("catalog", 8080), ("reports", 5000))
#: Why a ``populate`` that waits longer than this stops: every app should be Available within
#: its readiness delay (at most 30 s) plus scheduling and pulls; this bounds a stuck rollout.
AVAILABLE_TIMEOUT_S = 600.0
#: The kinds the demo creates, in the order the banner counts them.
KINDS = ("Namespace", "Deployment", "Service", "ConfigMap", "Secret")
#: Who owns the fields the demo sets (managedFields), as kubectl would be for its own writes.
FIELD_MANAGER = "fakekube-demo"


def check_arguments(seed: Any, apps: Any, nodes: Any = None, apps_name: str = "apps") -> None:
    """The shared checks (fakekube/cluster/checks.py), named as ``populate`` spells them
    (``apps_name``: as ``serve`` spells it, ``--demo``)."""
    checks.integer(seed, "seed")
    checks.integer(apps, apps_name, minimum=0)
    if nodes is not None:
        checks.integer(nodes, "nodes", minimum=1)


def manifests(seed: int, apps: int = 10) -> list[Obj]:
    """The demo's objects for ``apps`` apps, in creation order (namespaces first)."""
    check_arguments(seed, apps)
    from faker import Faker  # lazily: only a demo pays for loading Faker's providers

    fake = Faker(LOCALE)
    fake.seed_instance(seed)
    teams = _teams(fake, min(MAX_TEAMS, (apps + 2) // 3))  # a team per 3 apps, none for none
    products = _distinct(lambda: _slug(fake.word(part_of_speech="noun")), len(teams))
    orgs = [_slug(fake.company()) for _ in teams]  # one image organisation per product
    objects: list[Obj] = [_namespace(team, product) for team, product in zip(teams, products)]
    used: set[str] = set()
    for index in range(apps):
        team = index % len(teams)
        objects += _app(fake, teams[team], products[team], orgs[team], used)
    return objects


def _slug(text: str) -> str:
    """A DNS-1123 label from Faker's words (lower case ASCII letters and digits, dashes
    between), at most :data:`SLUG_CHARS` long, so that an app's Service name (product, kind,
    maybe one more word) stays within a label's 63 characters."""
    kept = "".join(c if c.isascii() and c.isalnum() else "-" for c in text.lower())
    return "-".join(part for part in kept.split("-") if part)[:SLUG_CHARS].strip("-") or "x"


def _distinct(draw: Callable[[], str], count: int) -> list[str]:
    """``count`` different draws (a repeat is drawn again, bounded; then numbered)."""
    found: list[str] = []
    for _ in range(count):
        value = draw()
        for _ in range(20):
            if value not in found:
                break
            value = draw()
        if value in found:
            value = f"{value}-{len(found)}"
        found.append(value)
    return found


def _teams(fake: Any, count: int) -> list[str]:
    """Team namespaces: the last word of a catch phrase (``team-portal``, ``team-paradigm``)."""
    return [f"team-{word}" for word in _distinct(lambda: _slug(fake.catch_phrase().split()[-1]), count)]


def _namespace(team: str, product: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": team, "labels": {"team": team.removeprefix("team-"), "app.kubernetes.io/part-of": product}}}


def _app(fake: Any, team: str, product: str, org: str, used: set[str]) -> list[Obj]:
    """One app's ConfigMap, maybe a Secret, Deployment and Service, all labelled alike."""
    kind, port = fake.random_element(APP_KINDS)
    name = _unique(f"{product}-{kind}", used, fake)
    version = f"{fake.random_int(0, 4)}.{fake.random_int(0, 30)}.{fake.random_int(0, 12)}"
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": product,
              "app.kubernetes.io/version": version, "team": team.removeprefix("team-")}
    image = f"{fake.random_element(REGISTRIES)}/{org}/{name}:v{version}"
    objects = [_config_map(fake, name, team, labels, port)]
    secret = fake.boolean(chance_of_getting_true=30)
    if secret:
        objects.append(_secret(fake, name, team, labels))
    objects.append(_deployment(fake, name, team, labels, image, port, secret))
    objects.append(_service(name, team, labels, port))
    return objects


def _unique(base: str, used: set[str], fake: Any) -> str:
    """An app name not used yet across the demo (a second ``shop-api`` gets a word more)."""
    name = base
    while name in used:
        name = f"{base}-{_slug(fake.word())}"
    used.add(name)
    return name


def _meta(name: str, namespace: str, labels: dict[str, str]) -> Obj:
    return {"name": name, "namespace": namespace, "labels": dict(labels)}


def _config_map(fake: Any, name: str, namespace: str, labels: dict[str, str], port: int) -> Obj:
    data = {"LOG_LEVEL": fake.random_element(("debug", "info", "warn")), "PORT": str(port),
            "REGION": fake.random_element(("eu-west-1", "us-east-1", "us-west-2", "ap-south-1")),
            "FEATURE_FLAGS": ",".join(_slug(w) for w in fake.words(3)),
            "SUPPORT_EMAIL": fake.company_email()}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(f"{name}-config", namespace, labels),
            "data": data}


def _secret(fake: Any, name: str, namespace: str, labels: dict[str, str]) -> Obj:
    values = {"DATABASE_URL": f"postgres://{fake.user_name()}:{fake.password(16)}@{name}-db:5432/{_slug(fake.word())}",
              "API_KEY": fake.sha256()[:40]}
    data = {key: base64.b64encode(value.encode()).decode() for key, value in values.items()}
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": _meta(f"{name}-credentials", namespace, labels), "data": data}


def _deployment(fake: Any, name: str, namespace: str, labels: dict[str, str], image: str, port: int,
                secret: bool) -> Obj:
    """A Deployment whose pods turn ready some seconds after starting (a readiness probe with
    fakekube's ``ready_after_s``), so its rollout takes time as a real one does."""
    ready_after_s = fake.random_int(2, 30)
    env_from: list[Obj] = [{"configMapRef": {"name": f"{name}-config"}}]
    if secret:
        env_from.append({"secretRef": {"name": f"{name}-credentials"}})
    container = {"name": name.rsplit("-", 1)[-1] if "-" in name else name, "image": image,
                 "ports": [{"name": "http", "containerPort": port}], "envFrom": env_from,
                 "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
                 "resources": {"requests": {"cpu": f"{fake.random_element((10, 25, 50, 100))}m",
                                            "memory": f"{fake.random_element((32, 64, 128, 256))}Mi"}}}
    template = {"metadata": {"labels": dict(labels),
                             "annotations": {"fakekube.io/behaviour": json.dumps({"ready_after_s": ready_after_s})}},
                "spec": {"containers": [container]}}
    selector = {"app.kubernetes.io/name": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(name, namespace, labels),
            "spec": {"replicas": fake.random_element((1, 2, 2, 3)), "selector": {"matchLabels": selector},
                     "template": template}}


def _service(name: str, namespace: str, labels: dict[str, str], port: int) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(name, namespace, labels),
            "spec": {"selector": {"app.kubernetes.io/name": name},
                     "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}}


def not_rolled_out_message(waiting: list[str], timeout_s: float, node_count: int) -> str:
    """Why ``populate`` gave up: which Deployments, and the usual cause (too few nodes)."""
    shown = ", ".join(waiting[:5]) + (f" and {len(waiting) - 5} more" if len(waiting) > 5 else "")
    return (f"populate: {len(waiting)} Deployments not rolled out within {timeout_s:g} virtual seconds: {shown}; "
            f"the cluster has {node_count} nodes (a pod that does not fit stays Pending: give populate nodes=, "
            "or serve --nodes)")


def deployments(objects: Iterable[Obj]) -> list[Obj]:
    """The Deployments among ``objects`` (what ``populate`` waits for)."""
    return [obj for obj in objects if obj["kind"] == "Deployment"]


def rolled_out(deployment: Obj | None) -> bool:
    """Every replica updated and available, as ``kubectl rollout status`` waits for."""
    if deployment is None:
        return False
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    want = spec.get("replicas", 1)
    return (status.get("observedGeneration", 0) >= (deployment.get("metadata") or {}).get("generation", 1)
            and status.get("updatedReplicas", 0) == want and status.get("availableReplicas", 0) == want
            and status.get("replicas", 0) == want)
