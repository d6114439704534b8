"""Every script in ``bench/`` runs in a small mode (``--small``), so that none can break unnoticed.

The scripts are found, not listed: a new bench without ``--small`` fails here.  Each runs as the
operator would run it, a process of its own, and must end with status 0 having printed its
figures.  The small modes only show that a bench works; their figures mean nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
BENCHES = sorted(path for path in BENCH.glob("*.py") if "__main__" in path.read_text(encoding="utf-8"))
"""The scripts; a module they import (``population_checks.py``) is no bench of its own."""
SMALL_TIMEOUT_SECONDS = 600
"""Far above what any small mode takes (35 s for the longest, the population's, on a busy 2-core machine): only a hang ends here."""

pytestmark = pytest.mark.bench


def test_the_benches_are_found() -> None:
    assert len(BENCHES) >= 8, BENCHES


@pytest.mark.parametrize("bench", BENCHES, ids=[path.stem for path in BENCHES])
def test_bench_runs_in_its_small_mode(bench: Path) -> None:
    assert "--small" in bench.read_text(encoding="utf-8"), f"{bench.name} has no --small mode for CI"
    environment = {**os.environ, "PATH": f"/usr/games:{os.environ.get('PATH', '')}"}  # gnubg, on Debian
    finished = subprocess.run([sys.executable, str(bench), "--small"], capture_output=True, text=True,
                              timeout=SMALL_TIMEOUT_SECONDS, cwd=BENCH.parent, env=environment)
    assert finished.returncode == 0, f"{bench.name} --small exited {finished.returncode}:\n{finished.stderr[-3000:]}"
    figures = [line for line in finished.stdout.splitlines() if re.search(r"\d", line)]
    assert figures, f"{bench.name} --small printed no figures:\n{finished.stdout}"


def test_the_assistant_bench_measures_the_levels_in_its_small_mode() -> None:
    """``assistant_bench.py --levels``: a row per level, weakest first (issue 38)."""
    environment = {**os.environ, "PATH": f"/usr/games:{os.environ.get('PATH', '')}"}
    finished = subprocess.run([sys.executable, str(BENCH / "assistant_bench.py"), "--levels", "--small"],
                              capture_output=True, text=True, timeout=SMALL_TIMEOUT_SECONDS, cwd=BENCH.parent,
                              env=environment)
    assert finished.returncode == 0, finished.stderr[-3000:]
    rows = [line.split()[0] for line in finished.stdout.splitlines()[2:]]
    assert rows == ["beginner", "intermediate", "advanced", "expert", "world_class"], finished.stdout
