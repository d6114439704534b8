"""The systemd units operators copy (contrib/systemd/): valid for systemd, and saying what the
docs say.

``systemd-analyze verify`` (Debian's ``systemd`` package; it needs no systemd running) checks
each unit when it is installed: it reports unknown keys and bad values only as warnings, so any
line it prints about the unit fails the test.  It also wants ExecStart's program to exist, so
the unit is checked as a copy that starts an executable that does exist.  Without it, the units
are still parsed and their keys checked.
"""

from __future__ import annotations

import configparser
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pbem.cli import _parser

UNITS = Path(__file__).resolve().parent.parent / "contrib" / "systemd"
SINGLE = UNITS / "pbem.service"
TEMPLATE = UNITS / "pbem@.service"
INSTALLED_PBEM = "/opt/pbem/.venv/bin/pbem"


def _unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd's keys are case-sensitive
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser


@pytest.mark.parametrize("path", [SINGLE, TEMPLATE], ids=["single", "template"])
def test_the_unit_runs_pbem_serve_and_restarts_it(path: Path) -> None:
    unit = _unit(path)
    assert set(unit.sections()) == {"Unit", "Service", "Install"}
    service = unit["Service"]
    words = shlex.split(service["ExecStart"])
    assert words[0] == INSTALLED_PBEM
    arguments = _parser().parse_args(words[1:])  # a command line this pbem accepts
    assert arguments.command == "serve" and str(arguments.config) == "/etc/pbem/pbem.toml"
    assert service["Restart"] == "on-failure" and service["EnvironmentFile"] == "/etc/pbem/secrets.env"
    assert service["StateDirectory"] == "pbem"
    assert unit["Install"]["WantedBy"] == "multi-user.target"


def test_only_the_template_gives_each_daemon_its_own_web_port() -> None:
    """``%i`` is the instance name: in the single unit it is empty, and PBEM_WEB_PORT=808 would be port 808."""
    assert _unit(TEMPLATE)["Service"]["Environment"] == "PBEM_WEB_PORT=808%i"
    assert "%i" in _unit(TEMPLATE)["Unit"]["Description"]
    assert "Environment" not in _unit(SINGLE)["Service"]
    assert "%i" not in SINGLE.read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("path, installed_as", [(SINGLE, "pbem.service"), (TEMPLATE, "pbem@1.service")],
                         ids=["single", "template"])
def test_systemd_analyze_verify_finds_nothing(path: Path, installed_as: str, tmp_path: Path) -> None:
    copy = tmp_path / installed_as
    text = path.read_text(encoding="utf-8")
    assert INSTALLED_PBEM in text
    copy.write_text(text.replace(INSTALLED_PBEM, sys.executable), encoding="utf-8")
    verified = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
    said = [line for line in (verified.stdout + verified.stderr).splitlines() if installed_as in line]
    assert verified.returncode == 0 and not said, verified.stdout + verified.stderr


def test_systemd_analyze_verify_would_see_a_mistyped_key(tmp_path: Path) -> None:
    """The check above is not blind: a misspelt key is reported (as a warning, exit status 0)."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    copy = tmp_path / "pbem.service"
    copy.write_text(SINGLE.read_text(encoding="utf-8").replace(INSTALLED_PBEM, sys.executable)
                    .replace("RestartSec=", "RestartSecs="), encoding="utf-8")
    verified = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
    assert "RestartSecs" in verified.stdout + verified.stderr
