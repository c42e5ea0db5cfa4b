"""Writing a kubeconfig that points kubectl, helm and client libraries at a cluster."""

from __future__ import annotations

import base64
from pathlib import Path

from fakekube.api.auth.identity import ADMIN_TOKEN

CONTEXT = "fakekube"


def kubeconfig_document(server_url: str, name: str = CONTEXT, ca_pem: bytes | None = None) -> dict:
    """A kubeconfig with one cluster, one user (a static token) and a current context; over
    TLS the cluster entry carries the CA (``certificate-authority-data``)."""
    cluster: dict = {"server": server_url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": ADMIN_TOKEN}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(path: Path, server_url: str, ca_pem: bytes | None = None) -> Path:
    import yaml  # PyYAML loads on first use, not with the package (cold start)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(kubeconfig_document(server_url, ca_pem=ca_pem), sort_keys=False))
    return path
