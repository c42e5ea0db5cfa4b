"""How long does a write wait for a webhook that drips its answer? (issue 19, item 7)

``PYTHONPATH=$PWD python benchmarks/webhook_drip.py [--policy Fail|Ignore] [--timeout-s 2]``
registers a validating webhook (``tests/integration/webhook_server.py``, HTTPS on
127.0.0.1) that sends its answer's head at once and then its body one byte a second, POSTs
a ConfigMap, and — once the webhook has the review — reads the namespace's ConfigMaps on
another connection. It prints how long each took and what the create answered. With
``timeoutSeconds`` a deadline for the whole call the create ends after about
``--timeout-s``; as a per-read timeout it waited for the whole answer, a second a byte.
Reads the wall clock (``time.perf_counter``); asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import measure
from fakekube import Cluster
from tests.integration.webhook_server import Answer, WebhookServer

SERVICE_HOST = "hooks.default.svc:443"
#: How long the create may take at most before the script gives up on it.
CLIENT_TIMEOUT_S = 600


def _request(cluster: Cluster, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=CLIENT_TIMEOUT_S)
    started = time.perf_counter()
    try:
        connection.request(method, path, None if body is None else json.dumps(body).encode(),
                           {"Content-Type": "application/json", "Accept": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        return response.status, answer, time.perf_counter() - started
    finally:
        connection.close()


def _webhook(server: WebhookServer, policy: str, timeout_s: int) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "drip"},
            "webhooks": [{"name": "drip.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "failurePolicy": policy, "timeoutSeconds": timeout_s,
                          "clientConfig": {"service": {"namespace": "default", "name": "hooks", "path": "/drip"},
                                           "caBundle": server.ca_bundle},
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                     "resources": ["configmaps"]}]}]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--policy", choices=("Fail", "Ignore"), default="Fail")
    parser.add_argument("--timeout-s", type=int, default=2, help="the webhook's timeoutSeconds")
    args = parser.parse_args()
    start = measure.Load.now()
    server = WebhookServer()
    answer_bytes: list[int] = []

    def drip(req: dict[str, Any]) -> Answer:
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": {"uid": req["uid"], "allowed": True}}).encode()
        answer_bytes.append(len(body))
        return Answer(raw=body, drip_s=1.0)
    server.handlers["/drip"] = drip
    try:
        with Cluster() as cluster:
            cluster.webhook_addresses[SERVICE_HOST] = server.address
            code, made, _ = _request(cluster, "POST", "/apis/admissionregistration.k8s.io/v1/"
                                     "validatingwebhookconfigurations", _webhook(server, args.policy, args.timeout_s))
            assert code == 201, made
            meanwhile: dict[str, Any] = {}

            def read_meanwhile() -> None:
                if server.received.wait(60):
                    meanwhile["code"], _, meanwhile["s"] = _request(
                        cluster, "GET", "/api/v1/namespaces/default/configmaps")
            reader = threading.Thread(target=read_meanwhile, daemon=True)
            reader.start()
            code, answer, create_s = _request(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                                              {"metadata": {"name": "dripped"}, "data": {"k": "v"}})
            reader.join(60)
    finally:
        server.close()
    print(f"webhook: timeoutSeconds {args.timeout_s}, failurePolicy {args.policy}, "
          f"answer {answer_bytes[0] if answer_bytes else '?'} bytes at 1 byte/s")
    print(f"create: {code} {answer.get('reason') or answer.get('metadata', {}).get('name', '')} after {create_s:.1f} s")
    if code >= 400:
        print(f"  {answer.get('message')}")
    print(f"GET on another connection meanwhile: {meanwhile.get('code')} in {meanwhile.get('s', float('nan')) * 1000:.0f} ms")
    print(measure.load_line(start, measure.Load.now()))


if __name__ == "__main__":
    main()
