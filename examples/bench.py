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
* WAN: the same checks through examples/latency_proxy.rs (20 ms each way, a new connection
  costs one round trip more), with the sequential round trips and connections it counted.
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
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

RUNS = max(21, int(os.environ.get("RUNS", "21")))
SIZES_ONLY = sys.argv[1:2] == ["--sizes"]
if SIZES_ONLY:
    STATIC = sys.argv[2:]
else:
    BIN, FAKE, FLOOR, PROXY = sys.argv[1:5]
    STATIC = [BIN] + sys.argv[5:]
HERE = os.path.dirname(os.path.abspath(__file__))
INTEROP = os.environ.get("AGENTHEALTH_INTEROP_DIR", os.path.join(os.getcwd(), "target/interop"))
SVG = os.environ.get("BENCH_SVG", os.path.join(HERE, "..", "docs", "performance.svg"))
TMP = tempfile.mkdtemp(prefix="agenthealth-bench-")
children = []


def start(argv, **kw):
    """Starts a server that prints one `listening on X` line; returns (process, X)."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **kw)
    children.append(p)
    line = p.stdout.readline()
    if not line.startswith("listening on "):
        sys.exit("bench: %s did not start" % argv[0])
    return p, line.strip()[len("listening on "):]


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


def main():
    if os.environ.get("BENCH_ONLY") == "oauth":
        print_targets(hostile_oauth() + login_crowd())
        return
    _, fake = start([FAKE, "--port", "0", "--route", "/hang=hang",
                     "--route", "/trickle=trickle", "--route", "/stall=stall",
                     "--route", "/endless-sse=endless-sse", "--route", "/huge=huge", "--until-killed"])
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

    # WAN: through the latency proxy.
    wan = []
    fake_hostport = fake[len("http://"):]
    proxy, paddr = start([PROXY, fake_hostport, "20"])
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
""" % paddr)
    kinds = [
        ("modern passive", ping("http://%s/modern" % paddr)),
        ("legacy passive", ping("http://%s/mcp" % paddr)),
        ("modern functional", [BIN, "check", functional]),
    ]
    print()
    print("%-34s %9s %9s %12s %12s %8s" % ("WAN: 20 ms each way (%d runs)" % RUNS, "median", "worst", "round trips", "connections", "DELETE"))
    for label, argv in kinds:
        c = Case(label, argv)
        trips, conns, cleanup = set(), set(), set()
        c.measure()
        c.walls.clear()
        c.cpus.clear()
        for _ in range(RUNS):
            proxy.stdin.write("\n")
            proxy.stdin.flush()
            proxy.stdout.readline()  # reset the counts
            c.measure()
            proxy.stdin.write("\n")
            proxy.stdin.flush()
            counts = dict(kv.split("=") for kv in proxy.stdout.readline().split())
            trips.add(int(counts["round_trips"]))
            conns.add(int(counts["connections"]))
            cleanup.add(int(counts["cleanup"]))
        fmt = lambda s: "-".join(str(x) for x in sorted(s)[::max(1, len(s) - 1)])
        print("%-34s %6.1f ms %6.1f ms %12s %12s %8s%s" % (label, c.median, c.worst, fmt(trips), fmt(conns), fmt(cleanup),
                                                            "" if c.codes == {0} else "  exit %s" % sorted(c.codes)))
        wan.append((label, c, trips, conns))

    late = hostile_catalogue(fake)
    oauth = hostile_oauth() + login_crowd()

    # The 1,000-node graph and its config load.
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
    sized = sizes(STATIC)

    targets(by, wan, heavy[0], late, sized, oauth)
    plot(local, by, true, wan)


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


def targets(by, wan, graph, late, sized, oauth):
    """The targets of the performance issue, each met or not, from the numbers above."""
    rows = []
    for label in ("ping mcp: modern, fake", "ping mcp: legacy, fake"):
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
    rows.append(("1,000-node graph: peak RSS %d KiB (at most 16 MB)" % graph.rss, graph.rss * 1024 <= 16_000_000))
    rows.append(("hostile catalogue: %d runs past bound + 100 ms (0)" % late, late == 0))
    rows += oauth
    rows += size_rows(sized)
    print_targets(rows)


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
            walls = [run_once([BIN, "ping", "mcp", url, flag, str(value)])[0] * 1000 for _ in range(10)]
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
        for _ in range(10):
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
    for i in range(10):
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
    wan_rows = [(label + " (WAN)", c.median, "-".join(str(t) for t in sorted(trips)))
                for label, c, trips, _ in wan]
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
            p.stdin.close()
        except OSError:
            pass
        p.kill()
        p.wait()
    subprocess.run(["rm", "-rf", TMP])
