"""The far-server bench's tables, from scripts/bench-wan.sh's runs.tsv and the access-log lines
of each run (logs/CASE.TOOL.ROUND.access, written by nginx as
  connection-serial requests-on-it server-addr:port msec request-time status "request").

  python3 scripts/lib/wan-report.py RUNS.TSV LOGDIR DELAY FSTYPE
  python3 scripts/lib/wan-report.py --log FILE    (one run's lines: requests and connections)
"""
import math
import statistics
import sys
from collections import defaultdict


CASES = {
    "one": "1 host, HTTP, 5000",
    "eight": "8 HTTPS hosts, 5000",
    "perhost": "8 HTTPS hosts, 5000, 64 with --per-host 4",
    "big": "1 host, HTTP, 100,000",
    "fast": "1 host, HTTP, 100,000, no delay",
}
TOOLS = {
    "archiver": "archiver",
    "curl": "curl",
    "curlx4": "curl x4 (4 x 256)",
    "wget2": "wget2",
    "aria2c": "aria2c",
}


def connections(path):
    """requests, connections, the most connections one host saw, and the most one host had
    active at once: a connection counts as active from its first request's start
    (msec - request_time) to its last request's end (msec). That leaves out the handshake before
    the first request and any idle time after the last, so it is a lower bound of the sockets
    open; with keep-alive clients that hold their connections to the end it is close."""
    conns = {}   # serial -> [addr, start, end]
    requests = 0
    for line in open(path):
        fields = line.split()
        if len(fields) < 6:
            continue
        requests += 1
        serial, addr, end = fields[0], fields[2].rsplit(":", 1)[0], float(fields[3])
        start = end - float(fields[4])
        c = conns.setdefault(serial, [addr, start, end])
        c[1], c[2] = min(c[1], start), max(c[2], end)
    per_host = defaultdict(list)
    for addr, start, end in conns.values():
        per_host[addr].append((start, end))
    most = max((len(v) for v in per_host.values()), default=0)
    peak = 0
    for spans in per_host.values():
        # Opens before closes at the same instant: a connection that starts as another ends
        # counts as overlapping (the estimate errs towards more).
        events = sorted([(s, 0) for s, _ in spans] + [(e, 1) for _, e in spans])
        now = 0
        for _, kind in events:
            now += 1 if kind == 0 else -1
            peak = max(peak, now)
    return dict(reqs=requests, conns=len(conns), hosts=len(per_host), per_host=most, peak=peak)


if sys.argv[1] == "--log":
    c = connections(sys.argv[2])
    print(f"{c['reqs']} requests on {c['conns']} connections to {c['hosts']} hosts; at most {c['per_host']} "
          f"connections to one host, at most {c['peak']} of them active at once")
    sys.exit(0)

runs_path, logdir, delay, fstype = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
runs = defaultdict(dict)   # (case, tool) -> round -> run
for line in open(runs_path):
    case, tool, rnd, inflight, want, wall, user, sys_, rss, status, files, ok = line.rstrip("\n").split("\t")
    run = dict(inflight=int(inflight), records=int(want), wall=float(wall), cpu=float(user) + float(sys_),
               rss=int(rss) / 1024, ok=ok == "yes")
    run.update(connections(f"{logdir}/{case}.{tool}.{rnd}.access"))
    try:   # the server's open connections per host, sampled during the run (some cases)
        run["sampled"] = int(open(f"{logdir}/{case}.{tool}.{rnd}.sockets").read().split()[0])
    except (OSError, IndexError, ValueError):
        run["sampled"] = None
    runs[(case, tool)][int(rnd)] = run


def good(case, tool):
    return {k: r for k, r in runs.get((case, tool), {}).items() if r["ok"]}


def med(case, tool, key):
    values = [r[key] for r in good(case, tool).values()]
    return statistics.median(values) if values else None


def ratio(case, tool, other_case, other_tool):
    """Median of the per-round ratios of one run's wall time to another's (both ok)."""
    a, b = good(case, tool), good(other_case, other_tool)
    values = [a[k]["wall"] / b[k]["wall"] for k in a if k in b]
    return statistics.median(values) if values else None


def floor_s(records, inflight, d=delay):
    return math.ceil(records / inflight) * d


def peak_cell(runs_ok):
    """The most over the rounds, from the log; with the sampled count where there is one."""
    runs_ok = list(runs_ok)
    cell = str(max(r["peak"] for r in runs_ok))
    sampled = [r["sampled"] for r in runs_ok if r["sampled"] is not None]
    return cell + (f" (ss: {max(sampled)})" if sampled else "")


def fmt(value, spec):
    return "–" if value is None else format(value, spec)


rounds = max((len(v) for v in runs.values()), default=0)
print(f"Far servers: nginx on loopback answering every request {delay * 1000:.0f} ms late (echo_sleep), "
      f"{rounds} rounds (medians of the runs that produced all files), files written to {fstype}\n")
print("| case | tool | in flight | runs ok | wall s | CPU s | peak RSS MiB | requests | connections "
      "| connections per host (max) | peak concurrent per host | floor s | wall / floor | wall / curl | wall / no delay |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for case in CASES:
    for tool in TOOLS:
        by_round = runs.get((case, tool))
        if not by_round:
            continue
        any_run = next(iter(by_round.values()))
        inflight, records = any_run["inflight"], any_run["records"]
        d = 0 if case == "fast" else delay
        fl = floor_s(records, inflight, d) if d else None
        wall = med(case, tool, "wall")
        oks = len(good(case, tool))
        cells = [CASES[case], TOOLS[tool], str(inflight), f"{oks}/{len(by_round)}"]
        if not oks:
            cells += ["FAILED"] + ["–"] * 10
        else:
            vs_curl = ratio(case, tool, case, "curl") if (case, "curl") in runs else None
            vs_fast = ratio(case, tool, "fast", tool) if case == "big" else None
            cells += [fmt(wall, ".3f"), fmt(med(case, tool, "cpu"), ".2f"), fmt(med(case, tool, "rss"), ".1f"),
                      fmt(med(case, tool, "reqs"), ".0f"), fmt(med(case, tool, "conns"), ".0f"),
                      fmt(med(case, tool, "per_host"), ".0f"),
                      peak_cell(good(case, tool).values()),
                      fmt(fl, ".3f"), fmt(wall / fl if fl else None, ".2f"), fmt(vs_curl, ".2f"), fmt(vs_fast, ".2f")]
        print("| " + " | ".join(cells) + " |")

print(f"""
floor = ceil(records / in flight) x {delay * 1000:.0f} ms, the least time any client with that many requests in flight
needs (5000 and 4996 distinct URLs give the same floors). In flight: curl caps --parallel-max at 300, so its
"--parallel-max 1024" runs have 300; "curl x4" is 4 curl processes at --parallel-max 256 on interleaved quarters
of the list (CPU summed, peak RSS the largest process's); the --per-host 4 case has 8 x 4 = 32. wall / curl and
wall / no delay are medians of per-round ratios (runs in turns; the archiver and curl swap places every round).
Connections are counted from nginx's log (distinct connection serials per address); peak concurrent per host is the
most connections one address had between their first request's start and last request's end, in any round
(a lower bound: it leaves out each handshake and any idle time after the last request); "ss:" is the most
established server sockets one address had in 20 ms samples of /proc/net/tcp during the run, in any round.
""")

print("Acceptance lines of issue #13, from the table above:\n")


def verdict(ok):
    return "met" if ok else "NOT met"


def missing(case):
    return f"no figures: the archiver's runs {'FAILED' if runs.get((case, 'archiver')) else 'were not run'}"


lines = []
if good("eight", "archiver") and good("eight", "curl"):
    r = ratio("eight", "archiver", "eight", "curl")
    a, c = med("eight", "archiver", "per_host"), med("eight", "curl", "per_host")
    lines.append(f"8 HTTPS hosts, {delay * 1000:.0f} ms, --concurrency 32: archiver / curl wall {r:.2f} "
                 f"(at or under 1: {verdict(r <= 1)}); connections per host (max) archiver {a:.0f}, curl {c:.0f} "
                 f"(at most twice curl's: {verdict(a <= 2 * c)})")
elif (("eight", "archiver")) in runs or ("eight", "curl") in runs:
    lines.append(f"8 HTTPS hosts, --concurrency 32: {missing('eight')}")
if good("one", "archiver") and good("one", "curl"):
    r = ratio("one", "archiver", "one", "curl")
    w = med("one", "archiver", "wall")
    fl = floor_s(4996, 256)
    lines.append(f"1 host, {delay * 1000:.0f} ms, 5000 records, --concurrency 256: archiver / curl wall {r:.2f} "
                 f"(at or under 1: {verdict(r <= 1)}); wall {w:.3f} s = {w / fl:.2f}x the floor {fl:.2f} s "
                 f"(ceil(4996 / 256) x {delay * 1000:.0f} ms; within 1.3x: {verdict(w <= 1.3 * fl)})")
elif ("one", "curl") in runs:
    lines.append(f"1 host, --concurrency 256: {missing('one')}")
if good("big", "archiver") and good("big", "curl"):
    r = ratio("big", "archiver", "big", "curl")
    r4 = ratio("big", "archiver", "big", "curlx4")
    slow = ratio("big", "archiver", "fast", "archiver")
    rss = max(x["rss"] for x in good("big", "archiver").values())
    lines.append(f"100,000 records, {delay * 1000:.0f} ms, --concurrency 1024: archiver / curl --parallel-max 1024 "
                 f"(300 in flight) wall {r:.2f} (no slower: {verdict(r <= 1)}); archiver / curl x4 (1024 in flight) "
                 f"{fmt(r4, '.2f')}; delayed / undelayed archiver wall {fmt(slow, '.2f')} "
                 f"(within 1.3x: {verdict(slow is not None and slow <= 1.3)}); peak RSS {rss:.1f} MiB "
                 f"(largest of the delayed runs; under 128 MiB: {verdict(rss < 128)})")
elif ("big", "curl") in runs:
    lines.append(f"100,000 records, --concurrency 1024: {missing('big')}")
if good("perhost", "archiver"):
    peak = max(x["peak"] for x in good("perhost", "archiver").values())
    sampled = [x["sampled"] for x in good("perhost", "archiver").values() if x["sampled"] is not None]
    peak = max([peak] + sampled)   # whichever saw more
    most = max(x["per_host"] for x in good("perhost", "archiver").values())
    w = med("perhost", "archiver", "wall")
    fl = floor_s(5000, 32)
    lines.append(f"8 hosts, --concurrency 64 --per-host 4: peak concurrent connections on one host {peak} "
                 f"(the larger of the log's estimate and the sampled sockets; never more than 4: "
                 f"{verdict(peak <= 4)}), distinct connections per host at most {most}; "
                 f"wall {w:.3f} s = {w / fl:.2f}x the floor {fl:.2f} s (5000 / 32 x {delay * 1000:.0f} ms; "
                 f"within 1.4x: {verdict(w <= 1.4 * fl)})")
elif ("perhost", "archiver") in runs:
    lines.append(f"8 hosts, --concurrency 64 --per-host 4: {missing('perhost')}")
for line in lines:
    print(f"- {line}")
