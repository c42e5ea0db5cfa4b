"""Writing a kubeconfig that points kubectl, helm and client libraries at a cluster.

Over plain HTTP the user is a static bearer token (clients send no client certificate
without TLS). Over TLS it is as kind writes it: a user ``kind-<cluster>`` holding a client
certificate (``client-certificate-data``/``client-key-data``), so code that reads those
fields, as Ansible's kubernetes.core does, finds them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from fakekube.api.auth.identity import ADMIN_TOKEN

if TYPE_CHECKING:
    from fakekube.cluster.pki import KeyPair

CONTEXT = "fakekube"


def kubeconfig_document(server_url: str, name: str = CONTEXT, ca_pem: bytes | None = None,
                        client: KeyPair | None = None) -> dict:
    """A kubeconfig with one cluster, one user and a current context; over TLS the cluster
    entry carries the CA (``certificate-authority-data``). The user is ``client``'s
    certificate, named ``kind-<name>`` as kind names its admin, or else a static token."""
    cluster: dict = {"server": server_url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user_name, user = name, {"token": ADMIN_TOKEN}
    if client is not None:
        user_name = f"kind-{name}"
        user = {"client-certificate-data": base64.b64encode(client.cert_pem).decode(),
                "client-key-data": base64.b64encode(client.key_pem).decode()}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user_name, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(path: Path, server_url: str, ca_pem: bytes | None = None, client: KeyPair | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(kubeconfig_yaml(kubeconfig_document(server_url, ca_pem=ca_pem, client=client)))
    return path


def kubeconfig_yaml(document: dict) -> str:
    """The document as block YAML, written here rather than by PyYAML: importing PyYAML
    was ~3 % of ``fakekube serve``'s start (cold start). It handles exactly a kubeconfig's
    shape: mappings, lists of mappings and scalars, each scalar a JSON literal (a JSON
    string is a valid YAML double-quoted scalar, ``{}`` a flow mapping)."""
    return "\n".join(_block(document, "")) + "\n"


def _block(mapping: dict, indent: str) -> Iterator[str]:
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            yield f"{indent}{key}:"
            yield from _block(value, indent + "  ")
        elif isinstance(value, list):
            yield f"{indent}{key}:" if value else f"{indent}{key}: []"
            for entry in value:  # a mapping: its first line carries the dash
                lines = list(_block(entry, indent + "  "))
                yield f"{indent}- {lines[0].lstrip()}"
                yield from lines[1:]
        else:
            yield f"{indent}{key}: {json.dumps(value)}"
