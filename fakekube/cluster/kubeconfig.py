"""Writing a kubeconfig that points kubectl, helm and client libraries at a cluster."""

from __future__ import annotations

from pathlib import Path

import yaml

from fakekube.api.auth.identity import ADMIN_TOKEN

CONTEXT = "fakekube"


def kubeconfig_document(server_url: str, name: str = CONTEXT) -> dict:
    """A kubeconfig with one cluster, one user (a static token) and a current context."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server_url}}],
        "users": [{"name": name, "user": {"token": ADMIN_TOKEN}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(path: Path, server_url: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(kubeconfig_document(server_url), sort_keys=False))
    return path
