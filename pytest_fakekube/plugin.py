"""The fakekube pytest plugin: fixtures, the ``fakekube`` marker, templates and options.

Clusters are built once per distinct configuration per session and *reset* before
each test (a reset is instant and total), so every test gets a clean cluster without
paying for a new server. A *template* (:func:`template`) is a prepared cluster — CRDs
installed, an operator deployed and settled — made once per session (per pytest-xdist
worker: each worker is its own session) and snapshotted; every test that uses it gets
the snapshot restored (cluster/snapshot.py) instead of preparing it again. ``KUBECONFIG`` is set for the test through monkeypatch and
restored after it. An unexpected server-side error (a 500) fails the test that caused
it, with the seed in the report so the run can be replayed. With
``--fakekube-target=kubeconfig:PATH`` the fixture is instead the face of that real cluster
(pytest_fakekube/remote.py), each test in a namespace of its own (docs/pytest.md).
"""

from __future__ import annotations

import hashlib
import re
import shlex
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterator, NamedTuple, TypeVar

import pytest

if TYPE_CHECKING:  # the cluster loads with the first fixture: pytest loads this plugin in every session
    from fakekube import Cluster, ClusterConfig
    from pytest_fakekube.remote import Connection, RealCluster

MARKER = "fakekube"
_REPORT_KEY = pytest.StashKey["Cluster"]()
#: The template every test gets unless its marker names another (or ``template=None``).
DEFAULT_TEMPLATE = "default"
Prepare = TypeVar("Prepare", bound=Callable[..., None])


class Template(NamedTuple):
    """How to prepare a cluster once (``prepare(cluster)``) and the settings it needs."""

    prepare: Callable[["Cluster"], None]
    settings: dict[str, Any]


_TEMPLATES_KEY = pytest.StashKey[dict[str, Template]]()
_TEMPLATE_ATTRIBUTE = "__fakekube_template__"


def template(name: str = DEFAULT_TEMPLATE, **settings: Any) -> Callable[[Prepare], Prepare]:
    """Make ``prepare(cluster)`` the template ``name`` (a function in a conftest.py, or in the
    test module that uses it)::

        @pytest_fakekube.template("operator", nodes=3)
        def operator_installed(cluster):
            cluster.create(crd)
            cluster.create(deployment)
            cluster.advance(30)

        @pytest.mark.fakekube(template="operator")
        def test_reconcile(fakekube): ...

    ``settings`` are ClusterConfig fields the template needs (a test's marker can still
    add others: the template is then prepared for that configuration too). The template
    named ``"default"`` is used by every test that names none; ``template=None`` in a
    marker asks for an empty cluster."""
    def register(prepare: Prepare) -> Prepare:
        setattr(prepare, _TEMPLATE_ATTRIBUTE, (name, dict(settings)))
        return prepare
    return register


def templates(config: pytest.Config) -> dict[str, Template]:
    """The templates the session's conftest.py files define (found once, at first use)."""
    found = config.stash.get(_TEMPLATES_KEY, None)
    if found is None:
        found = {}
        for plugin in config.pluginmanager.get_plugins():
            if not isinstance(plugin, types.ModuleType):
                continue
            for name, declared in _declared(plugin):
                if name in found and found[name].prepare is not declared.prepare:
                    raise pytest.UsageError(f"two fakekube templates are named {name!r}: "
                                            f"{found[name].prepare.__module__} and {plugin.__name__}")
                found[name] = declared
        config.stash[_TEMPLATES_KEY] = found
    return found


def module_templates(module: types.ModuleType | None) -> dict[str, Template]:
    """The templates a test module defines itself: they win over a conftest.py's of the same
    name, as a closer fixture does."""
    return dict(_declared(module)) if module is not None else {}


def _declared(module: types.ModuleType) -> Iterator[tuple[str, Template]]:
    """(name, template) of each function :func:`template` marked in ``module``, in order."""
    for value in vars(module).values():
        declared = getattr(value, _TEMPLATE_ATTRIBUTE, None)
        if declared is not None:
            yield declared[0], Template(value, declared[1])


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fakekube", "fake Kubernetes cluster")
    group.addoption("--fakekube-seed", type=int, default=None, help="seed for every fakekube cluster (default 0)")
    group.addoption("--fakekube-nodes", type=int, default=None, help="default number of nodes (default 0)")
    group.addoption("--fakekube-kubernetes-version", default=None, metavar="1.XX",
                    help="the Kubernetes release every fakekube cluster emulates: 1.33, 1.34, 1.35 or 1.36 "
                         "(default 1.36); the marker's kubernetes_version= wins for its test")
    group.addoption("--fakekube-image-policy", default=None, choices=("plausible", "exists", "missing"),
                    help="which images pull in every cluster (default plausible; a test's marker may say "
                         "image_policy=...)")
    group.addoption("--fakekube-timeline", default="failed", choices=TIMELINE_WHEN,
                    help="for which tests to write the cluster's timeline (an HTML page): failed (default), "
                         "all or none")
    group.addoption("--fakekube-timeline-dir", default=None, metavar="DIR",
                    help=f"where timelines are written (default {DEFAULT_TIMELINE_DIR} under the rootdir)")
    group.addoption("--fakekube-target", default="fake", metavar="fake|kubeconfig:PATH",
                    help="where tests that use the fakekube fixture run: fake (default, an in-process cluster) or "
                         "kubeconfig:PATH (the real cluster that kubeconfig names; tests that need the virtual clock "
                         "or fault injection skip, saying why; docs/pytest.md)")


#: ``--fakekube-timeline``'s values: for which tests a timeline is written.
TIMELINE_WHEN = ("failed", "all", "none")
#: Where timelines go unless ``--fakekube-timeline-dir`` says: under the rootdir, so a CI job
#: finds them at a fixed path to keep as artifacts (pytest's temporary base moves per run).
DEFAULT_TIMELINE_DIR = ".fakekube/timelines"
_TIMELINE_WRITTEN = pytest.StashKey[str]()
#: The longest timeline file name (without ``.html``): the report's line stays within 100 columns.
MAX_TIMELINE_NAME = 72

#: The command-line options that set a ClusterConfig field, by field.
OPTIONS = {"seed": "--fakekube-seed", "nodes": "--fakekube-nodes",
           "kubernetes_version": "--fakekube-kubernetes-version", "image_policy": "--fakekube-image-policy"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fakekube(**config): settings (nodes=, seed=, kubernetes_version=, ...) "
                                       "for this test's fake cluster")
    target = config.getoption("--fakekube-target")
    if target != "fake":  # the real-cluster face loads only when a real cluster is asked for
        from pytest_fakekube.remote import TargetError, parse_target
        try:
            config.stash[_TARGET_KEY] = RealTarget(target, parse_target(target))
        except TargetError as error:
            raise pytest.UsageError(str(error)) from None
    given = {field: config.getoption(option) for field, option in OPTIONS.items()}
    if any(value is not None for value in given.values()):  # the checks load only when an option is given
        from fakekube.cluster.checks import ConfigError, check_fields
        try:
            check_fields({field: value for field, value in given.items() if value is not None}, OPTIONS)
        except ConfigError as error:
            raise pytest.UsageError(str(error)) from None


class RealTarget:
    """``--fakekube-target=kubeconfig:PATH``: the real cluster, connected at the first test."""

    def __init__(self, text: str, kubeconfig: Path | None) -> None:
        assert kubeconfig is not None
        self.text = text
        self.kubeconfig = kubeconfig
        self._connection: Connection | None = None

    def connection(self) -> "Connection":
        if self._connection is None:
            from pytest_fakekube.remote import Connection
            self._connection = Connection(self.kubeconfig)
        return self._connection


_TARGET_KEY = pytest.StashKey[RealTarget]()
_REAL_KEY = pytest.StashKey["RealCluster"]()


class ClusterPool:
    """One started cluster per distinct configuration, for the whole session."""

    def __init__(self) -> None:
        #: (config, its cluster) in the order made; found by equal config (configs hold
        #: dicts, so they are compared, not hashed: a session has a few dozen at most).
        self._clusters: list[tuple[ClusterConfig, Cluster]] = []
        #: (config, template name, its function, its snapshot): each template prepared once
        #: per config (two modules may each define a template of the same name).
        self._snapshots: list[tuple[ClusterConfig, str, Callable[..., None], Any]] = []

    def get(self, config: ClusterConfig, template: tuple[str, Template] | None = None) -> Cluster:
        """A clean cluster of ``config``: reset, or the ``template``'s snapshot restored
        (the template prepared first, the first time it is asked for)."""
        cluster = self._find(config)
        fresh = cluster is None
        if cluster is None:
            from fakekube import Cluster
            from fakekube.control import attach as attach_control
            cluster = Cluster(config).start()
            attach_control(cluster)
            self._clusters.append((config, cluster))
        if template is None:
            if not fresh:
                cluster.reset()
            return cluster
        name, prepared = template
        for made, made_name, prepare, snapshot in self._snapshots:
            if made == config and made_name == name and prepare is prepared.prepare:
                cluster.restore(snapshot)
                return cluster
        if not fresh:
            cluster.reset()
        prepared.prepare(cluster)
        self._snapshots.append((config, name, prepared.prepare, cluster.snapshot()))
        return cluster

    def _find(self, config: ClusterConfig) -> Cluster | None:
        return next((cluster for made, cluster in self._clusters if made == config), None)

    def close(self) -> None:
        for _, cluster in self._clusters:
            cluster.stop()
        self._clusters.clear()


@pytest.fixture(scope="session")
def fakekube_pool() -> Iterator[ClusterPool]:
    """The session's clusters (internal; use the ``fakekube`` fixture)."""
    pool = ClusterPool()
    yield pool
    pool.close()


@pytest.fixture
def fakekube_config() -> dict[str, Any]:
    """Override in a conftest.py to change every test's cluster settings (ClusterConfig fields)."""
    return {}


@pytest.fixture(scope="session")
def fakekube_real_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the per-test kubeconfigs of a real target are written (internal)."""
    return tmp_path_factory.mktemp("fakekube-real")


@pytest.fixture
def fakekube(request: pytest.FixtureRequest, fakekube_pool: ClusterPool, fakekube_config: dict[str, Any],
             monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    """A clean, started fake cluster; KUBECONFIG points at it for the duration of the test.
    With ``--fakekube-target=kubeconfig:PATH``, the face of that real cluster instead, in a
    namespace of the test's own (pytest_fakekube/remote.py)."""
    # The immutability guard is on under test: an in-place edit of a stored object fails
    # the test where it happens. ``fakekube_config`` or the marker may switch it off.
    settings: dict[str, Any] = {"immutability_guard": True}
    #: Each setting the test asked for, and who asked (what a real target must meet).
    explicit: dict[str, tuple[Any, str]] = {}
    for field, option in OPTIONS.items():
        value = request.config.getoption(option)
        if value is not None:
            settings[field] = value
            explicit[field] = (value, option)
    marker = request.node.get_closest_marker(MARKER)
    chosen = dict(marker.kwargs) if marker is not None else {}
    checked_settings(fakekube_config, "the fakekube_config fixture")
    checked_settings(chosen, "@pytest.mark.fakekube", also=("template",))
    settings.update(fakekube_config)
    explicit.update((field, (value, "the fakekube_config fixture")) for field, value in fakekube_config.items())
    known = {**templates(request.config), **module_templates(request.module)}
    name = chosen.pop("template", DEFAULT_TEMPLATE if DEFAULT_TEMPLATE in known else None)
    if name is not None and name not in known:
        names = ", ".join(sorted(known)) or "none is defined"
        raise pytest.UsageError(f"fakekube marker: no template named {name!r} (known: {names}); "
                                "define one with @pytest_fakekube.template(name) in a conftest.py")
    if name is not None:
        settings.update(known[name].settings)
        explicit.update((field, (value, f"template {name!r}")) for field, value in known[name].settings.items())
    settings.update(chosen)
    explicit.update((field, (value, "@pytest.mark.fakekube")) for field, value in chosen.items())
    target = request.config.stash.get(_TARGET_KEY, None)
    if target is not None:
        prepare = known[name].prepare if name is not None else None
        yield from _real_cluster(request, target, explicit, prepare, monkeypatch)  # type: ignore[misc]
        return
    from fakekube import ClusterConfig  # not at the top: see the TYPE_CHECKING import
    cluster = fakekube_pool.get(ClusterConfig(**settings), (name, known[name]) if name is not None else None)
    point_clients_at(cluster.kubeconfig, monkeypatch)
    request.node.stash[_REPORT_KEY] = cluster
    errors_before = len(cluster.internal_errors)
    yield cluster
    new_errors = cluster.internal_errors[errors_before:]
    if new_errors:
        raise AssertionError(f"fakekube answered {len(new_errors)} request(s) with a 500: {new_errors[0]!r}") from new_errors[0]


def _real_cluster(request: pytest.FixtureRequest, target: RealTarget, explicit: dict[str, tuple[Any, str]],
                  prepare: Callable[..., None] | None, monkeypatch: pytest.MonkeyPatch) -> Iterator["RealCluster"]:
    """The test's face of the real cluster: skipped when the cluster is not the one the test's
    settings ask for; the template's ``prepare`` run in the test's namespace (a real cluster
    has no snapshot to restore); what the test made deleted after it."""
    from pytest_fakekube.remote import open_face, unmet_setting
    connection = target.connection()
    unmet = unmet_setting(connection, explicit)
    if unmet is not None:
        pytest.skip(f"{unmet} (--fakekube-target={target.text})")
    face = open_face(connection, request.node.name, request.getfixturevalue("fakekube_real_folder"))
    try:
        point_clients_at(face.kubeconfig, monkeypatch)
        request.node.stash[_REAL_KEY] = face
        if prepare is not None:
            prepare(face)
        yield face
    finally:
        left = face.clean_up()
    if left:
        raise AssertionError(f"could not delete what the test made on the real cluster: {'; '.join(left)}")


def checked_settings(settings: dict[str, Any], source: str, also: tuple[str, ...] = ()) -> None:
    """ClusterConfig fields from ``source`` (the marker, ``fakekube_config``), checked as
    ``Cluster(...)``, the config file and the CLI check theirs (fakekube/cluster/checks.py):
    a misspelt name gets a suggestion, a bad value the shared message, both naming ``source``."""
    from fakekube.cluster import ClusterConfig
    from fakekube.cluster.checks import ConfigError, check_fields, known_names
    try:
        known_names(settings, (*ClusterConfig.__slots__, *also), "argument")
        check_fields({name: value for name, value in settings.items() if name not in also})
    except ConfigError as error:
        raise pytest.UsageError(f"{source}: {error}") from None


def point_clients_at(kubeconfig: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set KUBECONFIG for this test only — also where the official client cached it.

    ``kubernetes.config`` reads KUBECONFIG once, at import, into a module constant; a
    test's ``load_kube_config()`` would otherwise ignore the variable we set.
    """
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    kube_config = sys.modules.get("kubernetes.config.kube_config")
    if kube_config is not None and hasattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION"):
        monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", kubeconfig)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing test's report gets a ``fakekube`` section (Cluster.report: events, nodes, pods,
    why pods are Pending, controller errors, the replay command) and the path of its timeline."""
    report = yield
    face = item.stash.get(_REAL_KEY, None)
    if face is not None:
        return _real_report(item, face, report)
    cluster = item.stash.get(_REPORT_KEY, None)
    if cluster is None:
        return report
    when = item.config.getoption("--fakekube-timeline")
    wanted = report.failed and when != "none" or (when == "all" and report.when == "call")
    if wanted and _TIMELINE_WRITTEN not in item.stash:  # one page per test: its first failing phase's
        item.stash[_TIMELINE_WRITTEN] = _write_timeline(item, cluster)
    if report.failed:
        replay = replay_command(item, cluster.config.seed)
        try:
            text = cluster.report(replay)
        except Exception as error:  # the report never hides the failure it is about
            text = f"seed: {cluster.config.seed}\nreport failed: {error!r}\nreplay: {replay}"
        written = item.stash.get(_TIMELINE_WRITTEN, "")
        report.sections.append(("fakekube", text + (f"\ntimeline: {written}" if written else "")))
    return report


def _real_report(item: pytest.Item, face: "RealCluster", report: pytest.TestReport) -> pytest.TestReport:
    """A failing test's ``fakekube`` section on a real cluster: what it is, the test
    namespace's events and pods, the nodes, and how to run the test there again — no seed,
    cluster time or timeline (a real cluster has no virtual clock to replay or draw)."""
    if not report.failed:
        return report
    target = item.config.stash[_TARGET_KEY].text
    replay = f"pytest {shlex.quote(item.nodeid)} --fakekube-target={shlex.quote(target)}"
    from pytest_fakekube.remote import real_report
    try:
        text = real_report(face, target, replay)
    except Exception as error:  # the report never hides the failure it is about
        text = f"a real cluster ({target}), namespace {face.namespace}\nreport failed: {error!r}\nreplay: {replay}"
    report.sections.append(("fakekube", text))
    return report


def replay_command(item: pytest.Item, seed: int) -> str:
    """The command that runs this one test again with the cluster's seed (from the rootdir:
    node ids are relative to it)."""
    return f"pytest {shlex.quote(item.nodeid)} --fakekube-seed {seed}"


def timeline_path(item: pytest.Item) -> Path:
    """Where this test's timeline goes: the directory option (or the default under the rootdir),
    then the test's node id made a file name (a long one cut, with a digest of the whole)."""
    folder = item.config.getoption("--fakekube-timeline-dir") or DEFAULT_TIMELINE_DIR
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid).strip("_") or "test"
    if len(name) > MAX_TIMELINE_NAME:
        digest = hashlib.sha256(item.nodeid.encode()).hexdigest()[:8]
        name = f"{name[:MAX_TIMELINE_NAME - 9]}-{digest}"
    return item.config.rootpath / folder / f"{name}.html"


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to the rootdir when it is under it (short enough for a 100-column log)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _write_timeline(item: pytest.Item, cluster: "Cluster") -> str:
    """Write the test's timeline; a failure to write is said in its place, never raised."""
    path = timeline_path(item)
    try:
        cluster.timeline(path)
    except Exception as error:  # a full disk or a broken cluster is said, never a new failure
        return f"not written ({error!r})"
    return _shown(path, item.config.rootpath)
