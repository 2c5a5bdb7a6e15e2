#!/usr/bin/env python3
"""restart.py -- how fast czk-gpud is back at work after a start or a restart.

usage: restart.py BINDIR WORKDIR LOG [--npart N] [--nsynth S] [--slots K] [--backend cuda|cpu]
                  [--modes cold,kill9,fdstore,synth,finalizer] [--after N] [--stall S]

Uses the key and witness of bench/gpu/gpu_pipeline.sh (WORKDIR/cLOG.zkey, wLOG.wtns; made with
`czk gen-circuit` + `czk setup` when missing).  czk-gpud always runs under a small stand-in for
systemd's service manager (the sd_notify(3) / sd_listen_fds(3) protocol: NOTIFY_SOCKET, FDSTORE=1,
LISTEN_FDS), so what it would keep in systemd's fd store (its pools, the device copies of its keys)
is kept here; the mode says whether a restart gets it back.

  cold       first start; the page cache of the zkey is dropped first when this runs as root
             (the disk's own sequential rate is measured the same way, with dd, for comparison)
  kill9      kill -9 of gpud while a job's partitions are queued, READY and computing; restart
             without the fd store (everything is rebuilt from the files and the journal)
  fdstore    the same, but the restarted gpud gets back its stored fds (pools, key memory)
  synth      kill -9 of one synthesizer (restarted at once), the pipeline running
  finalizer  kill -9 of the finalizer (restarted at once), the pipeline running

For each: exec -> first `czk status` answer, exec -> the circuit's key ready, exec -> first compute
(from the gpud trace; CLOCK_MONOTONIC is shared, Python's time.monotonic_ns() reads the same clock),
the GPU's idle time across the event (last compute end before it -> first compute begin after it),
partitions synthesized twice, and whether every proof the client got verifies (`czk verify`).
Prints one table row per mode.
"""
import argparse, fcntl, glob, json, os, signal, socket, struct, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("bin"); ap.add_argument("work"); ap.add_argument("log", type=int)
ap.add_argument("--npart", type=int, default=16); ap.add_argument("--nsynth", type=int, default=4)
ap.add_argument("--slots", type=int, default=6); ap.add_argument("--backend", default="cuda")
ap.add_argument("--modes", default="cold,kill9,fdstore,synth,finalizer")
ap.add_argument("--after", type=int, default=3, help="the event comes once this many proofs are out")
ap.add_argument("--stall", type=float, default=0.0,
                help="kill9/fdstore: SIGSTOP gpud this many seconds before the kill -9 (a hung gpud that the "
                     "watchdog kills), so that the synthesizers leave READY slots behind for the restart")
A = ap.parse_args()
B = os.path.abspath(A.bin); W = os.path.abspath(A.work); L = A.log
CZK = os.path.join(B, "czk")
os.makedirs(W, exist_ok=True)
zkey, wtns = f"{W}/c{L}.zkey", f"{W}/w{L}.wtns"
ns = time.monotonic_ns
ms = lambda a, b: "-" if a is None or b is None else f"{(b - a) / 1e6:.0f}"


def sh(*a, **k):
    return subprocess.run(list(a), capture_output=True, text=True, **k)


if not (os.path.exists(zkey) and os.path.exists(wtns)):
    n = (1 << L) - 16
    t = time.time()
    r = sh(CZK, "gen-circuit", "--constraints", str(n), "--publics", "2", "--bits", "0.5", "--seed", "7",
           f"{W}/c{L}.r1cs", wtns)
    r = r.returncode == 0 and sh(CZK, "setup", f"{W}/c{L}.r1cs", zkey)
    if not r or r.returncode:
        sys.exit(f"restart.py: key generation failed: {r and r.stderr}")
    print(f"key 2^{L}: generated in {time.time() - t:.0f} s", flush=True)
vk = f"{W}/vk{L}.json"
if not os.path.exists(vk):
    sh(CZK, "vkey", zkey, vk)


class FakeSystemd:
    """NOTIFY_SOCKET + fd store for one service (sd_notify(3), sd_listen_fds(3))."""

    def __init__(self, path):
        self.path = path
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.store = {}      # name -> fd
        self.ready_ns = None
        self.lock = threading.Lock()
        threading.Thread(target=self.rx, daemon=True).start()

    def rx(self):
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(self.sock, 65536, 64)
            except OSError:
                return
            kv = dict(l.split("=", 1) for l in msg.decode(errors="replace").splitlines() if "=" in l)
            with self.lock:
                if kv.get("READY") == "1" and self.ready_ns is None:
                    self.ready_ns = ns()
                name = kv.get("FDNAME", "stored")
                if kv.get("FDSTORE") == "1":
                    for fd in fds:
                        old = self.store.pop(name, None)
                        if old is not None:
                            os.close(old)
                        self.store[name] = fd
                        name = name + "+"
                elif kv.get("FDSTOREREMOVE") == "1" and name in self.store:
                    os.close(self.store.pop(name))
                else:
                    for fd in fds:
                        os.close(fd)

    def spawn(self, argv, log, with_fds):
        env = dict(os.environ, NOTIFY_SOCKET=self.path)
        with self.lock:
            self.ready_ns = None
            items = list(self.store.items()) if with_fds else []
            if not with_fds:
                for fd in self.store.values():
                    os.close(fd)
                self.store = {}
        # the stored fds become 3, 4, ... of gpud, with LISTEN_PID its own pid (bash's $$ before exec)
        hi = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 200) for _, fd in items]
        moves = "".join(f"exec {3 + i}<&{h} {h}<&-; " for i, h in enumerate(hi))
        if items:
            env.update(LISTEN_FDS=str(len(items)), LISTEN_FDNAMES=":".join(n for n, _ in items))
        t = ns()
        p = subprocess.Popen(["bash", "-c", moves + 'LISTEN_PID=$$ exec "$@"', "bash"] + argv, stdout=log,
                             stderr=subprocess.STDOUT, env=env, pass_fds=tuple(hi))
        for h in hi:
            os.close(h)
        return p, t, len(items)


def read_traces(state):
    """every (stage, job, partition, begin, end, pid) of every trace file in state/trace"""
    out = []
    for f in glob.glob(f"{state}/trace/*.trace*"):
        b = open(f, "rb").read()
        for off in range(64, len(b) - 39, 40):
            job, part, stage, _fl, beg, end, pid, _tid = struct.unpack_from("<QIHHQQII", b, off)
            out.append((stage, job, part, beg, end, pid))
    return out


COMPUTE, SYNTH = 10, 1


def status_json(conf):
    r = sh(CZK, "status", "--config", conf, "--json")
    if r.returncode:
        return None
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def circuit_ready(st):
    """every circuit's key ready (a gpud without per-circuit states answers only once they are)"""
    if not st:
        return False
    return all(c.get("state") == "ready" for c in st.get("circuits", []))


def run_mode(mode):
    T = f"{W}/restart-{L}-{mode}"
    subprocess.run(["rm", "-rf", T])
    for d in ("run", "state", "out", "logs"):
        os.makedirs(f"{T}/{d}")
    conf = f"{T}/czk.conf"
    with open(conf, "w") as f:
        f.write(f"[czk]\nruntime_dir = {T}/run\nstate_dir = {T}/state\noutput_dir = {T}/out\n"
                f"[gpud]\nbackend = {A.backend}\nslots_per_pool = {A.slots}\nmetrics_port = 0\n"
                f"[synth]\nthreads = 0\n[circuit.c{L}]\nzkey = {zkey}\n")
    row = {"mode": mode}
    if mode == "cold":
        if os.geteuid() == 0:
            size = os.path.getsize(zkey)
            os.system("sync; echo 3 > /proc/sys/vm/drop_caches")
            t = ns()
            sh("dd", f"if={zkey}", "of=/dev/null", "bs=16M", "iflag=direct")
            row["disk_GBps"] = f"{size / ((ns() - t) / 1e9) / 1e9:.2f}"
            os.system("sync; echo 3 > /proc/sys/vm/drop_caches")
            row["zkey_GB"] = f"{size / 1e9:.2f}"
        else:
            row["disk_GBps"] = "(not root: page cache not dropped)"
    sd = FakeSystemd(f"{T}/notify.sock")
    glog = open(f"{T}/logs/gpud.log", "ab")
    gpud, t_exec, _ = sd.spawn([f"{B}/czk-gpud", "--config", conf], glog, False)

    def wait_up(t0, limit=600):
        t_st = t_rdy = None
        while ns() - t0 < limit * 1e9:
            st = status_json(conf)
            if st is not None and t_st is None:
                t_st = ns()
            if circuit_ready(st):
                t_rdy = ns()
                break
            time.sleep(0.005)
        return t_st, t_rdy

    t_st, t_rdy = wait_up(t_exec)
    others = []
    for s in range(A.nsynth):
        others.append(subprocess.Popen(["nice", "-n", "10", f"{B}/czk-synth", "--config", conf, "--numa-node", "0"],
                                       stdout=open(f"{T}/logs/synth{s}.log", "ab"), stderr=subprocess.STDOUT))
    fin = subprocess.Popen([f"{B}/czk-finalizer", "--config", conf], stdout=open(f"{T}/logs/fin.log", "ab"),
                           stderr=subprocess.STDOUT)
    if mode == "cold":
        row.update(status_ms=ms(t_exec, t_st), ready_ms=ms(t_exec, t_rdy))
    sub = subprocess.Popen([CZK, "submit", "--config", conf, "--circuit", f"c{L}", "--out", f"{T}/client",
                            "--reconnect-timeout", "600"] + [wtns] * A.npart,
                           stdout=open(f"{T}/logs/submit.log", "ab"), stderr=subprocess.STDOUT)
    t_event = None
    if mode != "cold":
        # the event once a few proofs are out and the slots are full
        while sub.poll() is None:
            st = status_json(conf) or {}
            if st.get("proofs_total", 0) >= A.after:
                break
            time.sleep(0.02)
        t_event = ns()
        if mode in ("kill9", "fdstore"):
            if A.stall > 0:
                gpud.send_signal(signal.SIGSTOP)
                time.sleep(A.stall)
            gpud.send_signal(signal.SIGKILL); gpud.wait()
            gpud, t_exec, nfd = sd.spawn([f"{B}/czk-gpud", "--config", conf], glog, mode == "fdstore")
            row["fds_back"] = nfd
            t_st, t_rdy = wait_up(t_exec)
            row.update(status_ms=ms(t_exec, t_st), ready_ms=ms(t_exec, t_rdy))
        else:
            victim = others[0] if mode == "synth" else fin
            victim.send_signal(signal.SIGKILL); victim.wait()
            argv = ([f"{B}/czk-synth", "--config", conf, "--numa-node", "0"] if mode == "synth"
                    else [f"{B}/czk-finalizer", "--config", conf])
            p = subprocess.Popen(argv, stdout=open(f"{T}/logs/{mode}.restart.log", "ab"), stderr=subprocess.STDOUT)
            if mode == "synth":
                others[0] = p
            else:
                fin = p
            t_exec = ns()
    rc = sub.wait(timeout=900)
    time.sleep(1.5)  # trace flush
    tr = read_traces(f"{T}/state")
    comp = sorted((b, e) for s, j, p, b, e, pid in tr if s == COMPUTE)
    first_after = next((b for b, e in comp if b >= (t_event or t_exec)), None)
    row["first_compute_ms"] = ms(t_exec, first_after)
    if t_event:
        before = [e for b, e in comp if e <= t_event]
        row["gpu_idle_ms"] = ms(max(before) if before else None, first_after)
        finals = [e for s, j, p, b, e, pid in tr if s == 12]
        # back at full rate: the time from the event until proofs come out at the pre-event pace again
    synth_counts = {}
    for s, j, p, b, e, pid in tr:
        if s == SYNTH:
            synth_counts[(j, p)] = synth_counts.get((j, p), 0) + 1
    row["synth_twice"] = sum(1 for v in synth_counts.values() if v > 1)
    if t_event and mode in ("kill9", "fdstore"):
        log = open(f"{T}/logs/gpud.log", errors="replace").read().split("info: starting:")[-1]
        row["ready_recovered"] = log.count("READY partition")
    ok = 0
    for p in range(A.npart):
        d = f"{T}/client/{p}"
        if sh(CZK, "verify", vk, f"{d}/public.json", f"{d}/proof.json").returncode == 0:
            ok += 1
    row["verified"] = f"{ok}/{A.npart}"
    row["submit_rc"] = rc
    for p in others + [fin, gpud]:
        p.send_signal(signal.SIGTERM)
    for p in others + [fin, gpud]:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
    return row


rows = [run_mode(m) for m in A.modes.split(",")]
keys = []
for r in rows:
    for k in r:
        if k not in keys:
            keys.append(k)
print(f"\n2^{L}, {A.npart} partitions, {A.nsynth} synths, {A.slots} slots, backend {A.backend}")
print("| " + " | ".join(keys) + " |")
print("|" + " --- |" * len(keys))
for r in rows:
    print("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")
