""":class:`ClusterConfig`: everything that decides a cluster's behaviour.

A :class:`~fakekube.record.FrozenRecord` rather than a frozen dataclass (cheaper
to define on every cold start); it behaves as the dataclass did: keyword or positional
arguments in the order below, equality and repr by value, attributes that cannot be set,
and ``replace()`` for a changed copy.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

from fakekube.api.admission import check_names
from fakekube.api.auth.authorizer import ALWAYS_ALLOW, RBAC
from fakekube.api.auth.identity import UserInfo
from fakekube.api.types.service_alloc import DEFAULT_NODE_PORT_RANGE, DEFAULT_SERVICE_CIDR
from fakekube.objects import versions
from fakekube.clock import DEFAULT_EPOCH
from fakekube.cluster import checks
from fakekube.cluster.nodespec import NodeSpec
from fakekube.record import FrozenRecord
from fakekube.cluster.system.config import SystemPods, as_system_pods
from fakekube.controllers.nodeipam import DEFAULT_CLUSTER_CIDR, DEFAULT_NODE_CIDR_MASK_SIZE
from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig
from fakekube.controllers.eventttl import DEFAULT_EVENT_TTL_S
from fakekube.controllers.podgc import PodGCConfig
from fakekube.controllers.servicelb import DEFAULT_LB_IP_POOL
from fakekube.engine import RateLimits
from fakekube.engine.timers import MAX_DELAY_S
from fakekube.kubelet.settings import KubeletConfig
from fakekube.kubelet.behaviour import BehaviourCatalog
from fakekube.kubelet.registry import ImageCatalog
from fakekube.scheduler.config import SchedulerConfig
from fakekube.store import DEFAULT_HISTORY_LIMIT
from fakekube.store.frozen import guard_default
from fakekube.store.history import DEFAULT_HISTORY_BYTES

#: The largest request body the apiserver reads (kube-apiserver's 3 MiB).
DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024


class ClusterConfig(FrozenRecord):
    """Everything that decides a cluster's behaviour. Same config + same calls = same cluster.

    Every argument has a default; the defaults of the nested configs are shared instances,
    which is safe because they are immutable. ``None`` for ``behaviours``,
    ``immutability_guard`` and the three mappings means their default."""

    __slots__ = (
        "seed", "nodes", "host", "port", "kubeconfig_path", "kubernetes_version", "patch_version",
        "history_limit", "history_max_bytes", "start_time", "max_body_bytes", "node_lifecycle",
        "controllers", "pod_gc", "scheduler", "kubelet", "rate_limits", "time_scale", "auto_advance",
        "cluster_cidr", "node_cidr_mask_size", "service_cidr", "service_node_port_range",
        "load_balancer_ip_pool", "behaviours", "static_pods", "static_pod_path", "immutability_guard",
        "system_pods", "metrics_server", "webhook_addresses", "remote_webhook_addresses", "authorization_mode",
        "static_tokens", "token_auth_file", "tls", "event_ttl_s", "enable_admission_plugins",
        "disable_admission_plugins", "image_policy", "extra",
    )

    seed: int
    #: A count (node-1 … node-N, alike) or node specs (fakekube/cluster/nodespec.py).
    nodes: int | tuple[NodeSpec, ...]
    host: str
    port: int
    kubeconfig_path: str | None
    #: The Kubernetes release emulated: "1.33" … "1.36" (default: the newest). Discovery,
    #: ``/version``, defaults, messages, feature gates and timings follow it
    #: (fakekube/objects/versions.py); "v1.34" is read as "1.34", anything else is refused.
    kubernetes_version: str
    #: The patch ``/version`` and the nodes' kubelets report (``v1.36.<patch>``).
    patch_version: int
    history_limit: int
    #: The change log's byte budget (object versions, marshal-sized); past it older changes
    #: drop and a watch from before them gets 410, as past ``history_limit``.
    history_max_bytes: int
    start_time: datetime
    max_body_bytes: int
    node_lifecycle: NodeLifecycleConfig
    #: kube-controller-manager's ``--controllers``: ``*`` (every default controller), ``name``,
    #: ``-name`` (names or old aliases, e.g. ``("*", "-podgc")``; see fakekube/cluster/wiring.py).
    controllers: tuple[str, ...]
    pod_gc: PodGCConfig
    #: kube-scheduler's KubeSchedulerConfiguration (profiles, plugins, back-off); None: no scheduler.
    scheduler: SchedulerConfig | None
    #: Kubelet heartbeat cadence and container back-offs.
    kubelet: KubeletConfig
    #: The controllers' retry back-off (client-go's default controller rate limiter).
    rate_limits: RateLimits
    #: 0: manual time (moves only when told). k > 0: cluster time runs k × wall time.
    time_scale: float
    #: While no client request is in flight or arriving, jump to the next timer (opt-in).
    auto_advance: bool
    #: kube-controller-manager's --cluster-cidr and --node-cidr-mask-size (node IPAM).
    cluster_cidr: str
    node_cidr_mask_size: int
    #: kube-apiserver's --service-cluster-ip-range (kind's 10.96.0.0/16; the ``kubernetes``
    #: Service takes its first address) and --service-node-port-range.
    service_cidr: str
    service_node_port_range: str
    #: The simulated cloud's addresses for LoadBalancer Services ("first-last" or a CIDR).
    load_balancer_ip_pool: str
    #: Container behaviour by image glob (and, per pod, the fakekube.io/behaviour annotation).
    behaviours: BehaviourCatalog
    #: Static pod manifests every node's kubelet runs, and a directory of more (read once).
    static_pods: tuple[dict[str, Any], ...]
    static_pod_path: str | None
    #: Check mode: any in-place edit of a stored object raises at once (on under the pytest
    #: plugin and in fakekube's own suite; it costs a frozen copy per write).
    immutability_guard: bool
    #: What a new kind cluster has besides the nodes asked for (fakekube/cluster/system/,
    #: docs/config.md "System pods"): True (the control-plane node, kube-system's pods,
    #: CoreDNS, kube-proxy, kindnet, local-path storage), False, or a SystemPods naming
    #: parts. None is the default: off in-process and under pytest, on for ``fakekube serve``.
    system_pods: SystemPods | bool | None
    #: Serve ``metrics.k8s.io`` as metrics-server does (``kubectl top``; docs/api.md
    #: "Resource metrics"), figures from container behaviour. None is the default: off
    #: in-process and under pytest (a bare 1.33 apiserver's API), on for ``fakekube serve``.
    metrics_server: bool | None
    #: Where admission webhooks live: the ``host:port`` the apiserver would dial
    #: (``<service>.<namespace>.svc:443``, or a webhook URL's host) → ``"127.0.0.1:PORT"``
    #: (docs/api.md "Admission webhooks and policies").
    webhook_addresses: dict[str, str]
    #: May the control API (``PUT /fakekube/v1/webhook-addresses``) point webhooks at
    #: anything but a loopback address? Off: whoever reaches the control API could otherwise
    #: send every admission review (objects, Secrets included) to any host.
    remote_webhook_addresses: bool
    #: kube-apiserver's ``--authorization-mode``: ``AlwaysAllow`` (every caller may do
    #: everything, the default) or ``RBAC`` (docs/api.md "Authentication and authorization").
    authorization_mode: str
    #: Static bearer tokens (token → user), as ``--token-auth-file`` lines give them.
    static_tokens: Mapping[str, UserInfo]
    #: kube-apiserver's ``--token-auth-file`` (``token,user,uid,"group1,group2"`` per line),
    #: read at cluster creation; its tokens join ``static_tokens``.
    token_auth_file: str | None
    #: Serve HTTPS with a generated CA (fakekube/cluster/pki.py; the kubeconfig carries the CA).
    #: None: on exactly when authorization is RBAC, since kubectl and client-go send no
    #: bearer token over plain HTTP.
    tls: bool | None
    #: kube-apiserver's ``--event-ttl`` in seconds (whole seconds count, as upstream's): an
    #: Event is deleted this long after its last write, and watchers see it DELETED. 0
    #: keeps Events until deleted (``fakekube/controllers/eventttl.py``).
    event_ttl_s: float
    #: kube-apiserver's ``--enable-admission-plugins`` and ``--disable-admission-plugins``:
    #: plugin names added to or taken from upstream's default set (docs/config.md
    #: "Admission plugins"); the order they run in is upstream's, whatever the order here.
    enable_admission_plugins: tuple[str, ...]
    disable_admission_plugins: tuple[str, ...]
    #: Which images pull (fakekube/kubelet/registry.py, docs/behaviour.md "Images"): a
    #: policy name — ``plausible`` (the default: made-up names and tags no release has fail,
    #: as on a real registry), ``exists`` (every image pulls) or ``missing`` (only known
    #: images pull) — or an :class:`~fakekube.kubelet.registry.ImageCatalog` with lists.
    image_policy: ImageCatalog
    extra: dict[str, Any]

    def __init__(self, seed: int = 0, nodes: int | tuple[NodeSpec, ...] = 0, host: str = "127.0.0.1",
                 port: int = 0, kubeconfig_path: str | None = None,
                 kubernetes_version: str = versions.DEFAULT_VERSION, patch_version: int = 0,
                 history_limit: int = DEFAULT_HISTORY_LIMIT, history_max_bytes: int = DEFAULT_HISTORY_BYTES,
                 start_time: datetime = DEFAULT_EPOCH, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 node_lifecycle: NodeLifecycleConfig = NodeLifecycleConfig(),
                 controllers: tuple[str, ...] = ("*",), pod_gc: PodGCConfig = PodGCConfig(),
                 scheduler: SchedulerConfig | None = SchedulerConfig(), kubelet: KubeletConfig = KubeletConfig(),
                 rate_limits: RateLimits = RateLimits(), time_scale: float = 0.0, auto_advance: bool = False,
                 cluster_cidr: str = DEFAULT_CLUSTER_CIDR, node_cidr_mask_size: int = DEFAULT_NODE_CIDR_MASK_SIZE,
                 service_cidr: str = DEFAULT_SERVICE_CIDR, service_node_port_range: str = DEFAULT_NODE_PORT_RANGE,
                 load_balancer_ip_pool: str = DEFAULT_LB_IP_POOL, behaviours: BehaviourCatalog | None = None,
                 static_pods: tuple[dict[str, Any], ...] = (), static_pod_path: str | None = None,
                 immutability_guard: bool | None = None, system_pods: SystemPods | bool | None = None,
                 metrics_server: bool | None = None, webhook_addresses: dict[str, str] | None = None,
                 remote_webhook_addresses: bool = False,
                 authorization_mode: str = ALWAYS_ALLOW, static_tokens: Mapping[str, UserInfo] | None = None,
                 token_auth_file: str | None = None, tls: bool | None = None,
                 event_ttl_s: float = DEFAULT_EVENT_TTL_S, enable_admission_plugins: tuple[str, ...] = (),
                 disable_admission_plugins: tuple[str, ...] = (), image_policy: ImageCatalog | str | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        values = dict(locals())  # the arguments by name (each field is one)
        del values["self"]
        checks.check_fields(values)  # the checks every entry point shares (ConfigError, a ValueError)
        values["behaviours"] = behaviours if behaviours is not None else BehaviourCatalog()
        values["immutability_guard"] = immutability_guard if immutability_guard is not None else guard_default()
        values["webhook_addresses"] = webhook_addresses if webhook_addresses is not None else {}
        values["static_tokens"] = static_tokens if static_tokens is not None else {}
        values["extra"] = extra if extra is not None else {}
        values["kubernetes_version"] = versions.release(kubernetes_version).version  # UnsupportedVersion (ValueError)
        if isinstance(patch_version, bool) or not isinstance(patch_version, int) or patch_version < 0:
            raise ValueError(f"patch_version must be a whole number >= 0, got {patch_version!r}")
        values["enable_admission_plugins"] = tuple(enable_admission_plugins)
        values["disable_admission_plugins"] = tuple(disable_admission_plugins)
        check_names(values["enable_admission_plugins"], values["disable_admission_plugins"])  # upstream's errors
        values["image_policy"] = (image_policy if isinstance(image_policy, ImageCatalog)
                                  else ImageCatalog.from_config(image_policy))
        if not 0 <= event_ttl_s <= MAX_DELAY_S:  # NaN too
            raise ValueError(f"event_ttl_s must be between 0 and {MAX_DELAY_S:.0f} seconds (Go's Duration range), "
                             f"got {event_ttl_s!r}")
        for name in self.__slots__:
            self._set(name, values[name])

    def __new__(cls, *args: Any, **kwargs: Any) -> "ClusterConfig":
        """Refuse a misspelt field before ``__init__`` binds the arguments: ``UnknownSetting``
        (a TypeError) with a suggestion, the words ``Cluster(...)``, the marker and the config
        file use, rather than Python's bare complaint about ``__init__``."""
        checks.known_names(kwargs, cls.__slots__, "argument")
        return super().__new__(cls)

    def replace(self, **changes: Any) -> "ClusterConfig":
        """A copy with ``changes``; a misspelt field name is refused with a suggestion
        (``UnknownSetting``, a TypeError), as ``Cluster(...)`` refuses it."""
        checks.known_names(changes, self.__slots__, "argument")
        return super().replace(**changes)

    @property
    def tls_enabled(self) -> bool:
        return self.tls if self.tls is not None else self.authorization_mode == RBAC

    @property
    def release(self) -> versions.Release:
        """The emulated release's row of the version table."""
        return versions.release(self.kubernetes_version)

    @property
    def kubelet_version(self) -> str:
        """What the nodes report (``status.nodeInfo.kubeletVersion``): /version's gitVersion."""
        return self.release.git_version(self.patch_version)

    @property
    def system(self) -> SystemPods:
        """``system_pods`` as parts (True: all, False/None: none)."""
        return as_system_pods(self.system_pods)
