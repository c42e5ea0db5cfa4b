"""Service-account tokens: issued by ``serviceaccounts/token``, checked by TokenReview.

A token is a JWT shaped as upstream's (``pkg/serviceaccount/claims.go``, ``jwt.go``):
header ``{"alg":"RS256","kid":…}``, the registered claims (aud, exp, iat, iss, jti, nbf,
sub) and the private ``kubernetes.io`` claim naming the namespace, the service account
and the object the token is bound to. Claims are JSON with sorted keys, as go-jose
encodes its merged claim map.

A *legacy* token (``pkg/serviceaccount/legacy.go``) is what the token controller writes
into a ``kubernetes.io/service-account-token`` Secret: issuer ``kubernetes/serviceaccount``,
no audience, no expiry, claims naming the namespace, the Secret and the service account.
It authenticates while the Secret still holds it and the service account (same uid) exists.

Simplification: the 256 signature bytes are not RSA; they are SHAKE-256 of the signing
input under a key derived from the cluster seed. That keeps tokens deterministic (same
seed, same calls, same token) and lets TokenReview verify a token without storing it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from datetime import datetime
from typing import Any, NamedTuple

from fakekube.api.auth import identity
from fakekube.api.registry import WriteContext
from fakekube.random import SeededRandom

Obj = dict[str, Any]

_SIGNER_LABEL = "serviceaccount-token-signer"
#: An RS256 signature with a 2048-bit key is 256 bytes.
_SIGNATURE_BYTES = 256
#: go-jose's ``DefaultLeeway``: exp and nbf are checked one minute loosely.
LEEWAY_S = 60
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"


class Binding(NamedTuple):
    """The object a token is bound to (``spec.boundObjectRef``), as found in the store."""

    kind: str  # "Pod" or "Secret"
    name: str
    uid: str
    node: Obj | None = None  # a bound pod's node: {"name", "uid"?}


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _signer_key(ctx: WriteContext) -> bytes:
    return ctx.rng.secret(_SIGNER_LABEL)


def signing_key(seed: int) -> bytes:
    """The cluster's token signing key, from its seed (what ``_signer_key`` reads through the
    apiserver's random source): the token controller signs with it."""
    return SeededRandom(seed).secret(_SIGNER_LABEL)


def _sign(key: bytes, signing_input: bytes) -> bytes:
    return hashlib.shake_256(key + signing_input).digest(_SIGNATURE_BYTES)


def _header(key: bytes) -> Obj:
    """Upstream's kid is the base64url SHA-256 of the public key; ours, of the seed's key."""
    return {"alg": "RS256", "kid": b64url(hashlib.sha256(b"kid:" + key).digest())}


def signing_jwk(key: bytes) -> Obj:
    """The public key ``/openid/v1/jwks`` publishes for the signer ``key``, shaped as
    upstream's (RSA, RS256, ``use: sig``, the kid in every token's header). Its modulus
    is derived from the key, not an RSA key's: the signatures are not RSA (above), so a
    client cannot verify a token with it."""
    modulus = bytearray(hashlib.shake_256(b"modulus:" + key).digest(_SIGNATURE_BYTES))
    modulus[0] |= 0x80  # a 2048-bit modulus has its top bit set
    modulus[-1] |= 0x01  # and is odd
    return {"use": "sig", "kty": "RSA", "kid": _header(key)["kid"], "alg": "RS256",
            "n": b64url(bytes(modulus)), "e": "AQAB"}


def jwks(ctx: WriteContext) -> Obj:
    """The JSON Web Key Set of the cluster's service-account token signer."""
    return {"keys": [signing_jwk(_signer_key(ctx))]}


def claims(sa: Obj, now: datetime, expiration_s: int, audiences: list[str], jti: str,
           binding: Binding | None) -> Obj:
    """``serviceaccount.Claims`` plus the issuer ``GenerateToken`` adds."""
    meta = sa["metadata"]
    issued = int(now.timestamp())
    private: Obj = {"namespace": meta["namespace"],
                    "serviceaccount": {"name": meta["name"], "uid": meta["uid"]}}
    if binding is not None:
        private[binding.kind.lower()] = {"name": binding.name, "uid": binding.uid}
        if binding.node is not None:
            private["node"] = binding.node
    return {"aud": list(audiences), "exp": issued + expiration_s, "iat": issued, "iss": identity.ISSUER,
            "jti": jti, "kubernetes.io": private, "nbf": issued,
            "sub": identity.service_account_username(meta["namespace"], meta["name"])}


def issue(ctx: WriteContext, sa: Obj, expiration_s: int, audiences: list[str], binding: Binding | None) -> str:
    """A signed token for ``sa``; its jti is drawn from the cluster's seeded stream."""
    key = _signer_key(ctx)
    payload = claims(sa, ctx.now, expiration_s, audiences, ctx.rng.uid(), binding)
    signing_input = f"{b64url(_json(_header(key)))}.{b64url(_json(payload))}".encode()
    return f"{signing_input.decode()}.{b64url(_sign(key, signing_input))}"


#: ``serviceaccount.LegacyIssuer`` and the legacy claims' keys.
LEGACY_ISSUER = "kubernetes/serviceaccount"
LEGACY_NAMESPACE = "kubernetes.io/serviceaccount/namespace"
LEGACY_SECRET = "kubernetes.io/serviceaccount/secret.name"
LEGACY_NAME = "kubernetes.io/serviceaccount/service-account.name"
LEGACY_UID = "kubernetes.io/serviceaccount/service-account.uid"
#: A Secret labelled so refuses its legacy token (upstream's legacy token cleaner marks them).
INVALID_SINCE_LABEL = "kubernetes.io/legacy-token-invalid-since"


def issue_legacy(key: bytes, sa: Obj, secret_name: str) -> str:
    """``LegacyClaims`` signed with the cluster's key: the same for the same account and
    Secret, so the token controller writes the same token on every run."""
    meta = sa["metadata"]
    payload = {"iss": LEGACY_ISSUER, LEGACY_NAMESPACE: meta["namespace"], LEGACY_SECRET: secret_name,
               LEGACY_NAME: meta["name"], LEGACY_UID: meta["uid"],
               "sub": identity.service_account_username(meta["namespace"], meta["name"])}
    signing_input = f"{b64url(_json(_header(key)))}.{b64url(_json(payload))}".encode()
    return f"{signing_input.decode()}.{b64url(_sign(key, signing_input))}"


def verified_claims(ctx: WriteContext, token: str) -> Obj | None:
    """The claims of a token this cluster issued (signature intact), else None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    key = _signer_key(ctx)
    try:
        signature = b64url_decode(parts[2])
        payload = json.loads(b64url_decode(parts[1]))
    except (ValueError, binascii.Error):
        return None
    expected = _sign(key, f"{parts[0]}.{parts[1]}".encode())
    if not hmac.compare_digest(signature, expected) or not isinstance(payload, dict):
        return None
    return payload


class Outcome(NamedTuple):
    """What the token authenticators make of a bearer token: its user and the audiences it is
    valid for, or why the service-account authenticator refused it (``error``: upstream's
    text, a TokenReview's ``status.error`` after ``invalid bearer token``; "" when no
    authenticator claimed the token, as for a token of another issuer)."""

    user: Obj | None
    audiences: list[str]
    error: str = ""


REFUSED = Outcome(None, [])
#: go-jose's error for a signature that does not verify (``ErrCryptoFailure``).
BAD_SIGNATURE = "go-jose/go-jose: error in cryptographic primitive"


def authenticate(ctx: WriteContext, token: str, audiences: list[str]) -> tuple[Obj, list[str]] | None:
    """(UserInfo, audiences it is valid for) of a bearer token, or None when it is refused
    (:func:`examine` says why)."""
    outcome = examine(ctx, token, audiences)
    return (outcome.user, outcome.audiences) if outcome.user is not None else None


def examine(ctx: WriteContext, token: str, audiences: list[str]) -> Outcome:
    """The kubeconfig's static token is the admin; a service-account token must be ours,
    meant for one of ``audiences``, unexpired in cluster time, and its service account (and
    bound object) must still exist with the same uid — in the order upstream's
    ``jwtTokenAuthenticator`` and ``validator`` check them, with their errors."""
    if token == identity.ADMIN_TOKEN:
        return Outcome(identity.admin_user_info(), list(audiences))
    issuer = _unverified_issuer(token)
    if issuer == LEGACY_ISSUER:
        payload = verified_claims(ctx, token)
        found = _legacy_user(ctx, token, payload, audiences) if payload is not None else None
        return Outcome(found[0], found[1]) if found is not None else REFUSED
    if issuer != identity.ISSUER:
        return REFUSED  # hasCorrectIssuer: another authenticator's token, no error
    payload = verified_claims(ctx, token)
    if payload is None:
        return Outcome(None, [], BAD_SIGNATURE)
    token_audiences = [a for a in payload.get("aud") or [] if isinstance(a, str)] or list(identity.API_AUDIENCES)
    valid_for = [a for a in token_audiences if a in audiences]  # Audiences.Intersect: the token's order
    if not valid_for:
        return Outcome(None, [], f"token audiences {_go_q(token_audiences)} is invalid for the target audiences "
                                 f"{_go_q(audiences)}")
    problem = _time_problem(payload, ctx.now)
    if problem:
        return Outcome(None, [], problem)
    user, problem = _service_account_user(ctx, payload)
    return Outcome(user, valid_for) if user is not None else Outcome(None, [], problem)


def _go_q(values: list[str]) -> str:
    """A ``[]string`` as Go's ``%q`` prints it: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def _unverified_issuer(token: str) -> str:
    """``hasCorrectIssuer``'s look at a compact JWT's ``iss`` before any check ("": not a JWT)."""
    parts = token.split(".")
    if len(parts) != 3:
        return ""
    try:
        payload = json.loads(b64url_decode(parts[1]))
    except (ValueError, binascii.Error):
        return ""
    issuer = payload.get("iss") if isinstance(payload, dict) else None
    return issuer if isinstance(issuer, str) else ""


def _legacy_user(ctx: WriteContext, token: str, payload: Obj, audiences: list[str]) -> tuple[Obj, list[str]] | None:
    """``legacyValidator.Validate``: a legacy token is for the apiserver's own audiences, and
    valid while its Secret holds it (not deleting, not marked invalid) and its service
    account, same uid, exists (not deleting). Its user has no extra."""
    valid_for = [a for a in audiences if a in identity.API_AUDIENCES]
    namespace, secret_name = payload.get(LEGACY_NAMESPACE) or "", payload.get(LEGACY_SECRET) or ""
    name, uid = payload.get(LEGACY_NAME) or "", payload.get(LEGACY_UID) or ""
    if not valid_for or not (namespace and secret_name and name and uid) or \
            payload.get("sub") != identity.service_account_username(namespace, name):
        return None
    secret = ctx.store.get_object("", "secrets", namespace, secret_name)
    if secret is None or secret["metadata"].get("deletionTimestamp") or \
            ((secret["metadata"].get("labels") or {}).get(INVALID_SINCE_LABEL)):
        return None
    try:
        held = base64.b64decode((secret.get("data") or {}).get("token") or "").decode()
    except (ValueError, binascii.Error):
        return None
    if not hmac.compare_digest(held.encode(), token.encode()):
        return None
    account = ctx.store.get_object("", "serviceaccounts", namespace, name)
    if account is None or account["metadata"].get("deletionTimestamp") or account["metadata"].get("uid") != uid:
        return None
    user = {"username": identity.service_account_username(namespace, name), "uid": uid,
            "groups": identity.service_account_groups(namespace)}
    return user, valid_for


def _time_problem(payload: Obj, now: datetime) -> str:
    """go-jose's ``Claims.Validate`` (one minute's leeway) as upstream's validator words it."""
    moment = now.timestamp()
    exp, nbf = payload.get("exp"), payload.get("nbf")
    if not isinstance(exp, int) or moment > exp + LEEWAY_S:
        return "service account token has expired"
    if isinstance(nbf, int) and moment < nbf - LEEWAY_S:
        return "service account token is not valid yet"
    return ""


def _service_account_user(ctx: WriteContext, payload: Obj) -> tuple[Obj | None, str]:
    """The token's user, or upstream's ``validator.Validate`` error: its service account and
    bound objects must still exist with the uids the token names."""
    private = payload.get("kubernetes.io") or {}
    namespace = private.get("namespace") or ""
    sa_ref = private.get("serviceaccount") or {}
    account = ctx.store.get_object("", "serviceaccounts", namespace, sa_ref.get("name") or "")
    if account is None:
        return None, f'serviceaccounts "{sa_ref.get("name") or ""}" not found'
    if account["metadata"].get("uid") != sa_ref.get("uid"):
        return None, f"service account UID ({account['metadata'].get('uid')}) does not match claim ({sa_ref.get('uid')})"
    extra: Obj = {}
    pod = private.get("pod")
    if pod is not None:
        problem = _bound_problem(ctx, "pods", namespace, pod)
        if problem:
            return None, problem
        extra["authentication.kubernetes.io/pod-name"] = [pod["name"]]
        extra["authentication.kubernetes.io/pod-uid"] = [pod["uid"]]
    problem = _bound_problem(ctx, "secrets", namespace, private["secret"]) if private.get("secret") is not None else ""
    if problem:
        return None, problem
    node = private.get("node")
    if node is not None:
        extra["authentication.kubernetes.io/node-name"] = [node["name"]]
        if node.get("uid"):
            extra["authentication.kubernetes.io/node-uid"] = [node["uid"]]
    extra[CREDENTIAL_ID] = [f"JTI={payload.get('jti', '')}"]
    return {"username": identity.service_account_username(namespace, sa_ref.get("name", "")),
            "uid": sa_ref.get("uid", ""), "groups": identity.service_account_groups(namespace),
            "extra": dict(sorted(extra.items()))}, ""


#: The validator's error for a token whose bound pod or secret is gone.
INVALIDATED = "service account token has been invalidated"


def _bound_problem(ctx: WriteContext, plural: str, namespace: str, ref: Obj) -> str:
    """Why a token's bound pod or secret no longer holds it ("" if it does)."""
    found = ctx.store.get_object("", plural, namespace, ref.get("name") or "")
    if found is None:
        return INVALIDATED
    uid = found["metadata"].get("uid")
    if uid != ref.get("uid"):
        noun = "pod" if plural == "pods" else "secret"
        return f"{noun} UID ({uid}) does not match service account {noun} ref claim ({ref.get('uid')})"
    return ""
