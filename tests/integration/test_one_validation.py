"""One validation for every entry point: ``Cluster(...)``, the pytest marker, the YAML config
file and ``fakekube serve``'s flags refuse the same bad value with the same message (after
the name, spelt as each entry point spells it), and ``advance`` says what it needs."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Iterator

import pytest

from fakekube import Cluster, ClusterConfig
from fakekube.cli.main import build_parser, main
from fakekube.cluster.checks import ConfigError, PortInUse, UnknownSetting
from fakekube.cluster.configfile import load_config_file

#: (ClusterConfig field, Python value, YAML text, CLI flag and value, the message after the name).
BAD_VALUES = [
    ("time_scale", -1, "timeScale: -1", ["--time-scale", "-1"], "must be >= 0, got -1"),
    ("time_scale", float("nan"), "timeScale: .nan", ["--time-scale", "nan"], "must be a finite number, got nan"),
    ("time_scale", float("inf"), "timeScale: .inf", ["--time-scale", "inf"], "must be a finite number, got inf"),
    ("nodes", -2, "nodes: -2", ["--nodes", "-2"], "must be >= 0, got -2"),
]
YAML_NAMES = {"time_scale": "timeScale", "nodes": "nodes"}
FLAGS = {"time_scale": "--time-scale", "nodes": "--nodes"}


def marker_message(pytester: pytest.Pytester, arguments: str) -> str:
    """What a test whose marker says ``arguments`` reports (its one error line)."""
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.fakekube({arguments})
        def test_it(fakekube):
            pass
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    lines = [line for line in result.outlines if line.startswith("E   ")]
    return lines[-1][len("E   "):].strip()


def cli_message(capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    assert main(["serve", *flags]) == 2
    return capsys.readouterr().err.strip()


@pytest.mark.parametrize(("field", "value", "yaml", "flag", "expected"), BAD_VALUES)
def test_a_bad_value_gets_the_same_message_from_python_yaml_and_the_cli(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: float, yaml: str, flag: list[str],
        expected: str) -> None:
    with pytest.raises(ConfigError) as python:
        Cluster(**{field: value})
    assert str(python.value) == f"{field}: {expected}"
    config = tmp_path / "cluster.yaml"
    config.write_text(yaml + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as from_file:
        load_config_file(config)
    assert str(from_file.value) == f"{YAML_NAMES[field]}: {expected}"
    assert cli_message(capsys, *flag) == f"fakekube: {FLAGS[field]}: {expected}"


@pytest.mark.parametrize(("arguments", "expected"), [
    ("time_scale=-1", "time_scale: must be >= 0, got -1"),
    ("time_scale=float('nan')", "time_scale: must be a finite number, got nan"),
    ("nodes=-2", "nodes: must be >= 0, got -2"),
    ("nodez=2", "nodez: unknown argument (did you mean nodes?)"),
])
def test_the_marker_says_what_python_says(pytester: pytest.Pytester, arguments: str, expected: str) -> None:
    assert marker_message(pytester, arguments) == f"pytest.UsageError: @pytest.mark.fakekube: {expected}"


def test_the_pytest_options_say_it_in_the_same_words(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_it(fakekube):\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--fakekube-nodes", "-2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: --fakekube-nodes: must be >= 0, got -2" in result.errlines


def test_fakekube_config_is_checked_and_named(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest

        @pytest.fixture
        def fakekube_config():
            return {"time_scle": 60}
    """)
    message = marker_message(pytester, "")
    assert message == "pytest.UsageError: the fakekube_config fixture: time_scle: unknown argument (did you mean time_scale?)"


def test_a_misspelt_name_gets_a_suggestion_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UnknownSetting) as python:
        Cluster(nodez=2)
    assert str(python.value) == "nodez: unknown argument (did you mean nodes?)"
    assert isinstance(python.value, TypeError)  # what Python says of an unexpected keyword, too
    with pytest.raises(UnknownSetting, match=r"^time_scael: unknown argument \(did you mean time_scale\?\)$"):
        ClusterConfig().replace(time_scael=2)
    with pytest.raises(UnknownSetting, match=r"^nodez: unknown argument \(did you mean nodes\?\)$"):
        ClusterConfig(nodez=1)  # type: ignore[call-arg]
    config = tmp_path / "cluster.yaml"
    config.write_text("timeScal: 2\n", encoding="utf-8")
    with pytest.raises(UnknownSetting, match=r"^timeScal: unknown key \(did you mean timeScale\?\); known keys: "):
        load_config_file(config)
    assert cli_message(capsys, "--time-sacle=2") == "fakekube: --time-sacle: unknown flag (did you mean --time-scale?)"


def test_an_abbreviated_flag_is_refused_as_a_misspelt_one(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse would take ``--node 3`` for ``--nodes 3`` (a prefix of one flag): a script that
    works by accident today and breaks when a ``--node-...`` flag is added."""
    assert build_parser().parse_known_args(["serve", "--node", "3"])[1] == ["--node", "3"]  # not taken as --nodes
    assert cli_message(capsys, "--node", "3") == "fakekube: --node: unknown flag (did you mean --nodes?)"
    assert cli_message(capsys, "--time-sc=2") == "fakekube: --time-sc: unknown flag (did you mean --time-scale?)"


@pytest.mark.parametrize(("seconds", "shown"), [(float("nan"), "nan"), (-1, "-1"), (float("inf"), "inf"),
                                                ("60", "a string ('60')")])
def test_advance_says_what_it_needs(seconds: object, shown: str) -> None:
    cluster = Cluster()
    with pytest.raises(ConfigError, match=rf"^seconds: must be a number of seconds >= 0, got {shown}$".replace("(", r"\(")
                       .replace(")", r"\)")):
        cluster.advance(seconds)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^timeout_s: must be a number of seconds >= 0, got nan$"):
        cluster.advance_until(lambda c: False, float("nan"))
    assert cluster.now.isoformat() == "2025-01-01T00:00:00+00:00"


def test_the_control_api_refuses_nan_in_the_same_words() -> None:
    import requests

    from fakekube.control import attach
    with Cluster() as cluster:
        attach(cluster)
        answer = requests.post(f"{cluster.url}/fakekube/v1/clock/advance", data='{"seconds": NaN}')
        assert answer.status_code == 400
        assert answer.json()["message"] == "seconds: must be a number of seconds >= 0, got nan"


def test_a_relative_path_in_a_config_file_is_named_as_such(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("staticPodPath: manifests\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config_file(config)
    assert str(raised.value) == ("staticPodPath: 'manifests' is not a directory (relative to the config file's "
                                 f"directory: {tmp_path / 'manifests'})")
    config.write_text("tokenAuthFile: tokens.csv\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^tokenAuthFile: 'tokens.csv' is not a file \(relative to the config "
                                          r"file's directory: .*tokens.csv\)$"):
        load_config_file(config)


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_port_in_use_is_one_line_naming_it(taken_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(PortInUse) as python:
        Cluster(port=taken_port).start()
    assert str(python.value) == (f"port {taken_port}: cannot listen on 127.0.0.1:{taken_port}: Address already in use; "
                                 "port 0 picks a free port")
    printed = cli_message(capsys, "--port", str(taken_port), "--no-system-pods", "--no-boot-cache")
    assert printed == (f"fakekube: --port {taken_port}: cannot listen on 127.0.0.1:{taken_port}: Address already in use; "
                       "--port 0 picks a free port")
