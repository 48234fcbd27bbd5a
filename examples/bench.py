#!/usr/bin/env python3
"""make bench: agenthealth against local servers, every number from one run.

    bench.py AGENTHEALTH FAKE_MCP_SERVER FLOOR_CLIENT LATENCY_PROXY [STATIC_BINARY...]   (RUNS=21)
    bench.py --sizes STATIC_BINARY...   (the size rows and their targets alone)

* Local cases run alternating (one run of each case per round, RUNS rounds) so a noisy
  neighbour slows every case alike; each reports the median and the worst wall time, and the
  peak RSS (ru_maxrss of the run, from wait4).
* The floor of `ping mcp` is process start (/bin/true) plus the same requests sent by
  examples/floor_client.rs (one connection, framing only) to the same server; the report
  gives ours - floor.
* WAN: the same checks across a link the kernel sees as 20 ms each way (tests/fixtures/net/
  tun_delay.py in a private network namespace, `unshare -rn`), through examples/latency_proxy.rs
  on its far side (delay 0: it only counts the sequential round trips and connections).
* Fleet: /probe of one replica (`serve` of a modules-only configuration) driven by wrk over
  1,000 distinct targets (probes/s, p50/p99, peak RSS); keep-alive /health requests per
  second against a `Connection: close` run; `ping mcp` on loopback beside two busy loops
  (connections per run, median against the idle one, the load average).
* HTTPS: a fresh connection's TLS 1.3 handshake against a store of one certificate, MCP's
  kept-alive connection, and the system trust store's load.
* The hostile catalogue: `ping mcp` against seven hostile behaviours with `--timeout 300`
  and `--deadline 500`, and the runs past bound + 100 ms (the target is 0).
* OAuth: `check` against a silent or trickling authorization server (examples/hostile_as.py)
  with `timeout_ms: 1000` (one deadline for the run: bound 1,100 ms; the status and step as
  documented), and `login` with eight idle and one trickling connection on its callback: the
  real callback's answer (at most 1 s) and SIGINT's exit (at most 250 ms).
  `BENCH_ONLY=oauth` runs these rows alone.
* The 1,000-node graph: wall, peak RSS, peak threads; the 1,000-target config load; the
  static binaries' sizes: AGENTHEALTH's and every further STATIC_BINARY's (`make bench`
  passes the arm64 one), each named by the machine its ELF header says.

Writes the table to stdout and the plot to docs/performance.svg.
"""

import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

# BENCH_SMOKE=1 (`make bench-smoke`, a step of .ci/run): every row once or twice, durations
# cut to a second, no plot: it proves the script still drives the binary (a changed output or
# rule fails it with the traceback), never what the numbers are.
SMOKE = os.environ.get("BENCH_SMOKE") == "1"
RUNS = 2 if SMOKE else max(21, int(os.environ.get("RUNS", "21")))


def rounds(n):
    """`n` repetitions of a row, 2 in a smoke run."""
    return min(n, 2) if SMOKE else n


def seconds(d):
    """A wrk duration flag (`-d10s`), one second in a smoke run."""
    return "-d1s" if SMOKE else d
# BENCH_ONLY=fleet,wan runs only those sections (local, wan, hostile, graph, oauth, fleet); all by default.
ONLY = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
TOKEN = "bench-token-0123456789abcdef"
SIZES_ONLY = sys.argv[1:2] == ["--sizes"]
# The WAN rows run this script again inside a private network namespace.
WAN_INSIDE = sys.argv[5:6] == ["--wan-inside"]
if SIZES_ONLY:
    STATIC = sys.argv[2:]
else:
    BIN, FAKE, FLOOR, PROXY = sys.argv[1:5]
    STATIC = [BIN] + ([] if WAN_INSIDE else sys.argv[5:])
HERE = os.path.dirname(os.path.abspath(__file__))
TUN = os.path.join(HERE, "..", "tests", "fixtures", "net", "tun_delay.py")
INTEROP = os.environ.get("AGENTHEALTH_INTEROP_DIR", os.path.join(os.getcwd(), "target/interop"))
SVG = os.environ.get("BENCH_SVG", os.path.join(HERE, "..", "docs", "performance.svg"))
TMP = tempfile.mkdtemp(prefix="agenthealth-bench-")
children = []


def start(argv, ready="listening on ", **kw):
    """Starts a server that prints one `listening on X` line (or `ready`); returns (process, X)."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **kw)
    children.append(p)
    line = p.stdout.readline()
    if not line.startswith(ready):
        sys.exit("bench: %s did not start" % argv[0])
    return p, line.strip()[len(ready):]


def run_once(argv, env=None):
    """Wall seconds, CPU seconds (user + system: the growth of the reaped children's usage)
    and exit code of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def peak_rss(argv, env=None):
    """Peak RSS (KiB) of the command, the most of 3 runs under /usr/bin/time (a child of
    Python would count Python's own pages from before its exec)."""
    out = os.path.join(TMP, "rss")
    peak = 0
    for _ in range(3):
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            peak = max(peak, int(open(out).read().split()[-1]))
        except (OSError, ValueError, IndexError):
            pass
    return peak


def peak_threads(argv):
    """Most threads the command had at once, sampled from /proc until it exits."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("Threads:"):
                        peak = max(peak, int(line.split()[1]))
        except (OSError, ValueError):
            pass
    return peak


class Case:
    def __init__(self, label, argv, env=None, floor=None):
        self.label, self.argv, self.env, self.floor = label, argv, env, floor
        self.walls, self.cpus, self.rss, self.codes = [], [], 0, set()

    def measure(self):
        wall, cpu, code = run_once(self.argv, self.env)
        self.walls.append(wall * 1000)
        self.cpus.append(cpu * 1000)
        self.codes.add(code)

    @property
    def cpu(self):
        return statistics.median(self.cpus)

    @property
    def median(self):
        return statistics.median(self.walls)

    @property
    def worst(self):
        return max(self.walls)


def alternate(cases, runs):
    for c in cases:
        c.measure()  # warm-up, not counted
        c.walls.clear()
        c.cpus.clear()
    for _ in range(runs):
        for c in cases:
            c.measure()
    for c in cases:
        c.rss = peak_rss(c.argv, c.env)


def wanted(section):
    return not ONLY or section in ONLY


def main():
    if WAN_INSIDE:
        return wan_inside()
    _, fake = start([FAKE, "--port", "0", "--route", "/modern=modern", "--route", "/hang=hang",
                     "--route", "/trickle=trickle", "--route", "/stall=stall",
                     "--route", "/endless-sse=endless-sse", "--route", "/huge=huge", "--until-killed"])
    local, by, true = local_rows(fake) if wanted("local") else ([], {}, None)
    wan = wan_rows() if wanted("wan") else []
    late = hostile_catalogue(fake) if wanted("hostile") else None
    graph = graph_rows(fake) if wanted("graph") else None
    oauth = hostile_oauth() + login_crowd() if wanted("oauth") else []
    fleet = fleet_rows() if wanted("fleet") else None
    sized = sizes(STATIC)
    targets(by, wan, graph, late, sized, oauth, fleet)
    if wanted("local") and wanted("wan") and not SMOKE:
        plot(local, by, true, wan)


def local_rows(fake):
    """ping mcp and friends against local servers beside the floor: (cases, by label, true)."""
    _, fake2 = start([FAKE, "--port", "0", "--until-killed"])
    ca = os.path.join(TMP, "ca.pem")
    _, tls = start([FAKE, "--port", "0", "--tls", ca, "--until-killed"])
    own_ca = dict(os.environ, SSL_CERT_FILE=ca)
    own_ca.pop("SSL_CERT_DIR", None)
    system_store = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_DIR", "SSL_CERT_FILE")}

    ping = lambda url: [BIN, "ping", "mcp", url]
    true = Case("true (process start)", ["/bin/true"])
    local = [
        true,
        Case("agenthealth version", [BIN, "version"]),
        Case("floor: modern, fake", [FLOOR, "modern", fake + "/modern"]),
        Case("ping mcp: modern, fake", ping(fake + "/modern"), floor="floor: modern, fake"),
        Case("floor: legacy, fake", [FLOOR, "legacy", fake + "/mcp"]),
        Case("ping mcp: legacy, fake", ping(fake + "/mcp"), floor="floor: legacy, fake"),
        Case("ping http: fake /health", [BIN, "ping", "http", fake + "/health"]),
        Case("ping mcp: https modern, fake", ping(tls + "/modern"), env=own_ca),
        Case("ping mcp: https legacy, fake", ping(tls + "/mcp"), env=own_ca),
        Case("ping http: https fake /health", [BIN, "ping", "http", tls + "/health"], env=own_ca),
        # The system bundle as the store (the private CA is not in it: the certificate is
        # refused); the difference from the row above is the bundle's load, once per process.
        Case("ping http: https, system store", [BIN, "ping", "http", tls + "/health"], env=system_store),
    ]
    alternate(local, RUNS)
    # The real Python servers only now, so that they never compete with the rows above.
    python = os.path.join(INTEROP, "venv/bin/python")
    if os.access(python, os.X_OK):
        env = dict(os.environ, INTEROP_EXIT_ON_STDIN_EOF="1")
        real = []
        for mode in ("json", "sse"):
            _, url = start([python, os.path.join(INTEROP, "servers/py_server.py"),
                            "--transport", "http", "--mode", mode], env=env)
            real.append(Case("floor: Python %s" % mode, [FLOOR, "modern", url]))
            real.append(Case("ping mcp: Python %s" % mode, ping(url), floor="floor: Python %s" % mode))
        alternate(real, RUNS)
        local += real
    else:
        print("(the real Python server is not installed: run make interop-setup for its rows)")
    by = {c.label: c for c in local}

    print("%-34s %9s %9s %8s %9s %8s %9s" % ("case (%d runs, alternating)" % RUNS, "median", "worst", "- floor", "CPU", "- floor", "peak RSS"))
    for c in local:
        over = cpu_over = ""
        if c.floor:
            over = "%+8.2f" % (c.median - by[c.floor].median)
            cpu_over = "%+8.2f" % (c.cpu - by[c.floor].cpu)
        elif c.label.startswith("floor"):
            over = "%+8.2f" % (c.median - true.median)
            cpu_over = "%+8.2f" % (c.cpu - true.cpu)
        print("%-34s %6.2f ms %6.2f ms %8s %6.2f ms %8s %5d KiB%s" % (
            c.label, c.median, c.worst, over, c.cpu, cpu_over, c.rss,
            "" if c.codes == {0} else "  exit %s" % sorted(c.codes)))
    print("  - floor: ping rows, ours minus the floor (the floor client's run: its process start and")
    print("  the same requests); floor rows, the floor client minus /bin/true (the requests alone).")
    print("  CPU: user + system time of the run (getrusage of the children), median; steadier than wall")
    return local, by, true


WAN_KINDS = ("modern passive", "legacy passive", "modern functional")


def wan_rows():
    """The WAN rows, measured inside a private network namespace (this script again, under
    `unshare -rn`): [(label, median, worst, trips, conns, cleanup, codes)]."""
    out = subprocess.run(["unshare", "--user", "--map-root-user", "--net", "--",
                          sys.executable, os.path.abspath(__file__), BIN, FAKE, FLOOR, PROXY, "--wan-inside"],
                         stdout=subprocess.PIPE, text=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or len(rows) != len(WAN_KINDS):
        sys.exit("bench: the WAN rows need unshare -rn and /dev/net/tun (exit %d)" % out.returncode)
    print()
    print("%-34s %9s %9s %12s %12s %8s" % ("WAN: 20 ms each way (%d runs)" % RUNS, "median", "worst", "round trips", "connections", "DELETE"))
    fmt = lambda s: "-".join(str(x) for x in sorted(s)[::max(1, len(s) - 1)])
    wan = []
    for r in rows:
        print("%-34s %6.1f ms %6.1f ms %12s %12s %8s%s" % (r["label"], r["median"], r["worst"], fmt(r["trips"]),
                                                            fmt(r["conns"]), fmt(r["cleanup"]),
                                                            "" if r["codes"] == [0] else "  exit %s" % r["codes"]))
        wan.append((r["label"], r["median"], set(r["trips"]), set(r["conns"])))
    print("  across tun0 (tun_delay.py: every packet to 10.77.0.2 reflected 20 ms later), so the kernel")
    print("  sees the distance too (TCP_INFO's round trip, which the lane decision reads)")
    return wan


def wan_inside():
    """In the namespace: the link, the fake server, the counting proxy on the far side; prints
    one JSON line per WAN kind."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    start([sys.executable, TUN, "20"], ready="ready")
    _, fake = start([FAKE, "--port", "0", "--route", "/modern=modern", "--until-killed"])
    proxy, paddr = start([PROXY, fake[len("http://"):], "0", "10.77.0.1", "20"])
    far = "10.77.0.2:" + paddr.rsplit(":", 1)[1]
    functional = os.path.join(TMP, "functional.yaml")
    with open(functional, "w") as f:
        f.write("""version: v1
targets:
  - name: functional
    type: mcp
    endpoint: http://%s/modern
    checks: [reachability, authentication, protocol, capability, functional]
    mcp:
      functional:
        tool: echo
        safe: true
        arguments_json: '{"text": "hi"}'
""" % far)
    argv = {"modern passive": [BIN, "ping", "mcp", "http://%s/modern" % far],
            "legacy passive": [BIN, "ping", "mcp", "http://%s/mcp" % far],
            "modern functional": [BIN, "check", functional]}
    for label in WAN_KINDS:
        c = Case(label, argv[label])
        trips, conns, cleanup = set(), set(), set()
        c.measure()
        c.walls.clear()
        c.cpus.clear()
        for _ in range(RUNS):
            counted(proxy)  # reset the counts
            c.measure()
            counts = counted(proxy)
            trips.add(counts["round_trips"])
            conns.add(counts["connections"])
            cleanup.add(counts["cleanup"])
        print(json.dumps({"label": label, "median": c.median, "worst": c.worst, "trips": sorted(trips),
                          "conns": sorted(conns), "cleanup": sorted(cleanup), "codes": sorted(c.codes)}), flush=True)


def counted(proxy):
    """The latency proxy's counts since the last call (and they start again)."""
    proxy.stdin.write("\n")
    proxy.stdin.flush()
    return {k: int(v) for k, v in (kv.split("=") for kv in proxy.stdout.readline().split())}


def graph_rows(fake):
    """The 1,000-node graph and its config load: the json check's Case."""
    _, fake2 = start([FAKE, "--port", "0", "--until-killed"])
    graph = os.path.join(TMP, "graph.yaml")
    with open(graph, "w") as f:
        subprocess.run([os.path.join(HERE, "graph/generate.sh"), "10", "9", "10",
                        fake + "/health", fake2 + "/health"], stdout=f, check=True)
    nodes = sum(1 for line in open(graph) if line.lstrip().startswith("- name:"))
    heavy = [
        Case("check --format json", [BIN, "check", graph, "--format", "json"]),
        Case("validate (config load)", [BIN, "validate", graph]),
    ]
    alternate(heavy, RUNS)
    threads = max(peak_threads([BIN, "check", graph, "--format", "json"]) for _ in range(3))
    print()
    print("%-34s %9s %9s %9s" % ("%d HTTP nodes (%d runs)" % (nodes, RUNS), "median", "worst", "peak RSS"))
    for c in heavy:
        print("%-34s %6.1f ms %6.1f ms %5d KiB%s" % (c.label, c.median, c.worst, c.rss,
                                                    "" if c.codes == {0} else "  exit %s" % sorted(c.codes)))
    print("%-34s %9d" % ("peak threads", threads))
    print("  round trips: the longest chain of requests each sent after the previous answer")
    print("  arrived (the cleanup DELETE apart); connections: accepted by the proxy")
    return heavy[0]


def serve(config_text, *extra):
    """A running `serve` of `config_text` on 127.0.0.1: (process, "127.0.0.1:PORT")."""
    path = os.path.join(TMP, "serve-%d.yaml" % len(children))
    with open(path, "w") as f:
        f.write(config_text)
    p = subprocess.Popen([BIN, "serve", path, "--listen", "127.0.0.1:0", "--token-env", "AHP_TOKEN"] + list(extra),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, AHP_TOKEN=TOKEN))
    children.append(p)
    line = p.stderr.readline()
    if "serving AHP v1 on http://" not in line:
        sys.exit("bench: serve did not start: %r" % line)
    return p, line.split("http://", 1)[1].split()[0]


def wrk(argv):
    """wrk's report: requests/s, the 50 % and 99 % latencies (ms) and non-2xx answers."""
    out = subprocess.run(["wrk"] + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    unit = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    def latency(pct):
        for line in out.splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == pct:
                for suffix in ("us", "ms", "s"):
                    if words[1].endswith(suffix):
                        return float(words[1][:-len(suffix)]) * unit[suffix]
        return float("nan")
    rps = next((float(l.split()[1]) for l in out.splitlines() if l.startswith("Requests/sec:")), 0.0)
    non2xx = next((int(l.split()[-1]) for l in out.splitlines() if "Non-2xx" in l), 0)
    errors = next((l.strip() for l in out.splitlines() if l.strip().startswith("Socket errors")), "")
    return {"rps": rps, "p50": latency("50%"), "p99": latency("99%"), "non2xx": non2xx, "errors": errors}


def vm_hwm(pid):
    """Peak resident memory (VmHWM, KiB) of a running process."""
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def fleet_rows():
    """/probe, keep-alive and busy-loop rows: a dict of what targets() needs."""
    if not shutil.which("wrk"):
        sys.exit("bench: wrk is not installed (apt-get install wrk; .ci/interop-setup does)")
    routes = []
    for i in range(1000):
        routes += ["--route", "/t/%04d=modern" % i]
    _, fake = start([FAKE, "--port", "0", "--until-killed"] + routes)
    host = fake[len("http://"):]
    replica, addr = serve("version: v1\nmodules:\n  - name: m\n    type: mcp\n    allow: [127.0.0.1/32]\n",
                          "--probe-concurrency", "32")
    lua = os.path.join(TMP, "probe.lua")
    with open(lua, "w") as f:
        f.write("local paths = {\n")
        for i in range(1000):
            f.write('  "/probe?module=m&target=http%%3A%%2F%%2F%s%%2Ft%%2F%04d",\n' % (host.replace(":", "%3A"), i))
        f.write("}\nlocal i = 0\nrequest = function()\n  i = i %% #paths + 1\n"
                "  return wrk.format(\"GET\", paths[i], {[\"Authorization\"] = \"Bearer %s\"})\nend\n" % TOKEN)
    wrk(["-t2", "-c32", "-d2s", "-s", lua, "http://%s" % addr])  # warm-up
    probe = wrk(["-t2", "-c32", seconds("-d10s"), "--latency", "-s", lua, "http://%s" % addr])
    probe["rss"] = vm_hwm(replica.pid)
    print()
    print("%-34s %9s %9s %9s %9s %9s" % ("/probe, 1 replica, 1,000 targets", "probes/s", "p50", "p99", "non-2xx", "peak RSS"))
    print("%-34s %9.0f %6.1f ms %6.1f ms %9d %5d KiB %s" % ("wrk -t2 -c32 -d10s", probe["rps"], probe["p50"], probe["p99"],
                                                          probe["non2xx"], probe["rss"], probe["errors"]))
    return {"probe": probe, "keepalive": keepalive_rows(fake), "busy": busy_rows(fake)}


def keepalive_rows(fake):
    """/health on one connection per client (keep-alive) against a new one per request."""
    _, addr = serve("version: v1\ntargets:\n  - name: web\n    type: http\n    endpoint: %s/health\n" % fake)
    url = "http://%s/health" % addr
    rates = {"keep-alive": [], "Connection: close": []}
    for _ in range(rounds(3)):
        rates["keep-alive"].append(wrk(["-t1", "-c8", seconds("-d5s"), url])["rps"])
        rates["Connection: close"].append(wrk(["-t1", "-c8", seconds("-d5s"), "-H", "Connection: close", url])["rps"])
    print()
    print("%-34s %12s" % ("/health, wrk -t1 -c8 -d5s (3 runs)", "median req/s"))
    for label, values in rates.items():
        print("%-34s %12.0f" % (label, statistics.median(values)))
    return {k: statistics.median(v) for k, v in rates.items()}


def busy_rows(fake):
    """`ping mcp` on loopback, idle and beside two busy loops: connections per run (through the
    counting proxy, delay 0) and the medians, beside /bin/true's and the floor client's in the
    same rounds (what the busy loops cost any process start and any client)."""
    proxy, paddr = start([PROXY, fake[len("http://"):], "0"])
    cases = {}
    for label in ("idle", "two busy loops"):
        loops = []
        if label != "idle":
            loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
        c = Case("ping mcp, %s" % label, [BIN, "ping", "mcp", "http://%s/t/0000" % paddr])
        others = [Case("true", ["/bin/true"]), Case("floor", [FLOOR, "modern", fake + "/t/0000"])]
        for case in [c] + others:
            case.measure()
            case.walls.clear()
        conns = []
        for _ in range(rounds(31)):
            for other in others:
                other.measure()
            counted(proxy)
            c.measure()
            conns.append(counted(proxy)["connections"])
        load = os.getloadavg()[0]
        for p in loops:
            p.kill()
            p.wait()
        cases[label] = (c, conns, load, [o.median for o in others])
    print()
    print("%-34s %9s %9s %12s %9s %9s %9s" % ("ping mcp on loopback (31 runs)", "median", "worst", "connections",
                                            "load avg", "true", "floor"))
    for label, (c, conns, load, (true, floor)) in cases.items():
        print("%-34s %6.2f ms %6.2f ms %12s %9.2f %6.2f ms %6.2f ms" % (
            label, c.median, c.worst, "-".join(str(x) for x in sorted(set(conns))), load, true, floor))
    print("  true, floor: medians of /bin/true and of the floor client (one connection, same server)")
    print("  in the same rounds: what the busy loops cost any process and any client")
    idle, busy = cases["idle"], cases["two busy loops"]
    return {"idle": idle[0].median, "busy": busy[0].median, "conns": max(idle[1] + busy[1]), "load": busy[2],
            "true": busy[3][0] / max(idle[3][0], 1e-9), "floor": busy[3][1] / max(idle[3][1], 1e-9)}


# e_machine of an ELF header (bytes 18-19, little-endian) -> the target's architecture.
MACHINES = {0x3E: "x86_64", 0xB7: "aarch64"}


def sizes(paths):
    """Prints each static binary's size, named by its architecture; returns (arch, size)."""
    print()
    out = []
    for path in paths:
        with open(path, "rb") as f:
            head = f.read(20)
        if head[:4] != b"\x7fELF":
            sys.exit("bench: %s is not an ELF file" % path)
        arch = MACHINES.get(int.from_bytes(head[18:20], "little"), "unknown")
        size = os.path.getsize(path)
        print("static binary (%s): %d bytes (%.2f MiB)" % (arch, size, size / 1048576))
        out.append((arch, size))
    return out


def size_rows(sized):
    return [("static binary (%s): %d bytes (at most 2,500,000)" % (arch, size), size <= 2_500_000)
            for arch, size in sized]


def print_targets(rows):
    print()
    print("targets")
    for text, met in rows:
        print("  %-4s %s" % ("met" if met else "MISS", text))


def targets(by, wan, graph, late, sized, oauth, fleet):
    """The targets of the performance issues, each met or not, from the numbers above (of the
    sections that ran)."""
    rows = []
    for label in ("ping mcp: modern, fake", "ping mcp: legacy, fake"):
        if label not in by:
            continue
        c = by[label]
        over = c.median - by[c.floor].median
        rows.append(("%s: %+.2f ms over the floor" % (label, over), over <= 1.0))
    for label in ("ping mcp: modern, fake", "ping mcp: legacy, fake", "ping mcp: Python json", "ping mcp: Python sse"):
        if label in by:
            c = by[label]
            rows.append(("%s: worst %.2f ms <= 2 x median %.2f ms (no stall)" % (label, c.worst, c.median),
                         c.worst <= 2 * c.median))
    limits = {"modern passive": 3, "legacy passive": 5}
    for label, _, trips, conns in wan:
        if label in limits:
            rows.append(("WAN %s: %d sequential round trips (at most %d)" % (label, max(trips), limits[label]),
                         max(trips) <= limits[label]))
        rows.append(("WAN %s: %d connections (1, plus one per inventory listed beside the first)" % (label, max(conns)),
                     max(conns) <= 3))
    if graph:
        rows.append(("1,000-node graph: peak RSS %d KiB (at most 16 MB)" % graph.rss, graph.rss * 1024 <= 16_000_000))
    if late is not None:
        rows.append(("hostile catalogue: %d runs past bound + 100 ms (0)" % late, late == 0))
    rows += oauth
    if fleet:
        rows += fleet_targets(fleet)
    rows += size_rows(sized)
    print_targets(rows)


def fleet_targets(fleet):
    """The fleet issue's targets."""
    probe, kept, busy = fleet["probe"], fleet["keepalive"], fleet["busy"]
    ratio = kept["keep-alive"] / max(kept["Connection: close"], 1.0)
    slower = busy["busy"] / max(busy["idle"], 1e-9)
    return [
        ("/probe: %.0f probes/s of one replica at 1,000 targets, p50 %.1f ms, p99 %.1f ms, %d non-2xx (0)"
         % (probe["rps"], probe["p50"], probe["p99"], probe["non2xx"]), probe["non2xx"] == 0),
        ("/probe: peak RSS of the replica %d KiB (at most 16 MB)" % probe["rss"], probe["rss"] * 1024 <= 16_000_000),
        ("keep-alive /health: %.0f req/s, %.2f x the Connection: close run's %.0f"
         % (kept["keep-alive"], ratio, kept["Connection: close"]), ratio > 1.0),
        ("ping mcp beside two busy loops: at most %d connection(s) per run (1)" % busy["conns"], busy["conns"] == 1),
        ("ping mcp beside two busy loops: median %.2f ms, %.2f x the idle %.2f ms (at most 1.5 x; load average %.1f;"
         " /bin/true %.1f x, the floor client %.1f x)"
         % (busy["busy"], slower, busy["idle"], busy["load"], busy["true"], busy["floor"]), slower <= 1.5),
    ]


def hostile_catalogue(fake):
    """`ping mcp` against each hostile behaviour, with `--timeout 300` (each attempt 300 ms; a
    check makes at most two attempts, so its bound is 600 ms) and with `--deadline 500` (the
    whole run, bound 500 ms): median and worst wall of 10 runs, and the runs past bound +
    100 ms. The target is 0 everywhere."""
    silent = socket.socket()  # listens, never accepts: the handshake completes, nothing more
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    port = silent.getsockname()[1]
    cases = [
        ("silent", "http://127.0.0.1:%d/" % port),
        ("trickle", fake + "/trickle"),
        ("stall after headers", fake + "/stall"),
        ("endless SSE", fake + "/endless-sse"),
        ("oversized body", fake + "/huge"),
        ("TLS stall", "https://127.0.0.1:%d/" % port),
        ("HEAD then silent", fake + "/hang"),
    ]
    total_late = 0
    print()
    print("%-34s %9s %9s %9s" % ("hostile behaviour (10 runs)", "median", "worst", "past+100"))
    print("  (bound: 600 ms for --timeout 300, two attempts at most; 500 ms for --deadline 500)")
    for name, url in cases:
        for flag, value, bound in (("--timeout", 300, 600), ("--deadline", 500, 500)):
            walls = [run_once([BIN, "ping", "mcp", url, flag, str(value)])[0] * 1000 for _ in range(rounds(10))]
            late = sum(1 for w in walls if w > bound + 100)
            total_late += late
            print("%-34s %6.0f ms %6.0f ms %9d" % ("%s, %s %d" % (name, flag, value),
                                                   statistics.median(walls), max(walls), late))
    silent.close()
    return total_late


HOSTILE_AS = os.path.join(HERE, "hostile_as.py")


def oauth_config(url, oauth):
    """A one-target configuration for the hostile authorization server at `url`."""
    origin = url[:-len("/mcp")]
    path = os.path.join(TMP, "oauth-%d.yaml" % len(os.listdir(TMP)))
    with open(path, "w") as f:
        f.write("version: v1\ntargets:\n  - name: lab\n    type: mcp\n    endpoint: %s\n"
                "    timeout_ms: 1000\n    mcp:\n      oauth:\n        issuer: '%s'\n"
                "        client_id: c\n%s" % (url, origin, oauth))
    return path


def hostile_oauth():
    """`check` of an OAuth target whose authorization server (or protected-resource metadata)
    is silent or trickles, `timeout_ms: 1000`: the run's one OAuth acquisition is every
    check's outcome, so the run takes one deadline (bound 1,100 ms), and authentication says
    the documented status, step and `failure=timeout`. 10 runs each."""
    cases = [("silent-token", "UNREACHABLE", "token_endpoint"),
             ("trickle-token", "UNKNOWN", "token_endpoint"),
             ("silent-as-metadata", "UNREACHABLE", "server_metadata"),
             ("trickle-as-metadata", "UNKNOWN", "server_metadata"),
             ("silent-prm", "UNREACHABLE", "resource_metadata")]
    env = dict(os.environ, S="bench-secret")
    late = wrong = 0
    print()
    print("%-34s %9s %9s %9s  %s" % ("hostile OAuth, timeout_ms 1000", "median", "worst", "past+100", "authentication"))
    for mode, status, step in cases:
        server, url = start([sys.executable, HOSTILE_AS, mode], stderr=subprocess.DEVNULL)
        cfg = oauth_config(url, "        grant: client_credentials\n        client_secret_env: S\n")
        walls, seen = [], set()
        for _ in range(rounds(10)):
            t0 = time.perf_counter()
            out = subprocess.run([BIN, "check", cfg, "--format", "json"], capture_output=True, text=True, env=env)
            walls.append((time.perf_counter() - t0) * 1000)
            try:
                a = json.loads(out.stdout)["checks"]["authentication"]
                seen.add("%s oauth=%s failure=%s" % (a["status"], a["evidence"].get("oauth"), a["evidence"].get("failure")))
            except (ValueError, KeyError):
                seen.add("no document")
        want = "%s oauth=%s failure=timeout" % (status, step)
        late += sum(1 for w in walls if w > 1100)
        wrong += 0 if seen == {want} else 1
        print("%-34s %6.0f ms %6.0f ms %9d  %s" % (mode, statistics.median(walls), max(walls),
                                                 sum(1 for w in walls if w > 1100),
                                                 " | ".join(sorted(seen))))
        server.stdin.close()
    return [("hostile OAuth: %d runs past timeout_ms + 100 ms (0)" % late, late == 0),
            ("hostile OAuth: %d cases without their documented status and step (0)" % wrong, wrong == 0)]


def crowd(port):
    """Eight idle connections and one sending a request head a byte every 100 ms."""
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
    trickle = socket.create_connection(("127.0.0.1", port))

    def drip():
        for b in b"GET /callback HTTP/1.1\r\nHost: 127.0.0.1\r\n":
            try:
                trickle.send(bytes([b]))
            except OSError:
                return
            time.sleep(0.1)
    threading.Thread(target=drip, daemon=True).start()
    return idle + [trickle]


def login_crowd():
    """`login` with a crowd on its callback (10 runs each): how long the real callback takes
    to be answered (bound 1 s), and how long the login takes to exit after SIGINT (250 ms)."""
    server, url = start([sys.executable, HOSTILE_AS, "ok"], stderr=subprocess.DEVNULL)
    results = {"callback": [], "sigint": []}
    failures = 0
    for i in range(rounds(10)):
        for what in results:
            token_file = os.path.join(TMP, "login-%s-%d.json" % (what, i))
            cfg = oauth_config(url, "        grant: authorization_code\n        token_file: %s\n" % token_file)
            child = subprocess.Popen([BIN, "login", cfg, "lab"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
            child.stdout.readline()
            query = urllib.parse.parse_qs(urllib.parse.urlparse(child.stdout.readline().strip()).query)
            port = urllib.parse.urlparse(query["redirect_uri"][0]).port
            held = crowd(port)
            t0 = time.perf_counter()
            if what == "callback":
                c = socket.create_connection(("127.0.0.1", port))
                c.sendall(("GET /callback?code=bench&state=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
                           % (query["state"][0], port)).encode())
                answer = c.recv(4096)
                results[what].append((time.perf_counter() - t0) * 1000)
                c.close()
                ok = answer.startswith(b"HTTP/1.1 200 ")
                _, err = child.communicate(timeout=30)
                ok = ok and child.returncode == 0
            else:
                child.send_signal(signal.SIGINT)
                _, err = child.communicate(timeout=30)
                results[what].append((time.perf_counter() - t0) * 1000)
                ok = child.returncode == 6 and "cancelled" in err
            failures += 0 if ok else 1
            for s in held:
                s.close()
    server.stdin.close()
    print()
    print("%-34s %9s %9s" % ("login, 8 idle + 1 trickling (10 runs)", "median", "worst"))
    for what, label in (("callback", "callback answered"), ("sigint", "SIGINT to exit")):
        print("%-34s %6.1f ms %6.1f ms" % (label, statistics.median(results[what]), max(results[what])))
    return [("login: callback answered within %.0f ms among idle connections (at most 1000)"
             % max(results["callback"]), max(results["callback"]) <= 1000),
            ("login: SIGINT ends it within %.0f ms, saying so (at most 250; %d runs wrong)"
             % (max(results["sigint"]), failures), max(results["sigint"]) <= 250 and failures == 0)]


def plot(local, by, true, wan):
    """A horizontal bar chart: wall time per check kind, ours beside its floor."""
    rows = []
    for c in local:
        if c.label.startswith("ping mcp") and c.floor:
            rows.append((c.label[len("ping mcp: "):], c.median, by[c.floor].median))
    wan_rows = [(label + " (WAN)", median, "-".join(str(t) for t in sorted(trips)))
                for label, median, trips, _ in wan]
    width, bar_x, row_h = 760, 190, 26
    height = 60 + row_h * (len(rows) + len(wan_rows)) + 30
    local_max = max([r[1] for r in rows] + [1.0])
    wan_max = max([r[1] for r in wan_rows] + [1.0])
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="14" font-weight="bold">agenthealth: wall time per check (median of %d runs)</text>' % RUNS,
           '<text x="10" y="38" fill="#555">local rows: ours (blue) over the floor client (grey); WAN rows: 20 ms each way, own scale</text>']
    y = 52
    for label, ours, floor in rows:
        scale = (width - bar_x - 170) / local_max
        out.append('<text x="10" y="%d">%s</text>' % (y + 15, label))
        out.append('<rect x="%d" y="%d" width="%.1f" height="9" fill="#4a7bd0"/>' % (bar_x, y + 4, ours * scale))
        out.append('<rect x="%d" y="%d" width="%.1f" height="9" fill="#aaa"/>' % (bar_x, y + 14, floor * scale))
        out.append('<text x="%.1f" y="%d">%.2f ms (floor %.2f)</text>' % (bar_x + ours * scale + 6, y + 13, ours, floor))
        y += row_h
    for label, ours, trips in wan_rows:
        scale = (width - bar_x - 170) / wan_max
        out.append('<text x="10" y="%d">%s</text>' % (y + 15, label))
        out.append('<rect x="%d" y="%d" width="%.1f" height="14" fill="#d08a4a"/>' % (bar_x, y + 5, ours * scale))
        out.append('<text x="%.1f" y="%d">%.0f ms, %s round trips</text>' % (bar_x + ours * scale + 6, y + 16, ours, trips))
        y += row_h
    out.append('</svg>')
    with open(SVG, "w") as f:
        f.write("\n".join(out) + "\n")
    print("plot: %s" % os.path.relpath(SVG))


try:
    if SIZES_ONLY:
        print_targets(size_rows(sizes(STATIC)))
    else:
        main()
finally:
    for p in children:
        try:
            if p.stdin:
                p.stdin.close()
        except OSError:
            pass
        p.kill()
        p.wait()
    subprocess.run(["rm", "-rf", TMP])
