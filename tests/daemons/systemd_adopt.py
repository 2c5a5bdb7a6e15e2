#!/usr/bin/env python3
"""systemd_adopt.py -- czk-gpud under an emulated systemd service manager.

Plays the parts of systemd that czk-gpud relies on, with the documented
protocol (sd_notify(3), sd_listen_fds(3)): a NOTIFY_SOCKET datagram socket that
receives READY=1, STATUS=, WATCHDOG=1 and FDSTORE=1 (with the pool's memfd),
and, on restart, hands the stored fd back as fd 3 with LISTEN_FDS,
LISTEN_FDNAMES and LISTEN_PID.  Checks:
  - gpud sends READY=1 and, with WATCHDOG_USEC set, WATCHDOG=1 repeatedly;
  - gpud stores its pool in the fd store;
  - gpud killed (fault point gpud.after_ready) while a partition's slot is
    READY: the restarted gpud adopts the pool from the fd store and proves
    that partition from the slot (log "recovered"), the job completes and
    snarkjs accepts the proof.
usage: systemd_adopt.py GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
"""
import array, os, shutil, socket, subprocess, sys, tempfile, time

gpud, synth, fin, client, src = sys.argv[1:6]
fix = os.path.join(src, "tests/fixtures")
snarkjs = os.environ.get("CZK_SNARKJS", os.path.join(src, "interop/node_modules/.bin/snarkjs"))
T = tempfile.mkdtemp(prefix="czk-systemd.")
rt = os.path.join(T, "run")
os.makedirs(rt)
failures = []
procs = []


def bad(msg):
    print("FAIL:", msg, file=sys.stderr)
    failures.append(msg)


with open(os.path.join(T, "czk.conf"), "w") as f:
    f.write(f"""[czk]
runtime_dir = {rt}
state_dir = {T}/state
output_dir = {T}/out
[gpud]
backend = cpu
threads = 2
slots_per_pool = 2
metrics_port = 0
[synth]
threads = 2
reconnect_max_ms = 300
[circuit.multi]
zkey = {fix}/multi/circuit.zkey
""")

nsock_path = os.path.join(T, "notify.sock")
nsock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
nsock.bind(nsock_path)
nsock.settimeout(0.1)
messages = []   # (text, fds)
store = {}      # FDNAME -> fd


def pump(seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            fds = array.array("i")
            msg, anc, _, _ = nsock.recvmsg(4096, socket.CMSG_SPACE(16 * fds.itemsize))
        except socket.timeout:
            continue
        for level, typ, data in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
        text = msg.decode()
        messages.append(text)
        kv = dict(l.split("=", 1) for l in text.split("\n") if "=" in l)
        if kv.get("FDSTORE") == "1" and fds:
            old = store.pop(kv.get("FDNAME", "stored"), None)
            if old is not None:
                os.close(old)
            store[kv.get("FDNAME", "stored")] = fds[0]
        elif fds:
            for fd in fds:
                os.close(fd)


def spawn(argv, log, env_extra=None, stored=None):
    env = dict(os.environ, NOTIFY_SOCKET=nsock_path, CZK_POOL_HUGEPAGES="never")
    env.update(env_extra or {})
    out = open(os.path.join(T, log), "a")
    pass_fds = ()
    pre = None
    if stored:
        names = list(stored.keys())
        fds = [stored[n] for n in names]
        env["LISTEN_FDS"] = str(len(fds))
        env["LISTEN_FDNAMES"] = ":".join(names)
        pass_fds = tuple(range(3, 3 + len(fds)))

        def pre():
            # in the child: the stored fds become 3.., LISTEN_PID is our pid
            tmp = [os.dup(fd) for fd in fds]
            for i, fd in enumerate(tmp):
                os.dup2(fd, 3 + i)
            os.environ["LISTEN_PID"] = str(os.getpid())
    p = subprocess.Popen(argv, stdout=out, stderr=out, env=None if stored else env, pass_fds=pass_fds,
                         preexec_fn=(lambda: (os.environ.clear(), os.environ.update(env), pre())) if stored else None)
    procs.append(p)
    return p


def run_client(*args, timeout=120):
    return subprocess.run([client, os.path.join(rt, "czk.sock")] + list(args), capture_output=True, text=True,
                          timeout=timeout)


def wait_up():
    for _ in range(100):
        pump(0.1)
        if run_client("status").returncode == 0:
            return True
    return False


conf = ["--config", os.path.join(T, "czk.conf")]
try:
    g1 = spawn([gpud] + conf, "gpud.log", {"WATCHDOG_USEC": "400000", "CZK_FAULT": "gpud.after_ready:exit"})
    if not wait_up():
        raise SystemExit(bad("gpud did not come up") or 1)
    pump(0.8)
    if "READY=1" not in "\n".join(messages):
        bad("no READY=1 from gpud")
    if sum(1 for m in messages if "WATCHDOG=1" in m) < 2:
        bad("fewer than 2 WATCHDOG=1 in 0.8 s with WATCHDOG_USEC=400000")
    if "pool-0" not in store:
        bad("gpud did not put its pool into the fd store: %r" % messages)
    spawn([synth] + conf + ["--numa-node", "0"], "synth.log")
    spawn([fin] + conf, "fin.log")
    r = run_client("submit", "adopt-1", "multi", "1", os.path.join(fix, "multi/witness.wtns"))
    if r.stdout.strip() != "accepted 1":
        bad("submit: %r %r" % (r.stdout, r.stderr))
    for _ in range(100):
        pump(0.1)
        if g1.poll() is not None:
            break
    if g1.returncode != 99:
        bad("gpud did not stop at gpud.after_ready (exit %r)" % g1.returncode)
    messages.clear()
    g2 = spawn([gpud] + conf, "gpud.log", {"WATCHDOG_USEC": "400000"}, stored=dict(store))
    if not wait_up():
        raise SystemExit(bad("the restarted gpud did not come up") or 1)
    r = run_client("watch", "1")
    if r.returncode != 0:
        bad("job 1 did not complete after the restart: %r" % r.stdout)
    log = open(os.path.join(T, "gpud.log")).read()
    if "adopted pool 0" not in log:
        bad("the restarted gpud did not adopt the pool from the fd store")
    if "READY partition 0 of job 1 recovered" not in log:
        bad("the READY slot was not recovered after the restart")
    synth_fills = open(os.path.join(T, "synth.log")).read()
    d = os.path.join(T, "out/1/0")
    if not os.path.exists(os.path.join(d, "proof.json")):
        bad("no proof written for job 1")
    elif os.path.exists(snarkjs) and shutil.which("node"):
        v = subprocess.run([snarkjs, "groth16", "verify", os.path.join(fix, "multi/verification_key.json"),
                            os.path.join(d, "public.json"), os.path.join(d, "proof.json")], capture_output=True,
                           text=True)
        if "OK" not in v.stdout:
            bad("snarkjs rejects the proof: " + v.stdout + v.stderr)
    pump(0.3)
    if "READY=1" not in "\n".join(messages):
        bad("no READY=1 from the restarted gpud")
finally:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    if failures or os.environ.get("CZK_KEEP"):
        for log in ("gpud.log", "synth.log", "fin.log"):
            path = os.path.join(T, log)
            if os.path.exists(path):
                print("----", log, file=sys.stderr)
                print("".join(open(path).readlines()[-30:]), file=sys.stderr)
        print("(kept %s)" % T, file=sys.stderr)
    else:
        shutil.rmtree(T, ignore_errors=True)
sys.exit(1 if failures else 0)
