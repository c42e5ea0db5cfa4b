"""``fakekube serve``: run a fake cluster in the foreground for non-Python users."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Sequence

from fakekube.cluster import Cluster, ClusterConfig


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fakekube", description="A fake Kubernetes cluster for tests.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a cluster until interrupted")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    serve.add_argument("--kubeconfig", default=None, help="where to write the kubeconfig (default: a temp file)")
    serve.add_argument("--nodes", type=int, default=0, help="number of Ready nodes (default 0)")
    serve.add_argument("--seed", type=int, default=0, help="seed for names, UIDs and IPs (default 0)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    return 2


def serve(args: argparse.Namespace) -> int:
    if args.nodes < 0:
        print("fakekube: --nodes must be >= 0", file=sys.stderr)
        return 2
    config = ClusterConfig(seed=args.seed, nodes=args.nodes, host=args.host, port=args.port,
                           kubeconfig_path=args.kubeconfig)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Cluster(config) as cluster:
        print(f"fakekube: serving Kubernetes v{config.kubernetes_version} at {cluster.url}", flush=True)
        print(f"fakekube: kubeconfig written to {cluster.kubeconfig}", flush=True)
        print(f"fakekube: try: kubectl --kubeconfig {cluster.kubeconfig} get nodes", flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    print("fakekube: stopped", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
