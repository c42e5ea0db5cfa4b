"""``fakekube serve``: run a fake cluster in the foreground for non-Python users."""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
import threading
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TextIO

if TYPE_CHECKING:  # the cluster's modules load in serve(), with the collector off (see serve)
    from fakekube.cluster import ClusterConfig


def build_parser() -> argparse.ArgumentParser:
    # allow_abbrev=False: a prefix (``--node 3``) is refused as a misspelt flag, not taken for
    # ``--nodes``; a script that works by accident breaks when a flag with that prefix is added.
    parser = argparse.ArgumentParser(prog="fakekube", description="A fake Kubernetes cluster for tests.",
                                     allow_abbrev=False)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a cluster until interrupted", allow_abbrev=False)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    serve.add_argument("--kubeconfig", default=None, help="where to write the kubeconfig (default: a temp file)")
    serve.add_argument("--config", default=None, metavar="cluster.yaml",
                       help="a YAML cluster config (docs/config.md); the flags below override its values")
    serve.add_argument("--nodes", type=int, default=None,
                       help="number of Ready worker nodes, besides the control-plane node (default 0)")
    serve.add_argument("--no-system-pods", dest="system_pods", action="store_false", default=None,
                       help="an empty cluster: no control-plane node, no kube-system pods, no add-ons (by default "
                            "the cluster looks like a new kind cluster; the config's systemPods also decides)")
    serve.add_argument("--no-metrics-server", dest="metrics_server", action="store_false", default=None,
                       help="do not serve metrics.k8s.io (by default it is served, as on kind with metrics-server, "
                            "so kubectl top works; the config's metricsServer also decides)")
    serve.add_argument("--controllers", default=None, metavar="LIST",
                       help="controllers to run, as kube-controller-manager's flag: '*' (default) is every "
                            "default controller, 'name' enables one, '-name' disables one (e.g. '*,-podgc')")
    serve.add_argument("--kubernetes-version", default=None, metavar="1.XX",
                       help="the Kubernetes release to emulate: 1.33, 1.34, 1.35 or 1.36 (default 1.36); "
                            "/version, discovery, defaults, messages and feature gates follow it")
    serve.add_argument("--enable-admission-plugins", default=None, metavar="LIST",
                       help="kube-apiserver's flag: admission plugins to run besides the default ones, "
                            "comma-separated (e.g. AlwaysPullImages,PodNodeSelector); they run in upstream's "
                            "order whatever the order here (docs/config.md)")
    serve.add_argument("--disable-admission-plugins", default=None, metavar="LIST",
                       help="kube-apiserver's flag: default admission plugins not to run, comma-separated "
                            "(e.g. ServiceAccount,ResourceQuota)")
    serve.add_argument("--seed", type=int, default=None, help="seed for names, UIDs and IPs (default 0)")
    serve.add_argument("--time-scale", type=float, default=None, metavar="K",
                       help="cluster time runs K times as fast as the wall clock (default 1: real time, like a "
                            "real cluster; 60 makes a minute pass in a second); 0 is manual time, moved only "
                            "through the control API; a --config file's timeScale wins over the default")
    serve.add_argument("--auto-advance", action="store_true", default=None,
                       help="while a client waits on a watch or followed log and no other request is in flight, "
                            "cluster time jumps to the next timer (for CI: waits take no wall time; with nobody "
                            "waiting time stands still); implies --time-scale 0 unless a scale is given")
    serve.add_argument("--no-auto-advance", dest="auto_advance", action="store_false",
                       help="no jumps over idle waits, even if the --config file's autoAdvance asks for them")
    serve.add_argument("--start-time", default=None, metavar="RFC3339|now|now-DURATION",
                       help="where cluster time starts (default now, to the second, so the ages kubectl "
                            "computes itself, as in describe, read naturally; 24 h before now with manual time "
                            "or --auto-advance, so jumps leave those ages in the past; now-72h for a longer "
                            "run); e.g. 2025-01-01T00:00:00Z with --time-scale 0 for reproducible runs")
    serve.add_argument("--authorization-mode", default=None, metavar="MODE",
                       help="kube-apiserver's flag: AlwaysAllow (the default: every caller may do everything) "
                            "or RBAC (roles and bindings decide; the kubeconfig's user stays an admin)")
    serve.add_argument("--token-auth-file", default=None, metavar="FILE",
                       help="static bearer tokens, one 'token,user,uid,\"group1,group2\"' per line (kube-apiserver's flag)")
    serve.add_argument("--tls", dest="tls", action="store_true", default=None,
                       help="serve HTTPS with a generated cluster CA, written into the kubeconfig; client "
                            "certificates it signs authenticate (default: on with --authorization-mode RBAC)")
    serve.add_argument("--no-tls", dest="tls", action="store_false", help="serve plain HTTP even with RBAC")
    serve.add_argument("--event-ttl", default=None, metavar="DURATION",
                       help="kube-apiserver's flag: how long an Event lives after its last write, a Go duration "
                            "such as 1h0m0s, 30m or 90s (default 1h; 0 keeps Events until deleted)")
    serve.add_argument("--image-policy", default=None, choices=("plausible", "exists", "missing"),
                       help="which images pull: plausible (default: made-up names and impossible tags fail, as on "
                            "a real registry), exists (every image pulls) or missing (only known images pull); "
                            "the config file's imagePolicy lists stay (docs/behaviour.md)")
    serve.add_argument("--from-snapshot", default=None, metavar="FILE",
                       help="serve the cluster a snapshot file holds (fakekube serve --snapshot-out, "
                            "Cluster.save), continuing from where it was saved with the config saved in it: only "
                            "--host, --port, --kubeconfig, --time-scale and --auto-advance apply besides, and "
                            "--kubernetes-version checks the file's (docs/snapshots.md)")
    serve.add_argument("--snapshot-out", default=None, metavar="FILE",
                       help="write the cluster's snapshot to FILE on SIGTERM or Ctrl-C, and on POST "
                            "/fakekube/v1/snapshots?save=true (docs/snapshots.md)")
    serve.add_argument("--no-boot-cache", dest="boot_cache", action="store_false", default=True,
                       help="build the kind-like boot every time instead of restoring it from the boot cache "
                            f"(also: {BOOT_CACHE_ENV}=0; docs/snapshots.md)")
    serve.add_argument("--demo", type=int, nargs="?", const=DEMO_APPS, default=None, metavar="APPS",
                       help=f"fill the cluster with a realistic demo after boot: team namespaces, Deployments, "
                            f"Services, ConfigMaps, Secrets drawn from --seed (APPS apps, default {DEMO_APPS}; "
                            f"{DEMO_NODES} worker nodes unless --nodes says)")
    return parser


#: How many apps ``serve --demo`` creates when the flag gives no number.
DEMO_APPS = 10
#: The worker nodes ``serve --demo`` runs when neither ``--nodes`` nor the config file says.
DEMO_NODES = 3
#: How far before now a flowing clock starts under ``--demo``: the demo's rollouts advance it
#: (at most ``demo.AVAILABLE_TIMEOUT_S``) before serving, and cluster timestamps ahead of the
#: wall clock would show kubectl ages as ``<invalid>``; the rest is advanced after them
#: (:func:`demo_catches_up`), so the served clock starts at the wall clock's now.
DEMO_HEAD_START_S = 600.0
#: Set to 0 (or off, false, no) to switch the boot cache off (as ``--no-boot-cache``).
BOOT_CACHE_ENV = "FAKEKUBE_BOOT_CACHE"
#: The flags a snapshot file's own config replaces (``--from-snapshot`` refuses them).
STATE_FLAGS = ("config", "nodes", "system_pods", "metrics_server", "controllers", "enable_admission_plugins", "disable_admission_plugins", "seed", "start_time",
               "authorization_mode", "token_auth_file", "tls", "event_ttl", "image_policy")


#: ``serve``'s time scale when neither a flag nor the config file gives one: real time.
SERVE_TIME_SCALE = 1.0
#: How far before the wall clock's now ``serve`` starts a clock that jumps (auto-advance or
#: manual time): a run may jump this far ahead before kubectl's own ages read ``<invalid>``.
JUMP_HORIZON = timedelta(hours=24)


def wall_clock_now() -> datetime:
    """The wall clock's now, to the second: the CLI is the one place allowed to read it."""
    return datetime.now(timezone.utc).replace(microsecond=0)


def parse_start_time(text: str) -> datetime:
    """``--start-time``: RFC 3339 with a timezone, ``now``, or ``now-DURATION`` (a Go duration:
    ``now-72h`` gives a run that may jump three days before kubectl's own ages read ``<invalid>``)."""
    if text == "now":
        return wall_clock_now()
    if text.startswith("now-"):
        from fakekube.cluster.configfile import parse_duration_s
        return wall_clock_now() - timedelta(seconds=parse_duration_s(text[len("now-"):], "now-DURATION"))
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError("--start-time needs a timezone, e.g. 2025-01-01T00:00:00Z")
    return moment


def parse_event_ttl(text: str) -> float:
    """``--event-ttl``: a Go duration (``1h0m0s``, ``30m``; ``0``), as kube-apiserver's flag takes."""
    from fakekube.cluster.configfile import parse_duration_s
    return parse_duration_s(text, "--event-ttl")


def cluster_config(args: argparse.Namespace, start_time: datetime | None,
                   event_ttl_s: float | None = None) -> ClusterConfig:
    """``serve``'s defaults, then the config file's values, then every flag that was given."""
    from fakekube.cluster.configfile import config_from_values, load_config_values
    from fakekube.engine import parse_enable_list
    chosen = load_config_values(args.config) if args.config else {}
    flags = {"seed": args.seed, "nodes": args.nodes, "kubernetes_version": args.kubernetes_version, "time_scale": args.time_scale, "start_time": start_time,
             "auto_advance": args.auto_advance, "authorization_mode": args.authorization_mode,
             "token_auth_file": args.token_auth_file, "tls": args.tls, "event_ttl_s": event_ttl_s,
             "system_pods": False if args.system_pods is False else None,
             "metrics_server": False if args.metrics_server is False else None,
             "controllers": parse_enable_list(args.controllers) if args.controllers is not None else None,
             "enable_admission_plugins": plugin_list(args.enable_admission_plugins),
             "disable_admission_plugins": plugin_list(args.disable_admission_plugins)}
    chosen.update((name, value) for name, value in flags.items() if value is not None)
    if getattr(args, "demo", None) is not None and chosen.get("nodes") is None:
        chosen["nodes"] = DEMO_NODES  # the control-plane node alone takes no demo pod (its taint)
    if args.image_policy is not None:  # the flag names the policy; the file's lists stay
        from fakekube.kubelet.registry import ImageCatalog
        catalog = chosen.get("image_policy")
        chosen["image_policy"] = (catalog.replace(policy=args.image_policy) if isinstance(catalog, ImageCatalog)
                                  else args.image_policy)
    listen = {"host": args.host, "port": args.port, "kubeconfig_path": args.kubeconfig}
    head_start = timedelta(seconds=DEMO_HEAD_START_S if getattr(args, "demo", None) is not None else 0)
    return config_from_values({**serve_defaults(chosen, head_start), **chosen, **listen})


def plugin_list(text: str | None) -> tuple[str, ...] | None:
    """An admission plugin flag's comma-separated names (None: not given)."""
    return None if text is None else tuple(name.strip() for name in text.split(",") if name.strip())


#: The flags whose values go through the checks every entry point shares (cluster/checks.py),
#: by ClusterConfig field.
CHECKED_FLAGS = {"nodes": "--nodes", "time_scale": "--time-scale", "port": "--port", "seed": "--seed"}


def check_flags(args: argparse.Namespace) -> str | None:
    """The first flag whose value ``Cluster(...)``, the marker or the config file would refuse,
    in their words (``--time-scale: must be >= 0, got -1``), or None."""
    from fakekube.cluster.checks import ConfigError, check_fields
    given = {field: getattr(args, field) for field in CHECKED_FLAGS if getattr(args, field) is not None}
    try:
        check_fields(given, CHECKED_FLAGS)
    except ConfigError as error:
        return str(error)
    return None


def check_plugin_flags(args: argparse.Namespace) -> str | None:
    """kube-apiserver's complaint about the admission plugin flags, or None."""
    from fakekube.api.admission import UnknownPlugins, check_names
    try:
        check_names(plugin_list(args.enable_admission_plugins) or (), plugin_list(args.disable_admission_plugins) or ())
    except UnknownPlugins as error:
        return str(error)
    return None


def serve_defaults(chosen: Mapping[str, Any], head_start: timedelta = timedelta(0)) -> dict[str, Any]:
    """What ``serve`` picks where it differs from ``Cluster()``, for the fields not ``chosen``.

    A black-box user expects a real cluster: kind's content (system pods) with
    metrics-server (``kubectl top``), time that flows
    with the wall clock (scale 1), starting now. Auto-advance alone means manual time plus
    jumps over idle waits (scale 0), since CI wants no wall-clock waits at all. Where the
    clock jumps (auto-advance, or manual time moved through the control API) it starts
    :data:`JUMP_HORIZON` before now, so that after jumps cluster timestamps stay behind the
    wall clock the ages kubectl computes itself (``describe``) are measured from. Time that
    flows starts ``head_start`` before now (``--demo``'s rollouts advance it before serving)."""
    time_scale = chosen.get("time_scale", 0.0 if chosen.get("auto_advance") else SERVE_TIME_SCALE)
    jumps = bool(chosen.get("auto_advance")) or time_scale == 0
    defaults = {"system_pods": True, "metrics_server": True,
                "start_time": wall_clock_now() - (JUMP_HORIZON if jumps else head_start),
                "time_scale": time_scale}
    return {name: value for name, value in defaults.items() if chosen.get(name) is None}


def describe_time(config: ClusterConfig) -> str:
    """The banner's time line: which mode runs, and how to change it."""
    scale, auto = config.time_scale, config.auto_advance
    if scale > 0:
        flows = "real time (1x)" if scale == 1 else f"{scale:g}x real time"
        if auto:
            return (f"{flows}, and jumps to the next timer while a client waits on a watch and no request is in flight; "
                    "--time-scale 0 for manual time")
        return f"{flows}; --time-scale 0 for manual time, --auto-advance to skip idle waits"
    if auto:
        return ("auto-advance: jumps to the next timer while a client waits on a watch and no request is in flight; "
                "--time-scale 1 (without --auto-advance) for real time")
    return "manual: moves only through the control API (/fakekube/v1/clock/advance); --time-scale 1 for real time"


#: How ``fakekube serve`` logs: warnings and errors (a failing reconcile, once per key, with
#: its traceback) from every fakekube logger, to stderr.
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(stream: TextIO | None = None) -> logging.Handler:
    """Send fakekube's warnings and errors to ``stream`` (stderr); returns the handler added.

    The timestamps are the wall clock's: log lines are about the process, while the
    messages name the cluster's virtual time themselves."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    return handler


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        print(f"fakekube: {unknown_flag(parser, extras)}", file=sys.stderr)
        return 2
    if args.command == "serve":
        return serve(args)
    return 2


def unknown_flag(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """What the first argument no flag takes is, as ``Cluster(...)`` and the config file say it
    of a misspelt name: ``--nodez: unknown flag (did you mean --nodes?)``."""
    from fakekube.cluster.checks import unknown
    first = extras[0]
    if not first.startswith("-"):
        return f"unexpected argument {first!r}"
    return str(unknown(first.split("=", 1)[0], _flags(parser), "flag"))


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every long flag of ``parser`` and its subcommands."""
    found: list[str] = []
    for action in parser._actions:  # argparse keeps no public list of them
        found += [flag for flag in action.option_strings if flag.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                found += _flags(command)
    return found


def serve(args: argparse.Namespace) -> int:
    """Run a cluster until SIGTERM or Ctrl-C.

    Startup (importing the cluster's modules, building it) makes objects that live as long
    as the process, so it runs with the garbage collector off: the ~100 collections it
    would trigger find next to nothing, and :func:`freeze_startup_heap` then sets the lot
    aside without a full collection before the first answer (docs/performance.md).
    """
    gc.disable()
    try:
        return _serve(args)
    finally:
        gc.enable()  # freeze_startup_heap enabled it already unless startup failed


def _serve(args: argparse.Namespace) -> int:
    from fakekube.cluster import Cluster
    from fakekube.control import attach_on_first_use as attach_control
    from fakekube.engine import freeze_startup_heap
    problem = check_flags(args)
    if problem is not None:
        print(f"fakekube: {problem}", file=sys.stderr)
        return 2
    if args.kubernetes_version is not None:
        from fakekube.objects.versions import UnsupportedVersion, release
        try:
            release(args.kubernetes_version)
        except UnsupportedVersion as exc:
            print(f"fakekube: --kubernetes-version: {exc}", file=sys.stderr)
            return 2
    try:
        start_time = parse_start_time(args.start_time) if args.start_time is not None else None
    except ValueError as exc:
        print(f"fakekube: bad --start-time: {exc}", file=sys.stderr)
        return 2
    try:
        event_ttl_s = parse_event_ttl(args.event_ttl) if args.event_ttl is not None else None
    except ValueError as exc:
        print(f"fakekube: bad {exc}", file=sys.stderr)
        return 2
    plugins_problem = check_plugin_flags(args)
    if plugins_problem is not None:
        print(f"fakekube: {plugins_problem}", file=sys.stderr)
        return 2
    try:
        if args.from_snapshot is not None:
            cluster = load_snapshot(args)
            config = cluster.config
            boot = f"loaded from {args.from_snapshot}"
        else:
            config = cluster_config(args, start_time, event_ttl_s)
            cluster, boot = build_cluster(config, boot_cache_enabled(args), start_is_fixed(args))
    except ValueError as exc:
        if args.from_snapshot is not None:
            print(f"fakekube: --from-snapshot {args.from_snapshot}: {exc}", file=sys.stderr)
        else:
            print(f"fakekube: bad --config {args.config}: {exc}" if args.config else f"fakekube: {exc}", file=sys.stderr)
        return 2
    demo = populate_demo(cluster, args)
    if demo is None:
        return 2
    configure_logging()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    from fakekube.cluster.checks import PortInUse
    try:
        cluster.start()
    except PortInUse as taken:  # one line naming the port, not a socket traceback
        print(f"fakekube: {taken.named('--port')}", file=sys.stderr)
        return 2
    with cluster:
        attach_control(cluster, snapshot_out=args.snapshot_out)
        freeze_startup_heap()
        print(f"fakekube: serving Kubernetes {config.kubelet_version} at {cluster.url}", flush=True)
        print(f"fakekube: kubeconfig written to {cluster.kubeconfig}", flush=True)
        print(f"fakekube: try: kubectl --kubeconfig {cluster.kubeconfig} get nodes", flush=True)
        print(f"fakekube: time: {describe_time(config)}", flush=True)
        print(f"fakekube: boot: {boot}", flush=True)
        if demo:
            print(f"fakekube: demo: {demo}", flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        code = write_snapshot_out(cluster, args.snapshot_out)
    print("fakekube: stopped", flush=True)
    return code


def populate_demo(cluster: Any, args: argparse.Namespace) -> str | None:
    """``--demo``: the demo created before serving (so no client sees it half made, and its
    advances do not race the served clock), then a flowing clock brought to now; the banner's
    demo line, "" without the flag, or None after printing why the flag's value is refused."""
    if args.demo is None:
        return ""
    from fakekube.cluster import demo
    from fakekube.cluster.checks import ConfigError
    seed = args.seed if args.seed is not None else cluster.config.seed
    try:
        demo.check_arguments(seed, args.demo, apps_name="--demo")
    except ConfigError as error:
        print(f"fakekube: {error}", file=sys.stderr)
        return None
    objects = cluster.populate(seed, apps=args.demo)
    if demo_catches_up(args, cluster.config):
        cluster.advance(max(0.0, (wall_clock_now() - cluster.now).total_seconds()))
    counts = {kind: sum(1 for obj in objects if obj["kind"] == kind) for kind in demo.KINDS}
    shown = ", ".join(f"{count} {kind}{'' if count == 1 else 's'}" for kind, count in counts.items())
    return f"{shown} from seed {seed}, all rolled out (kubectl get deploy -A -l app.kubernetes.io/part-of)"


def demo_catches_up(args: argparse.Namespace, config: ClusterConfig) -> bool:
    """Whether the demo's clock started :data:`DEMO_HEAD_START_S` back and flows with the wall
    clock: then, once the rollouts are done, it is advanced to the wall clock's now, so the ages
    the apiserver prints (``get``) and those kubectl computes (``describe``) agree. A clock that
    jumps keeps its day's head start; a start the user chose is kept."""
    flows = config.time_scale > 0 and not config.auto_advance
    return flows and args.start_time is None and args.from_snapshot is None and not start_is_fixed(args)


def write_snapshot_out(cluster: Any, path: str | None) -> int:
    """``--snapshot-out``: the cluster as it is at the stop, to ``path``; 1 if it cannot be written."""
    if path is None:
        return 0
    try:
        cluster.save(path)
    except (OSError, TypeError) as exc:
        print(f"fakekube: --snapshot-out {path}: not written: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"fakekube: snapshot written to {path}", flush=True)
    return 0


def load_snapshot(args: argparse.Namespace) -> Any:
    """``--from-snapshot``: the saved cluster, listening where the flags say (ValueError: a
    state flag given beside it, or a file that cannot be loaded)."""
    from fakekube.cluster import Cluster
    given = [name for name in STATE_FLAGS if getattr(args, name) is not None]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise ValueError(f"{flags} cannot be given with it: the snapshot holds its cluster's config")
    runtime = {"host": args.host, "port": args.port, "kubeconfig_path": args.kubeconfig}
    if args.time_scale is not None:
        runtime["time_scale"] = args.time_scale
    if args.auto_advance is not None:
        runtime["auto_advance"] = args.auto_advance
    return Cluster.load(args.from_snapshot, kubernetes_version=args.kubernetes_version, **runtime)


def start_is_fixed(args: argparse.Namespace) -> bool:
    """Whether the start time is given (a flag or the config file), not "now": only then is
    the boot the same at every start, and so worth caching (cluster/bootcache.py)."""
    if args.start_time is not None:
        return not args.start_time.startswith("now")
    if args.config:
        from fakekube.cluster.configfile import load_config_values
        return load_config_values(args.config).get("start_time") is not None
    return False


def boot_cache_enabled(args: argparse.Namespace) -> bool:
    import os
    return bool(args.boot_cache) and os.environ.get(BOOT_CACHE_ENV, "1").lower() not in ("0", "off", "false", "no")


def build_cluster(config: "ClusterConfig", cache_enabled: bool, start_fixed: bool) -> tuple[Any, str]:
    """The cluster ``config`` makes: from the boot cache when it holds this boot
    (cluster/bootcache.py), else built (and then cached); and the banner's boot line."""
    from fakekube.cluster import Cluster
    if not cache_enabled:
        return Cluster(config), "built (boot cache off)"
    if not start_fixed:
        return Cluster(config), "built (a boot starting now is not cached: --start-time caches it)"
    from fakekube.cluster import bootcache
    return bootcache.cluster(config)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
