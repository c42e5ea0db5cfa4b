"""``serve``'s first answer imports only what it needs; the rest loads on first use — and
nothing can tell: a server whose modules load lazily answers every list, discovery and
OpenAPI document byte for byte as one that imported all of fakekube before it started
(docs/performance.md "Lazy apiserver imports").

Each server runs in a fresh interpreter (this process has imported everything already), from
the same boot file loaded as ``serve``'s boot cache loads it (``phased=True``)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from fakekube import Cluster

START = datetime(2025, 1, 1, tzinfo=timezone.utc)

#: Runs in a fresh interpreter: ``python -c SERVER_ANSWERS <boot file> lazy|eager``; prints
#: one JSON object, path → "status body", for every read it makes.
SERVER_ANSWERS = r"""
import json, sys, urllib.error, urllib.request

path, mode = sys.argv[1], sys.argv[2]
if mode == "eager":
    import importlib, pkgutil
    import fakekube
    for found in sorted(pkgutil.walk_packages(fakekube.__path__, "fakekube."), key=lambda m: m.name):
        if not found.name.endswith("__main__"):
            importlib.import_module(found.name)
before = set(sys.modules)
from fakekube.cluster import Cluster
from fakekube.control import attach_on_first_use
cluster = Cluster.load(path, phased=True, port=0)
attach_on_first_use(cluster)  # as serve mounts it
cluster.start()

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
answers = {}

def get(path, accept="application/json"):
    request = urllib.request.Request(cluster.url + path, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            code, body = response.status, response.read()
    except urllib.error.HTTPError as error:
        code, body = error.code, error.read()
    answers[f"{path} [{accept}]"] = f"{code} {body.decode('utf-8', 'replace')}"
    return body

for path in ("/version", "/healthz", "/readyz", "/fakekube/v1/", "/fakekube/v1/openapi.json"):
    get(path)
get("/api", AGGREGATED)
get("/apis", AGGREGATED)
listings = [("/api/v1", json.loads(get("/api/v1")))]
get("/api")
for group in json.loads(get("/apis"))["groups"]:
    get(f"/apis/{group['name']}")
    for version in group["versions"]:
        listings.append((f"/apis/{version['groupVersion']}", json.loads(get(f"/apis/{version['groupVersion']}"))))
for prefix, listing in listings:
    for resource in listing["resources"]:
        if "/" not in resource["name"] and "list" in resource["verbs"]:
            get(f"{prefix}/{resource['name']}")
            get(f"{prefix}/{resource['name']}?limit=2")
get("/api/v1/pods", "application/json;as=Table;v=v1;g=meta.k8s.io")
get("/openapi/v2")
for document in json.loads(get("/openapi/v3"))["paths"].values():
    get(document["serverRelativeURL"])
cluster.stop()
loaded_late = sorted(name for name in set(sys.modules) - before if name.startswith("fakekube"))
print(json.dumps({"answers": answers, "loaded_late": loaded_late}))
"""


@pytest.fixture(scope="module")
def boot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kind-like boot as ``serve`` caches it (system pods, metrics-server, fixed start)."""
    path = tmp_path_factory.mktemp("lazy") / "boot.snap"
    Cluster(system_pods=True, metrics_server=True, start_time=START, time_scale=0, seed=5).save(path)
    return path


def served(boot_file: Path, mode: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", SERVER_ANSWERS, str(boot_file), mode], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_lazily_importing_server_answers_every_read_as_an_eagerly_imported_one(boot_file: Path) -> None:
    lazy, eager = served(boot_file, "lazy"), served(boot_file, "eager")
    answers = lazy["answers"]
    assert isinstance(answers, dict) and len(answers) > 150
    assert sum(answer.startswith("200 ") for answer in answers.values()) == len(answers)
    assert answers == eager["answers"]
    assert lazy["loaded_late"] != [] and eager["loaded_late"] == []  # the lazy one did load modules on the way
