#!/usr/bin/env python3
"""Runs the workspace's test binaries side by side, each on one test thread.

Why: `cargo test` runs test binaries one after another and lets the tests of one binary share
the cores. The slow binaries hold a few long tests (`cli_learn` is a single test), so one of the
two cores idled through much of CI's test phase. Here every binary runs with
`--test-threads=1`, and `--jobs` binaries (default 2, one per core) run at a time: as many tests
run at once as before, so a test's deadlines and memory see the same load, and the cores stay
busy. The known slow binaries start first (longest first keeps the tail short).

Reads the JSON messages of `cargo test ... --no-run --message-format=json` on standard input;
each binary runs in its package's folder, as cargo runs it. Prints each binary's output whole
when it ends (never interleaved), then a summary; exits 1 when any binary failed.

    cargo test --workspace --no-run --message-format=json | python3 scripts/run_tests.py
"""
import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

# The slowest binaries of a clean-clone CI run (docs/experiments/serving.md), started first.
SLOW_FIRST = ["cli_ingest", "cli_learn", "cuad_typer", "cli_unfair_tos", "cli_acord", "cli_review"]


def test_binaries(messages):
    """(label, executable, package folder) of every test artifact, in cargo's order."""
    found = []
    for line in messages:
        line = line.strip()
        if not line.startswith("{"):
            continue
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        if not message.get("profile", {}).get("test"):
            continue
        target = message["target"]
        package = Path(message["manifest_path"]).parent
        label = f"{package.name}/{target['name']} ({'/'.join(target['kind'])})"
        found.append((label, target["name"], message["executable"], package))
    return found


def run(binary, extra):
    label, _, executable, package = binary
    started = time.monotonic()
    done = subprocess.run(
        [executable, "--test-threads=1", *extra],
        cwd=package,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    return label, done.returncode, done.stdout, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="binaries at a time (default 2)")
    parser.add_argument("extra", nargs="*", help="arguments for every test binary (after --)")
    args = parser.parse_args()
    binaries = test_binaries(sys.stdin)
    if not binaries:
        sys.exit("run_tests.py: no test binary in cargo's messages (was --no-run given?)")
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    binaries.sort(key=lambda b: rank.get(b[1], len(SLOW_FIRST)))
    started = time.monotonic()
    results = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run, b, args.extra) for b in binaries]
        for future in as_completed(futures):
            label, code, output, seconds = future.result()
            results.append((label, code, seconds))
            status = "ok" if code == 0 else f"FAILED (exit {code})"
            print(f"──── {label}: {status}, {seconds:.1f} s", flush=True)
            print(output, flush=True)
    failed = [r for r in results if r[1] != 0]
    print(f"{len(results)} test binaries, {len(failed)} failed, "
          f"{time.monotonic() - started:.0f} s wall, "
          f"{sum(r[2] for r in results):.0f} s summed over binaries")
    for label, code, _ in failed:
        print(f"  failed: {label} (exit {code})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
