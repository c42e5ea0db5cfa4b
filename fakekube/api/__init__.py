"""The apiserver: real Kubernetes REST over a resource registry (DESIGN.md part 5).

Its sub-packages are layers; each imports only the ones listed before it
(``tests/unit/test_api_layers.py`` checks this):

1. :mod:`.machinery` — Status errors, field-error wording, name and ObjectMeta
   validation, JSON helpers: apimachinery's rules, knowing no type.
2. :mod:`.wire` — schemas, body decoding (JSON, YAML, protobuf), strict field
   validation and patches: bodies in, knowing schemas but not types.
3. :mod:`.selectors` — label and field selector grammars and matching.
4. :mod:`.table` — kubectl's printer columns (server-side Table).
5. :mod:`.registry` — :class:`~fakekube.api.registry.ResourceType`, ``Strategy``, ``Registry``.
6. :mod:`.auth` — identities and service-account tokens.
7. :mod:`.types` — the built-in types, one declaration each, next to its strategy.
8. :mod:`.admission` — the admission chain: one plugin protocol, the plugins by upstream
   name in kube-apiserver's order, webhooks and policies.
9. :mod:`.verbs` — ``APIServer`` (the verbs over the store), listing, deletion,
   subresources, discovery and OpenAPI; it runs the admission chain.
10. :mod:`.http` — the werkzeug WSGI app, routing, negotiation, watch streams, server.

``events`` (the event recorder) still lives here, above the verbs, until it moves to
the engine.
"""
