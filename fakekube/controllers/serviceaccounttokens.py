"""The service account token controller: legacy token Secrets are filled, and go with their account.

Upstream's kube-controller-manager (pkg/controller/serviceaccount/tokens_controller.go,
``serviceaccount-token-controller``) watches ``kubernetes.io/service-account-token``
Secrets and ServiceAccounts:

* a token Secret whose account (annotation ``kubernetes.io/service-account.name``, and
  ``kubernetes.io/service-account.uid`` when set) exists gets what it lacks: ``token`` (a
  legacy JWT naming the account and the Secret, signed with the cluster's key —
  :func:`fakekube.api.auth.tokens.issue_legacy`), ``ca.crt`` (the cluster's CA) and
  ``namespace``, and the account's uid annotation;
* a token Secret whose account does not exist is deleted (a uid precondition: a
  recreated Secret is left alone), and so are an account's token Secrets when it is deleted;
* a deleted token Secret leaves its account's ``secrets`` list.

Keys carry what the change showed (names and uids), as upstream's queue keys do, so a
Secret's key still names its account once the Secret is gone.
"""

from __future__ import annotations

import base64
from typing import Any, Iterable

from fakekube.api.auth.tokens import issue_legacy
from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.objects.kinds import SECRETS, SERVICE_ACCOUNTS
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

TOKEN_TYPE = "kubernetes.io/service-account-token"
NAME_ANNOTATION = "kubernetes.io/service-account.name"
UID_ANNOTATION = "kubernetes.io/service-account.uid"
TOKEN_KEY, CA_KEY, NAMESPACE_KEY = "token", "ca.crt", "namespace"
#: Separates a key's parts (none of them, names or uids, can hold it).
_SEP = "|"


class ServiceAccountTokensController:
    """Fills legacy token Secrets and removes those of missing accounts (see the module docstring)."""

    name = "serviceaccount-token-controller"
    resources = (SERVICE_ACCOUNTS, SECRETS)

    def __init__(self, root_ca_pem: str, signing_key: bytes) -> None:
        self.root_ca_pem = root_ca_pem
        self.signing_key = signing_key

    def keys_for(self, change: Change) -> Iterable[str]:
        """``sa|ns|name|uid`` for a deleted account (an existing one needs nothing);
        ``secret|ns|name|uid|account|account uid`` for any change of a token Secret."""
        obj = change.obj
        if change.resource == SERVICE_ACCOUNTS.plural:
            if change.type != DELETED:
                return []
            return [_SEP.join(("sa", change.namespace, change.name, obj["metadata"].get("uid") or ""))]
        if obj.get("type") != TOKEN_TYPE:
            return []
        annotations = obj["metadata"].get("annotations") or {}
        account = annotations.get(NAME_ANNOTATION) or ""
        if not account:
            return []
        return [_SEP.join(("secret", change.namespace, change.name, obj["metadata"].get("uid") or "", account,
                           annotations.get(UID_ANNOTATION) or ""))]

    def reconcile(self, key: str, ctx: Context) -> None:
        kind, namespace, name, uid, *account = key.split(_SEP)
        if kind == "sa":
            if _account(ctx, namespace, name, uid) is None:
                for token in _tokens_of(ctx, namespace, name, uid):
                    _delete(ctx, token)
            return
        account_name, account_uid = account
        secret = ctx.get(SECRETS, name, namespace=namespace)
        if secret is None or (uid and secret["metadata"].get("uid") != uid):
            self._forget(ctx, namespace, account_name, account_uid, name)
            return
        found = _account(ctx, namespace, account_name, account_uid)
        if found is None:
            _delete(ctx, secret)
        else:
            self._fill(ctx, found, secret)

    def _fill(self, ctx: Context, account: Obj, secret: Obj) -> None:
        """``generateTokenIfNeeded``: write what the Secret lacks, with the account's annotations."""
        data = dict(secret.get("data") or {})
        wanted = {CA_KEY: _b64(self.root_ca_pem)} if data.get(CA_KEY) != _b64(self.root_ca_pem) else {}
        if not data.get(NAMESPACE_KEY):
            wanted[NAMESPACE_KEY] = _b64(secret["metadata"]["namespace"])
        if not data.get(TOKEN_KEY):
            wanted[TOKEN_KEY] = _b64(issue_legacy(self.signing_key, account, secret["metadata"]["name"]))
        if not wanted:
            return
        meta = dict(secret["metadata"])
        meta["annotations"] = {**(meta.get("annotations") or {}), NAME_ANNOTATION: account["metadata"]["name"],
                               UID_ANNOTATION: account["metadata"]["uid"]}
        try:
            ctx.client.update(SECRETS, {**secret, "metadata": meta, "data": {**data, **wanted}})
        except ApiError as error:
            if error.code not in (404, 409):  # changed or gone meanwhile: its own change comes next
                raise

    def _forget(self, ctx: Context, namespace: str, account_name: str, account_uid: str, secret_name: str) -> None:
        """``removeSecretReference``: a deleted token Secret leaves its account's list."""
        account = _account(ctx, namespace, account_name, account_uid)
        if account is None:
            return
        refs = account.get("secrets") or []
        kept = [ref for ref in refs if ref.get("name") != secret_name]
        if len(kept) == len(refs):
            return
        try:
            ctx.client.update(SERVICE_ACCOUNTS, {**account, "secrets": kept})
        except ApiError as error:
            if error.code != 404:
                raise


def _account(ctx: Context, namespace: str, name: str, uid: str) -> Obj | None:
    """The account, if it exists with ``uid`` (any uid when none is given)."""
    account = ctx.get(SERVICE_ACCOUNTS, name, namespace=namespace)
    if account is None or (uid and account["metadata"].get("uid") != uid):
        return None
    return account


def _tokens_of(ctx: Context, namespace: str, name: str, uid: str) -> list[Obj]:
    """``IsServiceAccountToken``: the namespace's token Secrets naming the account (and its
    uid, when they carry one)."""
    found = []
    for secret in ctx.list(SECRETS, namespace):
        annotations = secret["metadata"].get("annotations") or {}
        if secret.get("type") == TOKEN_TYPE and annotations.get(NAME_ANNOTATION) == name and \
                annotations.get(UID_ANNOTATION, uid) in ("", uid):
            found.append(secret)
    return found


def _delete(ctx: Context, secret: Obj) -> None:
    meta = secret["metadata"]
    try:
        ctx.client.delete(SECRETS, meta["name"], meta["namespace"], uid=meta.get("uid"))
    except ApiError as error:
        if error.code not in (404, 409):  # gone already, or another Secret by that name now
            raise


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
