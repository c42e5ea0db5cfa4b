"""Who is calling: the identities fakekube knows and the service-account tokens it signs.

Every request is served as the cluster admin (fakekube authorizes everything); service
account tokens are real signed JWTs so ``TokenReview`` and ``kubectl create token`` work.

- :mod:`.identity`: the admin user, service-account user names and groups, the issuer.
- :mod:`.tokens`: issuing and verifying service-account tokens.

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
