"""Who is calling, and may they: authentication, impersonation and RBAC authorization.

Service-account tokens are real signed JWTs so ``TokenReview`` and ``kubectl create
token`` work; authorization is off (``AlwaysAllow``) unless the cluster asks for RBAC.

- :mod:`.identity`: the admin and anonymous users, service-account user names and groups.
- :mod:`.tokens`: issuing and verifying service-account tokens.
- :mod:`.authn`: a request's user from its certificate or bearer token (static tokens too).
- :mod:`.impersonation`: the ``Impersonate-*`` headers and their checks.
- :mod:`.attributes`: what a request asks to do (upstream's ``RequestInfoFactory``).
- :mod:`.rbac`: roles, bindings and rule matching; :mod:`.authorizer`: the chain and its 403.

The main names are re-exported here; the modules hold the rest.
"""

from fakekube.api.auth.identity import (
    ADMIN_TOKEN,
    ADMIN,
    ADMIN_USERNAME,
    UserInfo,
    admin_user_info,
    service_account_groups,
    service_account_username,
)
from fakekube.api.auth.tokens import authenticate, issue, verified_claims

__all__ = [
    "ADMIN", "ADMIN_TOKEN", "ADMIN_USERNAME", "UserInfo",
    "admin_user_info", "authenticate", "issue", "service_account_groups", "service_account_username",
    "verified_claims",
]
