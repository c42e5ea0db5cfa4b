"""Container behaviour is data: default ← first matching image rule ← pod annotation."""

import json

import pytest
import yaml

from fakekube.kubelet import (
    BEHAVIOUR_ANNOTATION,
    DEFAULT_BEHAVIOUR,
    BehaviourCatalog,
    ContainerBehaviour,
    LogLine,
    Timeline,
    behaviour_from_dict,
)
from fakekube.kubelet.behaviour import normalize_image


def pod(*containers: tuple[str, str], annotation: object = None) -> dict:
    metadata: dict = {"name": "p", "namespace": "default"}
    if annotation is not None:
        value = annotation if isinstance(annotation, str) else json.dumps(annotation)
        metadata["annotations"] = {BEHAVIOUR_ANNOTATION: value}
    return {"metadata": metadata, "spec": {"containers": [{"name": n, "image": i} for n, i in containers]}}


CONFIG = yaml.safe_load("""
default:
  start_delay_s: 2
images:
  - image: "busybox*"
    run_for_s: 5
    exit_code: 1
    log_lines: [[0, "starting"], [4.5, "crashing"]]
  - image: "docker.io/library/*"
    ready_after_s: 3
  - image: "*/broken:*"
    image_pull_error: true
    image_pull_failures: 2
""")


def test_default_starts_in_a_second_runs_forever_and_is_healthy() -> None:
    assert DEFAULT_BEHAVIOUR.start_delay_s == 1.0
    assert DEFAULT_BEHAVIOUR.run_for_s is None
    assert DEFAULT_BEHAVIOUR.readiness.healthy_at(0) and DEFAULT_BEHAVIOUR.liveness.healthy_at(1e9)
    assert not DEFAULT_BEHAVIOUR.pull_fails(1)
    assert BehaviourCatalog().for_container(pod(("app", "whatever:1")), "app") == DEFAULT_BEHAVIOUR


def test_first_matching_image_rule_wins_in_the_order_given() -> None:
    catalog = BehaviourCatalog.from_config(CONFIG)
    busybox = catalog.for_image("busybox:1.36")   # also matches the docker.io/library/* rule, later
    assert (busybox.run_for_s, busybox.exit_code, busybox.start_delay_s) == (5.0, 1, 2.0)
    assert busybox.log_lines == (LogLine(0.0, "starting"), LogLine(4.5, "crashing"))
    assert busybox.readiness == Timeline()
    nginx = catalog.for_image("nginx")             # matched through its normalized reference
    assert nginx.readiness == Timeline(((0.0, False), (3.0, True)))
    assert nginx.start_delay_s == 2.0              # unnamed fields come from the default
    assert catalog.for_image("quay.io/x/y:1") == catalog.default


def test_image_pull_failures_then_success() -> None:
    broken = BehaviourCatalog.from_config(CONFIG).for_image("registry.local/broken:v1")
    assert [broken.pull_fails(attempt) for attempt in (1, 2, 3)] == [True, True, False]
    assert 'image "registry.local/broken:v1"' in broken.pull_error_message("registry.local/broken:v1")


def test_annotation_overrides_for_all_containers_and_per_container() -> None:
    catalog = BehaviourCatalog.from_config(CONFIG)
    annotated = pod(("app", "busybox"), ("sidecar", "envoy"),
                    annotation={"exit_code": 3, "sidecar": {"run_for_s": None, "exit_code": 0}})
    app = catalog.for_container(annotated, "app")
    assert (app.run_for_s, app.exit_code) == (5.0, 3)         # image rule + shared annotation
    sidecar = catalog.for_container(annotated, "sidecar")
    assert (sidecar.run_for_s, sidecar.exit_code) == (None, 0)


def test_annotation_may_be_yaml_and_names_only_containers() -> None:
    annotated = pod(("app", "nginx"), ("db", "postgres"), annotation="db:\n  liveness: [[0, true], [60, false]]\n")
    db = BehaviourCatalog().for_container(annotated, "db")
    assert db.liveness.healthy_at(59) and not db.liveness.healthy_at(60)
    assert BehaviourCatalog().for_container(annotated, "app") == DEFAULT_BEHAVIOUR


def test_init_containers_are_found() -> None:
    p = pod(("app", "nginx"))
    p["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    assert BehaviourCatalog.from_config(CONFIG).for_container(p, "init").exit_code == 1
    with pytest.raises(KeyError):
        BehaviourCatalog().for_container(p, "missing")


def test_python_api_rules() -> None:
    crash = ContainerBehaviour(run_for_s=1, exit_code=2)
    catalog = BehaviourCatalog().with_image("crash*", crash).with_image("*", {"start_delay_s": 0})
    assert catalog.for_image("crashy:1") == crash
    assert catalog.for_image("other").start_delay_s == 0


def test_behaviours_are_immutable_and_replace_checks_the_copy() -> None:
    """DEFAULT_BEHAVIOUR and its timelines are shared by every container: none can change."""
    with pytest.raises(AttributeError, match="immutable"):
        DEFAULT_BEHAVIOUR.exit_code = 1
    with pytest.raises(AttributeError, match="immutable"):
        DEFAULT_BEHAVIOUR.readiness.segments = ()
    assert DEFAULT_BEHAVIOUR.replace(exit_code=3) == ContainerBehaviour(exit_code=3)
    assert DEFAULT_BEHAVIOUR.exit_code == 0
    with pytest.raises(ValueError, match="run_for_s"):
        DEFAULT_BEHAVIOUR.replace(run_for_s=-1)


@pytest.mark.parametrize(("data", "field"), [
    ({"run_for": 5}, "run_for"),
    ({"run_for_s": -1}, "run_for_s"),
    ({"exit_code": "1"}, "exit_code"),
    ({"readiness": "yes"}, "readiness"),
    ({"liveness": [[10, True], [5, False]]}, "liveness"),
    ({"log_lines": [[1, "a\nb"]]}, "log_lines"),
    ({"log_lines": [[5, "late"], [1, "early"]]}, "log_lines"),
    ({"ready_after_s": 3, "readiness": True}, "ready_after_s"),
    ({"image_pull_failures": -1}, "image_pull_failures"),
])
def test_validation_errors_name_the_field(data: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        behaviour_from_dict(data)


def test_config_errors_name_where() -> None:
    with pytest.raises(ValueError, match=r"behaviours.images\[0\].image"):
        BehaviourCatalog.from_config({"images": [{"exit_code": 1}]})
    with pytest.raises(ValueError, match=r"behaviours.images\[1\].exit_code"):
        BehaviourCatalog.from_config({"images": [{"image": "a"}, {"image": "b", "exit_code": 1.5}]})
    with pytest.raises(ValueError, match="unknown key"):
        BehaviourCatalog.from_config({"image": []})
    with pytest.raises(ValueError, match=f"{BEHAVIOUR_ANNOTATION}.app.exit_code"):
        BehaviourCatalog().for_container(pod(("app", "x"), annotation={"app": {"exit_code": "x"}}), "app")
    with pytest.raises(ValueError, match="not valid YAML"):
        BehaviourCatalog().for_container(pod(("app", "x"), annotation="{unclosed"), "app")


@pytest.mark.parametrize(("image", "full"), [
    ("nginx", "docker.io/library/nginx:latest"),
    ("nginx:1.25", "docker.io/library/nginx:1.25"),
    ("bitnami/redis", "docker.io/bitnami/redis:latest"),
    ("registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.9"),
    ("localhost:5000/app", "localhost:5000/app:latest"),
    ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
])
def test_normalize_image(image: str, full: str) -> None:
    assert normalize_image(image) == full
