"""The kubelet's side of a port-forward: the sandbox a pod's network lives in, and the
error containerd gives when nothing listens on the forwarded port (routing to pods and
Services is fakekube/objects/serviceroutes.py)."""

from __future__ import annotations

import hashlib


def sandbox_id(pod_uid: str) -> str:
    """A stable 64-hex sandbox id for the pod (containerd names its pause container so)."""
    return hashlib.sha256(f"sandbox/{pod_uid}".encode()).hexdigest()


def forward_error(pod_uid: str, port: int) -> str:
    """What the kubelet writes on a port-forward's error stream when nothing listens on the
    port (its ``error forwarding port`` wrapping containerd's netns dial error)."""
    sandbox = sandbox_id(pod_uid)
    netns = "cni-" + "-".join((sandbox[:8], sandbox[8:12], sandbox[12:16], sandbox[16:20], sandbox[20:32]))
    return (f"error forwarding port {port} to pod {sandbox}, uid : failed to execute portforward in network "
            f'namespace "/var/run/netns/{netns}": failed to connect to localhost:{port} inside namespace "{sandbox}", '
            f"IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 [::1]:{port}: connect: "
            f"connection refused ")
