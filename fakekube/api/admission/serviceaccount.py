"""ServiceAccount (plugin/pkg/admission/serviceaccount).

On a pod's create:

* a pod that names no service account runs as ``default`` (``spec.serviceAccountName``,
  and the deprecated ``serviceAccount`` that mirrors it);
* the service account must exist: otherwise 403 ``error looking up service account
  NS/NAME: serviceaccount "NAME" not found`` (upstream retries ``default`` for about a
  second while its controller creates it; fakekube's controller runs at the instant the
  namespace appears, so there is nothing to wait for);
* unless ``automountServiceAccountToken: false`` on the pod (or, if the pod does not say,
  on the service account), every container and init container without a mount at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` gets a read-only one of a projected
  volume ``kube-api-access-<5 random characters>`` (appended to the pod's volumes, once):
  a bound token (expirationSeconds 3607), ``ca.crt`` from the ``kube-root-ca.crt``
  ConfigMap, and the namespace through the downward API;
* a pod without ``imagePullSecrets`` gets its service account's.

Mirror pods are not changed, and may reference no service account, secret or token
projection. A service account annotated ``kubernetes.io/enforce-mountable-secrets: "true"``
limits the secrets its pods (and their ephemeral containers) may use to the ones it lists.
The admission fields are set after the field manager ran, so managedFields do not give
them to the caller.
"""

from __future__ import annotations

from typing import Any, Iterator

from fakekube.api.admission.attributes import CREATE, UPDATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.objects.kinds import PODS, SERVICE_ACCOUNTS
from fakekube.random import SeededRandom
from fakekube.store import Store

Obj = dict[str, Any]

DEFAULT_SERVICE_ACCOUNT = "default"
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"
#: The token volume's name prefix; upstream's name generator adds five random characters.
VOLUME_PREFIX = "kube-api-access-"
VOLUME_SUFFIX_CHARS = 5
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
#: ``serviceaccount.WarnOnlyBoundTokenExpirationSeconds``: one hour and seven seconds.
TOKEN_EXPIRATION_S = 60 * 60 + 7
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
#: ``corev1.ProjectedVolumeSourceDefaultMode`` (0644), set explicitly (kubernetes#104464).
DEFAULT_MODE = 0o644
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
EPHEMERAL_CONTAINERS = "ephemeralcontainers"


class ServiceAccount(Handler):
    name = "ServiceAccount"
    operations = frozenset((CREATE, UPDATE))
    resources = {"admit": frozenset((PODS,)), "validate": frozenset((PODS,))}

    def __init__(self, store: Store, rng: SeededRandom) -> None:
        self.store = store
        #: The token volumes' name suffixes: a stream of the cluster's seeded source.
        self.rng = rng

    def admit(self, a: Attributes) -> None:
        if _ignored(a) or a.operation != CREATE:
            return
        pod = a.obj
        assert pod is not None
        if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            self.validate(a)
            return
        spec = pod.setdefault("spec", {})
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT
            spec["serviceAccount"] = DEFAULT_SERVICE_ACCOUNT  # v1's deprecated mirror of the name
        account = self._account(a, spec["serviceAccountName"])
        if _automount(account, spec):
            self._mount_token(spec)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": ref.get("name") or ""} for ref in account["imagePullSecrets"]]
        self.validate(a)

    def validate(self, a: Attributes) -> None:
        if _ignored(a):
            return
        pod = a.obj
        assert pod is not None
        spec = pod.get("spec") or {}
        if a.operation == UPDATE and a.subresource == EPHEMERAL_CONTAINERS:
            self._check_ephemeral_secrets(a, spec)
            return
        if a.operation != CREATE:
            return
        if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            _check_mirror_pod(a, spec)
            return
        if not spec.get("serviceAccountName"):
            name = (pod.get("metadata") or {}).get("name") or ""
            raise a.forbidden(f"no service account specified for pod {a.namespace}/{name}")
        account = self._account(a, spec["serviceAccountName"])
        if _enforces_mountable_secrets(account):
            problem = _unlisted_secret(account, spec)
            if problem is not None:
                raise a.forbidden(problem)

    def _account(self, a: Attributes, name: str) -> Obj:
        account = self.store.get(SERVICE_ACCOUNTS, (a.namespace, name))
        if account is None:
            raise a.forbidden(f"error looking up service account {a.namespace}/{name}: "
                              f'serviceaccount "{name}" not found')
        return account

    def _mount_token(self, spec: Obj) -> None:
        """``mountServiceAccountToken``: reuse a ``kube-api-access-`` volume the pod has, else
        name a new one; mount it in every container that mounts nothing at the path."""
        volumes = list(spec.get("volumes") or [])
        existing = next((v.get("name") for v in volumes if str(v.get("name") or "").startswith(VOLUME_PREFIX)), None)
        name = existing or VOLUME_PREFIX + self.rng.name_suffix(VOLUME_SUFFIX_CHARS)
        mounted = False
        for field in ("initContainers", "containers"):
            for container in spec.get(field) or []:
                mounts = container.get("volumeMounts") or []
                if any(mount.get("mountPath") == MOUNT_PATH for mount in mounts):
                    continue
                container["volumeMounts"] = list(mounts) + [{"name": name, "readOnly": True, "mountPath": MOUNT_PATH}]
                mounted = True
        if mounted and existing is None:
            spec["volumes"] = volumes + [{"name": name, "projected": token_volume_source()}]

    def _check_ephemeral_secrets(self, a: Attributes, spec: Obj) -> None:
        """``limitEphemeralContainerSecretReferences``."""
        name = spec.get("serviceAccountName")
        if not name:
            raise a.forbidden(f"no service account specified for pod {a.namespace}/{a.name}")
        account = self._account(a, name)
        if not _enforces_mountable_secrets(account):
            return
        allowed = {ref.get("name") for ref in account.get("secrets") or []}
        for container in spec.get("ephemeralContainers") or []:
            problem = _env_secret_problem(container, allowed, "ephemeral container", account)
            if problem is not None:
                raise a.forbidden(problem)


def token_volume_source() -> Obj:
    """``TokenVolumeSource``: a bound token, the cluster CA and the namespace, as projected."""
    return {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_S, "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": DEFAULT_MODE,
    }


def _ignored(a: Attributes) -> bool:
    """``shouldIgnore``: pods only, their main resource or ephemeral containers."""
    return a.rt.key != PODS or a.subresource not in ("", EPHEMERAL_CONTAINERS) or a.obj is None


def _automount(account: Obj, spec: Obj) -> bool:
    """The pod's ``automountServiceAccountToken`` wins, then the account's; true by default."""
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if account.get("automountServiceAccountToken") is not None:
        return bool(account["automountServiceAccountToken"])
    return True


def _enforces_mountable_secrets(account: Obj) -> bool:
    value = ((account.get("metadata") or {}).get("annotations") or {}).get(ENFORCE_MOUNTABLE_SECRETS)
    return value in ("1", "t", "T", "TRUE", "true", "True")  # strconv.ParseBool's true


def _check_mirror_pod(a: Attributes, spec: Obj) -> None:
    if spec.get("serviceAccountName"):
        raise a.forbidden("a mirror pod may not reference service accounts")
    if next(pod_secret_names(spec), None) is not None:
        raise a.forbidden("a mirror pod may not reference secrets")
    for volume in spec.get("volumes") or []:
        for source in (volume.get("projected") or {}).get("sources") or []:
            if source.get("serviceAccountToken") is not None:
                raise a.forbidden("a mirror pod may not use ServiceAccountToken volume projections")


def _unlisted_secret(account: Obj, spec: Obj) -> str | None:
    """``limitSecretReferences``: the first secret the pod uses that the account does not list."""
    name = account["metadata"]["name"]
    allowed = {ref.get("name") for ref in account.get("secrets") or []}
    for volume in spec.get("volumes") or []:
        secret = volume.get("secret")
        if isinstance(secret, dict) and secret.get("secretName") not in allowed:
            return (f'volume with secret.secretName="{secret.get("secretName") or ""}" is not allowed because '
                    f"service account {name} does not reference that secret")
    for field, label in (("initContainers", "init container"), ("containers", "container")):
        for container in spec.get(field) or []:
            problem = _env_secret_problem(container, allowed, label, account)
            if problem is not None:
                return problem
    pull_allowed = {ref.get("name") for ref in account.get("imagePullSecrets") or []}
    for index, ref in enumerate(spec.get("imagePullSecrets") or []):
        if ref.get("name") not in pull_allowed:
            return (f'imagePullSecrets[{index}].name="{ref.get("name") or ""}" is not allowed because service '
                    f"account {name} does not reference that imagePullSecret")
    return None


def _env_secret_problem(container: Obj, allowed: set[Any], label: str, account: Obj) -> str | None:
    name, account_name = container.get("name") or "", account["metadata"]["name"]
    for env in container.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("secretKeyRef")
        if isinstance(ref, dict) and ref.get("name") not in allowed:
            return (f'{label} {name} with envVar {env.get("name") or ""} referencing '
                    f'secret.secretName="{ref.get("name") or ""}" is not allowed because service account '
                    f"{account_name} does not reference that secret")
    for env_from in container.get("envFrom") or []:
        ref = env_from.get("secretRef")
        if isinstance(ref, dict) and ref.get("name") not in allowed:
            return (f'{label} {name} with envFrom referencing secret.secretName="{ref.get("name") or ""}" is not '
                    f"allowed because service account {account_name} does not reference that secret")
    return None


#: Volume sources that name a secret, and where (``podutil.VisitPodSecretNames``).
_VOLUME_SECRET_REFS = (("azureFile", "secretName"), ("cephfs", "secretRef"), ("cinder", "secretRef"),
                       ("flexVolume", "secretRef"), ("iscsi", "secretRef"), ("rbd", "secretRef"),
                       ("scaleIO", "secretRef"), ("storageos", "secretRef"), ("csi", "nodePublishSecretRef"))


def pod_secret_names(spec: Obj) -> Iterator[str]:
    """Every secret name a pod spec references: pull secrets, containers' env and envFrom,
    and its volumes."""
    for ref in spec.get("imagePullSecrets") or []:
        yield ref.get("name") or ""
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(field) or []:
            for env in container.get("env") or []:
                ref = (env.get("valueFrom") or {}).get("secretKeyRef")
                if isinstance(ref, dict):
                    yield ref.get("name") or ""
            for env_from in container.get("envFrom") or []:
                if isinstance(env_from.get("secretRef"), dict):
                    yield env_from["secretRef"].get("name") or ""
    for volume in spec.get("volumes") or []:
        yield from _volume_secret_names(volume)


def _volume_secret_names(volume: Obj) -> Iterator[str]:
    if isinstance(volume.get("secret"), dict):
        yield volume["secret"].get("secretName") or ""
    for source in (volume.get("projected") or {}).get("sources") or []:
        if isinstance(source.get("secret"), dict):
            yield source["secret"].get("name") or ""
    for kind, field in _VOLUME_SECRET_REFS:
        ref = (volume.get(kind) or {}).get(field)
        if isinstance(ref, str) and ref:
            yield ref
        elif isinstance(ref, dict):
            yield ref.get("name") or ""


def new(context: PluginContext) -> ServiceAccount:
    return ServiceAccount(context.store, context.rng.fork("admission/ServiceAccount"))
