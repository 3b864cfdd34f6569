"""Samples the server side of a run's connections: every 20 ms, the established TCP sockets whose
local port is PORT, counted per local address (host), from /proc/net/tcp (no process per sample).
On SIGTERM writes OUT: the most sockets one host had open in any sample, and the sample count.
A connection that carries a request lives at least the server's delay (50 ms), so 20 ms samples
see every one; what they can miss is a handshake-only connection that closes within 20 ms.

  python3 scripts/lib/wan-sockets.py PORT OUT &   ...   kill -TERM $!
"""
import signal
import sys
import time
from collections import Counter

port, out = int(sys.argv[1]), sys.argv[2]
want = f":{port:04X}"
most, samples, stop = 0, 0, False


def finish(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, finish)
while not stop:
    per_host = Counter()
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split(None, 4)
            local, state = fields[1], fields[3]
            if state == "01" and local.endswith(want):   # 01: ESTABLISHED
                per_host[local[:8]] += 1
    most = max(most, max(per_host.values(), default=0))
    samples += 1
    time.sleep(0.02)
with open(out, "w") as f:
    f.write(f"{most} {samples}\n")
