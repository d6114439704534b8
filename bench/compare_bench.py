"""The pipeline's CPU per mail, this checkout against another commit, measured side by side.

    python bench/compare_bench.py BASE [--moves 300] [--rounds 6] [--small]

A change worth a few tenths of a millisecond is smaller than this machine's speed moves from run
to run and from hour to hour, so two checkouts timed one after the other say little.  This runs
both at once, each the scripted games of ``bench/profile_bench.py`` (``--child``: the real
pipeline, Maildir and SQLite) with its own code, each pinned by ``taskset`` to a core of its own,
and swaps the cores every round: both meet the same machine, and a core slower than the other
counts against each the same number of times.  The figure is the thread CPU
(``time.thread_time``) of the pipeline's worker threads, where a mail is applied and its send
recorded (``MailPipeline._apply`` and ``_record_and_let_go``), per mail applied: the scripted
players and the event loop are left out.  BASE is checked out in a temporary git worktree.

Printed: each round's two figures, then the means and the mean difference with its standard
error.  Without two cores the rounds run one after the other.  ``--small``: this checkout against
itself, 20 mails, one round, for CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MEASURED = ("_apply", "_record_and_let_go")
"""The MailPipeline methods that run in worker threads: applying a mail, recording a send."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", nargs="?", default="HEAD", help="the commit to compare with (default HEAD)")
    parser.add_argument("--moves", type=int, default=300, help="mails applied per run (default 300)")
    parser.add_argument("--rounds", type=int, default=6, help="runs of each, side by side (default 6)")
    parser.add_argument("--small", action="store_true", help="this checkout against itself, 20 mails, for CI")
    parser.add_argument("--measure", metavar="ROOT", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        print(measure(Path(options.measure), options.moves))
        return
    if options.small:
        compare(ROOT, ROOT, 20, 1, "this checkout")
        return
    with tempfile.TemporaryDirectory(prefix="pbem-compare-") as temporary:
        base = Path(temporary) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(base), options.base],
                       check=True)
        try:
            compare(base, ROOT, options.moves, options.rounds, options.base)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)


def compare(base: Path, current: Path, moves: int, rounds: int, base_name: str) -> None:
    cores = sorted(os.sched_getaffinity(0))
    side_by_side = len(cores) >= 2
    print(f"the pipeline's worker-thread CPU per mail applied, {moves} mails a run, {base_name} against this "
          f"checkout, {'side by side on cores ' + str(cores[:2]) if side_by_side else 'one after the other'}:")
    figures: dict[str, list[float]] = {"base": [], "current": []}
    for number in range(rounds):
        order = [("base", base), ("current", current)]
        pinned = {name: cores[(index + number) % 2] if side_by_side else None for index, (name, _) in enumerate(order)}
        if side_by_side:
            runs = {name: _start(root, moves, pinned[name]) for name, root in order}
            for name, run in runs.items():
                figures[name].append(_figure(name, run))
        else:
            for name, root in order:
                figures[name].append(_figure(name, _start(root, moves, None)))
        print(f"  round {number + 1}: {base_name} {figures['base'][-1]:.2f} ms (core {pinned['base']}), "
              f"this checkout {figures['current'][-1]:.2f} ms (core {pinned['current']})")
    differences = [now - then for then, now in zip(figures["base"], figures["current"])]
    error = (f"standard error {statistics.stdev(differences) / len(differences) ** 0.5:.2f}, {len(differences)} rounds"
             if len(differences) > 1 else "one round: no standard error")
    print(f"  means: {base_name} {statistics.mean(figures['base']):.2f} ms, this checkout "
          f"{statistics.mean(figures['current']):.2f} ms; difference {statistics.mean(differences):+.2f} ms ({error})")


def _start(root: Path, moves: int, core: int | None) -> subprocess.Popen[str]:
    """One run of ``--measure``: the checkout's own code (``PYTHONPATH``), this file's harness."""
    command = [sys.executable, __file__, "--measure", str(root), "--moves", str(moves)]
    if core is not None:
        command = ["taskset", "-c", str(core), *command]
    environment = {**os.environ, "PYTHONPATH": str(root), "PATH": f"/usr/games:{os.environ.get('PATH', '')}"}
    return subprocess.Popen(command, cwd=root, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _figure(name: str, run: subprocess.Popen[str]) -> float:
    out, err = run.communicate()
    if run.returncode != 0:
        sys.exit(f"the run of {name} failed ({run.returncode}):\n{err[-2000:]}")
    return float(out.split()[-1])


def measure(root: Path, moves: int) -> float:
    """Play ``moves`` mails with the code at ``root``; the worker threads' CPU per mail (ms)."""
    sys.path[:0] = [str(root), str(root / "bench")]  # the checkout's own bench and its rig
    import bench.profile_bench as profile_bench  # noqa: PLC0415
    import pbem.daemon.pipeline as pipeline  # noqa: PLC0415

    spent = [0.0]
    for name in MEASURED:
        setattr(pipeline.MailPipeline, name, _timed(getattr(pipeline.MailPipeline, name), spent))
    with tempfile.TemporaryDirectory(prefix="pbem-compare-run-") as temporary:
        figures = Path(temporary) / "figures.txt"
        os.environ["PBEM_PROFILE_FIGURES"] = str(figures)
        sys.argv = ["profile_bench", "--child", "--moves", str(moves)]
        profile_bench.main()
        applied = float(figures.read_text(encoding="utf-8").split()[0])
    return 1000 * spent[0] / applied


def _timed(method: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    def timed(*arguments: Any, **keywords: Any) -> Any:
        started = time.thread_time()
        try:
            return method(*arguments, **keywords)
        finally:
            spent[0] += time.thread_time() - started
    return timed


if __name__ == "__main__":
    main()
