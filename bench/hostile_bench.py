"""The worst time and memory the service spends on one hostile mail.

    python bench/hostile_bench.py [--max-bytes 2000000] [--repeat 3] [--small]

The corpus is the tests' own (tests/hostile_corpus.py): each mail as large as ``max_mail_bytes``
allows.  Each goes through the real pipeline (`MailPipeline._apply`: record, read, apply in one
transaction on SQLite, queue the answer), as a fresh mail each time.  Time is
the best of ``--repeat`` runs (wall clock, without tracing); memory is the peak that Python's
tracemalloc sees in one further run.  Goal: at most 0.2 s and 50 MB for every mail.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from functools import partial

from rig import SERVICE, scratch, write_config

from hostile_corpus import hostile_mails  # (tests: the rig puts it on the path)
from pbem.daemon.pipeline import MailPipeline
from pbem.mail.headers import message_id_of
from pbem.mail.sinks import MaildirSink
from pbem.mail.sources import MaildirSource
from pbem.service import handle_mail
from pbem.store.db import create_schema, make_engine

GOAL_SECONDS = 0.2
GOAL_BYTES = 50 * 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-bytes", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", action="store_true",
                        help="a quick run that only shows the bench works (CI): 20 KB mails, once each")
    args = parser.parse_args()
    if args.small:
        args.max_bytes, args.repeat = 20_000, 1
    with scratch() as directory:
        config = write_config(directory, limits={"max_mail_bytes": args.max_bytes})
        engine = make_engine(config.database.url)
        create_schema(engine)
        pipeline = MailPipeline(engine, MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir),
                                partial(handle_mail, config=config))
        rows = []
        for number, (name, raw) in enumerate(hostile_mails(SERVICE[0], args.max_bytes)):
            seconds = []
            for attempt in range(args.repeat + 1):
                fresh = raw.replace(b"Message-ID: <corpus", f"Message-ID: <{number}.{attempt}".encode(), 1)
                if attempt == args.repeat:
                    tracemalloc.start()
                    pipeline._apply(fresh, message_id_of(fresh))
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                else:
                    started = time.perf_counter()
                    result = pipeline._apply(fresh, message_id_of(fresh))
                    seconds.append(time.perf_counter() - started)
            rows.append((name, len(raw), min(seconds), peak, result.outcome.value))
        engine.dispose()
    print(f"{'mail':24} {'bytes':>9} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, size, best, peak, outcome in rows:
        print(f"{name:24} {size:9d} {best:8.3f} {peak / 2**20:8.1f}  {outcome}")
    worst_time = max(rows, key=lambda row: row[2])
    worst_memory = max(rows, key=lambda row: row[3])
    print(f"worst time: {worst_time[2]:.3f} s ({worst_time[0]}); goal {GOAL_SECONDS} s: "
          f"{'met' if worst_time[2] <= GOAL_SECONDS else 'NOT met'}")
    print(f"worst memory: {worst_memory[3] / 2**20:.1f} MB ({worst_memory[0]}); goal {GOAL_BYTES // 2**20} MB: "
          f"{'met' if worst_memory[3] <= GOAL_BYTES else 'NOT met'}")


if __name__ == "__main__":
    main()
