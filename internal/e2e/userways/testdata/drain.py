#!/usr/bin/env python3
"""Drains the board with 8 workers of a pool, each running pickup through
subprocess.run: `drain.py threads` uses a ThreadPoolExecutor, `drain.py
processes` a multiprocessing.Pool.

Writes "<worker> <id>" to claims after each claim and "<worker> <id> done
exit <code>" to errors when done fails. A worker stops when nothing is left
or, so that a broken pickup cannot loop for ever, once claims holds $MAX
lines."""

import concurrent.futures
import json
import multiprocessing
import os
import subprocess
import sys
import time

MAX = int(os.environ["MAX"])
NOTHING_AVAILABLE = 3  # pickup's exit code when there is nothing to claim


def append(path, line):
    # One short write to a file opened for appending: lines of concurrent
    # workers never interleave.
    with open(path, "a") as f:
        f.write(line + "\n")


def claimed():
    with open("claims") as f:
        return sum(1 for _ in f)


def pickup(*args):
    with open("pickup.log", "a") as log:
        return subprocess.run(["pickup", *args], stdout=subprocess.PIPE, stderr=log, text=True)


def worker(owner):
    while claimed() < MAX:
        r = pickup("--owner", owner, "next", "--json")
        if r.returncode == NOTHING_AVAILABLE:
            return
        if r.returncode != 0:
            append("errors", f"{owner} - next exit {r.returncode}")
            return
        sid = json.loads(r.stdout)["id"]
        append("claims", f"{owner} {sid}")
        time.sleep(0.01)  # the work
        d = pickup("--owner", owner, "done", sid)
        if d.returncode != 0:
            append("errors", f"{owner} {sid} done exit {d.returncode}")


def main():
    owners = [f"w{i}" for i in range(1, 9)]
    if sys.argv[1:] == ["threads"]:
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(worker, owners))
    elif sys.argv[1:] == ["processes"]:
        with multiprocessing.Pool(8) as pool:
            pool.map(worker, owners)
    else:
        sys.exit("usage: drain.py threads|processes")


if __name__ == "__main__":
    main()
