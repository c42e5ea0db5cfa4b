"""Authentication: who a request is, from its credentials (kube-apiserver's authenticator chain).

In upstream's order: a client certificate verified against the cluster CA (CN is the
user, O the groups), then a bearer token — the kubeconfig's admin token, a static token
(``--token-auth-file``: ``token,user,uid,"group1,group2"``), a service-account token this
cluster issued (:mod:`.tokens`). Every authenticated user is also in
``system:authenticated``. No credentials: the anonymous user. Credentials that do not
check out are a 401 ``Unauthorized``, never anonymous (``union.NewFailOnError``).
"""

from __future__ import annotations

import io
from typing import Callable, Mapping

from fakekube.api.auth.identity import ADMIN, ADMIN_TOKEN, ANONYMOUS, UserInfo
from fakekube.api.machinery.errors import ApiError


class TokenFileError(ValueError):
    """A token-auth-file line upstream would refuse at start."""


def unauthorized() -> ApiError:
    """``responsewriters.Unauthorized``'s Status: the message is the reason's name."""
    return ApiError(401, "Unauthorized", "Unauthorized")


def parse_token_file(text: str) -> dict[str, UserInfo]:
    """``tokenfile.NewCSV``: one ``token,user,uid[,"group1,group2"]`` per line; ``#`` lines and
    blank ones skipped; a line with fewer than three fields is an error; a token given twice,
    the later line wins (upstream logs a warning)."""
    import csv  # only a --token-auth-file needs it
    found: dict[str, UserInfo] = {}
    for number, record in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not record or record[0].startswith("#") or (len(record) == 1 and not record[0].strip()):
            continue
        if len(record) < 3:
            raise TokenFileError(f"token file line {number}: token,user,uid are required, got {len(record)} field(s)")
        groups = tuple(group.strip() for group in record[3].split(",") if group.strip()) if len(record) > 3 else ()
        found[record[0]] = UserInfo(record[1], groups, record[2])
    return found


class Authenticator:
    """The request authenticator a cluster configures once."""

    __slots__ = ("static_tokens", "anonymous")

    def __init__(self, static_tokens: Mapping[str, UserInfo] | None = None, anonymous: bool = True) -> None:
        #: Static tokens (token → user), besides the admin's.
        self.static_tokens: Mapping[str, UserInfo] = {} if static_tokens is None else static_tokens
        #: kube-apiserver's ``--anonymous-auth`` (on by default).
        self.anonymous = anonymous

    def authenticate(self, authorization: str | None, client_cert_user: UserInfo | None,
                     service_account: Callable[[str], UserInfo | None]) -> UserInfo:
        """The request's user; raises 401 for credentials that do not check out.

        ``client_cert_user`` is the verified client certificate's subject (the TLS layer
        checked its chain); ``service_account`` verifies a token this cluster signed.
        """
        if client_cert_user is not None:
            return client_cert_user.with_authenticated()
        token = bearer_token(authorization)
        if token is None:
            if not self.anonymous:
                raise unauthorized()
            return ANONYMOUS
        if token == ADMIN_TOKEN:
            return ADMIN
        static = self.static_tokens.get(token)
        if static is not None:
            return static.with_authenticated()
        user = service_account(token)
        if user is None:
            raise unauthorized()
        return user.with_authenticated()


def bearer_token(authorization: str | None) -> str | None:
    """``bearertoken.AuthenticateRequest``: ``Bearer <token>`` (scheme case-insensitive);
    anything else carries no token."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token
