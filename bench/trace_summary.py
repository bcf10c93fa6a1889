"""Summary of a tessera Chrome trace (TESSERA_TRACE=f.json): time per kernel, the GPU tasks' own
spans by lane, the events of the last --window milliseconds in start order (one call of a
repeated benchmark), and with --chain KERNEL that kernel's tasks of the last call one after the
other (a factorization's panels: each one's span from its enqueue, and the wait before it since
the previous one completed); with --stages, each kernel's window (its first start and last end
from the trace's first event: the stages of a pipeline such as the eigensolver's); with --workers
FROM:TO, each worker's busy time by kernel between those milliseconds from the first event;
with --gaps FROM:TO, each worker's idle stretches of more than --min-gap ms there (the task
before and after each: a GPU task's span starts when its kernel's enqueue began); with --groups
NAME=K1,K2;NAME2=..., one line of each group of kernels' window in seconds (its kernels' first
start to their last end: the stages of the eigensolver, bench/eig_stages.sh).

  python3 bench/trace_summary.py f.json --window 10 [--chain getrf] [--stages] [--workers 0:500]
                                        [--gaps 4000:6000 --min-gap 30]
                                        [--groups "band=geqrt;q2=hb2st_apply"]
"""
import argparse
import collections
import json

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("trace")
ap.add_argument("--window", type=float, default=10.0, help="milliseconds before the last event")
ap.add_argument("--chain", help="kernel whose tasks of the last call form the critical chain")
ap.add_argument("--stages", action="store_true", help="each kernel's first start and last end")
ap.add_argument("--workers", help="FROM:TO ms from the first event: each worker's busy time")
ap.add_argument("--gaps", help="FROM:TO ms from the first event: each worker's idle stretches")
ap.add_argument("--min-gap", type=float, default=30.0, help="the shortest stretch --gaps shows, ms")
ap.add_argument("--groups", help="NAME=K1,K2;...: each group of kernels' window, one line, s")
args = ap.parse_args()
with open(args.trace) as f:
    events = json.load(f)["traceEvents"]
ev = [e for e in events if e.get("ph") == "X"]
names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}


def windows():
    """Each kernel's first start and last end, microseconds from the trace's first event."""
    t0, win = min(e["ts"] for e in ev), {}
    for e in ev:
        a, b = win.get(e["args"]["kernel"], (float("inf"), 0.0))
        win[e["args"]["kernel"]] = (min(a, e["ts"] - t0), max(b, e["ts"] + e["dur"] - t0))
    return win


if args.groups:
    win = windows()
    line = []
    for group in args.groups.split(";"):
        name, kernels = group.split("=")
        spans = [win[k] for k in kernels.split(",") if k in win]
        line.append(f"{name} " + (f"{(max(b for _, b in spans) - min(a for a, _ in spans)) / 1e6:.3f}"
                                  if spans else "-"))
    print(" ".join(line))
    raise SystemExit(0)
per = collections.defaultdict(list)
for e in ev:
    per[(e["cat"], e["args"]["kernel"])].append(e["dur"])
print(f"{'kind':9s} {'kernel':16s} {'count':>7s} {'total ms':>10s} {'mean us':>9s} {'max us':>9s}")
for (cat, k), d in sorted(per.items(), key=lambda kv: -sum(kv[1])):
    print(f"{cat:9s} {k:16s} {len(d):7d} {sum(d) / 1e3:10.2f} {sum(d) / len(d):9.1f} "
          f"{max(d):9.1f}")
# GPU tasks also carry when their kernel was enqueued and on which lane: their own span on the
# device (the table above clips each task's start to its worker's previous completion).
spans = collections.defaultdict(list)
for e in ev:
    if "launched" in e["args"]:
        a = e["args"]
        spans[(a["kernel"], a["lane"])].append(e["ts"] + e["dur"] - a["launched"])
if spans:
    print(f"\nGPU tasks, enqueue to completion:\n{'kernel':16s} {'lane':7s} {'count':>7s} "
          f"{'mean us':>9s} {'max us':>9s}")
    for (k, lane), d in sorted(spans.items(), key=lambda kv: -sum(kv[1])):
        print(f"{k:16s} {lane:7s} {len(d):7d} {sum(d) / len(d):9.1f} {max(d):9.1f}")
end = max(e["ts"] + e["dur"] for e in ev)
last = sorted((e for e in ev if e["ts"] >= end - args.window * 1e3), key=lambda e: e["ts"])
if last:
    t0 = last[0]["ts"]
    print(f"\nlast {args.window} ms: start(us) dur(us) worker event")
    for e in last:
        print(f"{e['ts'] - t0:9.1f} {e['dur']:8.1f} {names.get(e['tid'], e['tid'])[:14]:14s} "
              f"{e['name']}")
if args.chain:
    # the last call: from the kernel's last task tagged (0, 0, 0)
    chain = sorted((e for e in ev if e["args"]["kernel"] == args.chain),
                   key=lambda e: e["ts"] + e["dur"])
    first = [i for i, e in enumerate(chain) if e["name"].endswith("(0,0,0)")]
    chain = chain[first[-1]:] if first else chain
    if chain:
        t0 = chain[0]["args"].get("launched", chain[0]["ts"])
        print(f"\n{args.chain} chain of the last call (ms from its first enqueue):\n"
              f"{'task':16s} {'lane':7s} {'enqueued':>9s} {'span':>7s} {'wait':>7s}")
        prev, spans, waits = None, 0.0, 0.0
        for e in chain:
            launched = e["args"].get("launched", e["ts"])
            end = e["ts"] + e["dur"]
            wait = (launched - prev) / 1e3 if prev is not None else 0.0
            spans += (end - launched) / 1e3
            waits += max(wait, 0.0)
            print(f"{e['name'][:16]:16s} {e['args'].get('lane', '-'):7s} "
                  f"{(launched - t0) / 1e3:9.1f} {(end - launched) / 1e3:7.1f} {wait:7.1f}")
            prev = end
        total = (prev - t0) / 1e3
        print(f"{len(chain)} tasks over {total:.1f} ms: {spans:.1f} ms in their spans, "
              f"{waits:.1f} ms waiting between them")
if args.stages:
    win = windows()
    print(f"\nstages (ms from the first event):\n{'kernel':16s} {'first':>9s} {'last':>9s}")
    for k, (a, b) in sorted(win.items(), key=lambda kv: kv[1][0]):
        print(f"{k:16s} {a / 1e3:9.1f} {b / 1e3:9.1f}")
if args.workers:
    t0 = min(e["ts"] for e in ev)
    lo, hi = (float(x) * 1e3 for x in args.workers.split(":"))
    busy = collections.defaultdict(lambda: collections.defaultdict(float))
    for e in ev:
        a, b = max(e["ts"] - t0, lo), min(e["ts"] + e["dur"] - t0, hi)
        if b > a:
            busy[names.get(e["tid"], str(e["tid"]))][e["args"]["kernel"]] += b - a
    print(f"\nworkers' busy ms from {lo / 1e3:.0f} to {hi / 1e3:.0f} ms:")
    for w, per_kernel in sorted(busy.items()):
        top = sorted(per_kernel.items(), key=lambda kv: -kv[1])[:5]
        print(f"{w[:14]:14s} {sum(per_kernel.values()) / 1e3:9.1f}  "
              + " ".join(f"{k}={v / 1e3:.0f}" for k, v in top))
if args.gaps:
    t0 = min(e["ts"] for e in ev)
    lo, hi = (float(x) * 1e3 for x in args.gaps.split(":"))
    by_worker = collections.defaultdict(list)
    for e in ev:
        by_worker[e["tid"]].append(e)
    print(f"\nidle stretches over {args.min_gap:g} ms from {lo / 1e3:.0f} to {hi / 1e3:.0f} ms:")
    for tid, es in sorted(by_worker.items(), key=lambda kv: names.get(kv[0], str(kv[0]))):
        es.sort(key=lambda e: e["ts"])
        end, before = None, None  # the latest end so far, and its event
        for e in es:
            a = e["ts"] - t0
            if end is not None and a - end > args.min_gap * 1e3 and a > lo and end < hi:
                print(f"{names.get(tid, str(tid))[:14]:14s} {end / 1e3:9.1f} -> {a / 1e3:9.1f} "
                      f"({(a - end) / 1e3:7.1f} ms) after {before['name'][:32]} "
                      f"before {e['name'][:32]}")
            if end is None or e["ts"] + e["dur"] - t0 > end:
                end, before = e["ts"] + e["dur"] - t0, e
