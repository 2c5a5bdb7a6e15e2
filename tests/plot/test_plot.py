"""test_plot.py SCRIPT — checks czk-trace-plot on a synthetic `czk trace` file.

The trace has random spans in whole microseconds: two backend contexts of one
czk-gpud whose compute spans overlap at times (a union must count them once),
copies with h2d and slot checks, two czk-synth processes with two fill threads
each, one czk-finalizer, instants, a stage and an event phase the script does
not know.  The statistics the script prints are compared with an oracle that
shares no code with it: busy time and gaps from a one-byte-per-microsecond
bitmap, the peak rate by counting every window.  The whole trace and a cut of
it (--since/--until) are plotted to PNG and SVG; the PNG must carry a PNG
signature and header, the SVG must parse as XML and hold every row label and
the title.  Malformed inputs and bad arguments must exit 2, naming the file.
CZK_TEST_SEED=N repeats a run.
"""
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SCRIPT = sys.argv[1]
failures = 0


def bad(msg):
    global failures
    failures += 1
    print("FAIL: " + msg, file=sys.stderr)


seed = int(os.environ.get("CZK_TEST_SEED", random.SystemRandom().randrange(1 << 32)))
print("seed %d (CZK_TEST_SEED=%d repeats this run)" % (seed, seed))
rng = random.Random(seed)


# ---- the synthetic trace ---------------------------------------------------
def make_trace():
    """events: (name, cat, pid, tid, ts_us, dur_us), whole µs from a large base"""
    base = rng.randrange(10 ** 9, 10 ** 12)
    pids = rng.sample(range(1000, 4000000), 4)
    gpid, spids, fpid = pids[0], pids[1:3], pids[3]
    ev = []
    for k, tid in enumerate((gpid + 1, gpid + 2)):
        t = rng.randrange(0, 30000)
        for _ in range(rng.randrange(12, 30)):
            t += rng.choice((0, rng.randrange(1, 3000), rng.randrange(5000, 90000)))
            part = rng.randrange(0, 253)
            spid = rng.choice(spids)
            stid = spid + rng.randrange(1, 3)
            sdur = rng.randrange(200, 20000)
            ev.append(("synth", "czk-synth", spid, stid, base + max(0, t - sdur - rng.randrange(0, 5000)), sdur))
            ev.append(("ready", "czk-gpud", gpid, gpid, base + t, 0))
            v = rng.randrange(1, 300)
            ev.append(("slot_verify", "czk-gpud", gpid, tid, base + t, v))
            t += v
            c = rng.randrange(1, 3000)
            ev.append(("copy", "czk-gpud", gpid, tid, base + t, c))
            if k == 1:
                ev.append(("h2d", "czk-gpud", gpid, tid, base + t + c // 4, c // 2))
            t += c
            d = rng.randrange(500, 60000)
            ev.append(("compute", "czk-gpud", gpid, tid, base + t, d))
            t += d
            ev.append(("result_sent", "czk-gpud", gpid, gpid, base + t, 0))
            ev.append(("finalize", "czk-finalizer", fpid, fpid, base + t + rng.randrange(0, 8000),
                       rng.randrange(100, 9000)))
    # unknown to the plot: drawn nowhere, counted nowhere
    ev.append(("stage99", "czk-gpud", gpid, gpid, base + rng.randrange(0, 50000), 1234))
    return base, gpid, spids, fpid, ev


def trace_json(ev, pids, order):
    """the JSON text, in czk_trace_export_json's layout (ts/dur "%llu.%03llu")"""
    lines = ['{"name":"process_name","ph":"M","pid":%d,"tid":%d,"args":{"name":"czk-x"}}' % (p, p) for p in pids]
    lines.append('{"name":"mark","ph":"i","pid":%d,"tid":%d,"ts":5.000,"s":"t"}' % (pids[0], pids[0]))
    for i in order:
        name, cat, pid, tid, ts, dur = ev[i]
        lines.append('{"name":"%s","cat":"%s","ph":"X","pid":%d,"tid":%d,"ts":%d.000,"dur":%d.000,'
                     '"args":{"job":%d,"partition":%d}}' % (name, cat, pid, tid, ts, dur, i + 1, i % 7))
    return '{"displayTimeUnit":"ms","traceEvents":[\n' + ",\n".join(lines) + "\n]}\n"


# ---- the oracle ------------------------------------------------------------
def oracle(ev, t0, lo_us, hi_us, window_us):
    """statistics over [lo_us, hi_us] (µs since t0); window_us may be fractional"""
    comp = []
    for name, _, _, _, ts, dur in ev:
        b, e = ts - t0, ts - t0 + dur
        if name == "compute" and (e > lo_us and b < hi_us if dur else lo_us <= b <= hi_us):
            comp.append((max(b, lo_us), min(e, hi_us)))
    first, last = min(b for b, _ in comp), max(e for _, e in comp)
    bm = bytearray(last - first)
    for b, e in comp:
        bm[b - first:e - first] = b"\x01" * (e - b)
    busy = bm.count(1)
    runs = [(m.end() - m.start(), m.start()) for m in re.finditer(b"\x00+", bytes(bm))]
    gap, gap_at = max(runs, key=lambda r: (r[0], -r[1])) if runs else (0, None)
    ends = [ts - t0 + dur for name, _, _, _, ts, dur in ev if name == "finalize"]
    ends = [e for e in ends if lo_us < e <= hi_us]
    peak = max(sum(1 for x in ends if t - window_us < x <= t) for t in ends) if ends else 0
    return {
        "computes": len(comp),
        "busy_pct": 100.0 * busy / (last - first),
        "max_gap_s": gap / 1e6,
        "at_s": (first + gap_at) / 1e6 if gap_at is not None else None,
        "proofs": len(ends),
        "throughput_per_s": len(ends) / ((hi_us - lo_us) / 1e6),
        "peak_per_s": peak / (window_us / 1e6),
    }


# ---- running the script ----------------------------------------------------
def run(*args):
    p = subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def parse(out):
    kv = {}
    for tok in out.split():
        k, _, v = tok.partition("=")
        kv[k] = v
    return kv


def close(what, got, want, tol):
    if got is None or abs(float(got) - want) > tol:
        bad("%s: printed %s, oracle %.9f" % (what, got, want))


def check_png(path):
    with open(path, "rb") as f:
        head = f.read(33)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        bad("%s does not start with the PNG signature" % path)
        return
    length, kind, w, h = struct.unpack(">I4sII", head[8:24])
    if kind != b"IHDR" or length != 13 or not (200 < w < 10000 and 200 < h < 10000):
        bad("%s: first chunk %r %dx%d is not a sane IHDR" % (path, kind, w, h))


def svg_texts(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        bad("%s does not parse as XML: %s" % (path, e))
        return []
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        bad("%s: root element is %s, not svg" % (path, root.tag))
    return ["".join(el.itertext()) for el in root.iter("{http://www.w3.org/2000/svg}text")]


def check_plot(tmp, trace, ev, t0, lo_us, hi_us, window_us, labels, extra):
    """plots to PNG and SVG with extra arguments; compares with the oracle"""
    want = oracle(ev, t0, lo_us, hi_us, window_us if window_us else max((hi_us - lo_us) / 10, 1000))
    tag = "%08x" % rng.randrange(1 << 32)
    title = "plot test $%s$ (dollars stay text)" % tag
    outs = {}
    for ext in ("png", "svg"):
        out = os.path.join(tmp, "plot-%s.%s" % (tag, ext))
        rc, so, se = run(trace, "-o", out, "--title", title, *extra)
        if rc != 0:
            bad("czk-trace-plot %s -> .%s exited %d: %s" % (" ".join(extra), ext, rc, se))
            return
        if not os.path.isfile(out) or os.path.getsize(out) < 1000:
            bad("%s missing or too small" % out)
            return
        outs[ext] = (out, parse(so))
    check_png(outs["png"][0])
    kv = outs["png"][1]
    kv.pop("wrote", None)
    outs["svg"][1].pop("wrote", None)
    if outs["svg"][1] != kv:
        bad("the PNG and SVG runs printed different statistics: %s / %s" % (kv, outs["svg"][1]))
    print("%s: printed %s" % (" ".join(extra) or "whole trace", kv))
    print("  oracle %s" % want)
    rng_lo, _, rng_hi = kv.get("range_s", "").partition("..")
    close("range start", rng_lo or None, lo_us / 1e6, 2e-6)
    close("range end", rng_hi or None, hi_us / 1e6, 2e-6)
    if kv.get("computes") != str(want["computes"]):
        bad("computes: printed %s, oracle %d" % (kv.get("computes"), want["computes"]))
    if kv.get("contexts") != "2":
        bad("contexts: printed %s, expected 2" % kv.get("contexts"))
    close("busy_pct", kv.get("busy_pct"), want["busy_pct"], 2e-4)
    close("max_gap_s", kv.get("max_gap_s"), want["max_gap_s"], 2e-6)
    if want["at_s"] is not None:
        close("max gap at_s", kv.get("at_s"), want["at_s"], 2e-6)
    if kv.get("proofs") != str(want["proofs"]):
        bad("proofs: printed %s, oracle %d" % (kv.get("proofs"), want["proofs"]))
    close("throughput_per_s", kv.get("throughput_per_s"), want["throughput_per_s"],
          1e-6 * max(1.0, want["throughput_per_s"]))
    close("peak_per_s", kv.get("peak_per_s"), want["peak_per_s"], 1e-6 * max(1.0, want["peak_per_s"]))
    if window_us:
        close("window_s", kv.get("window_s"), window_us / 1e6, 2e-6)
    texts = svg_texts(outs["svg"][0])
    for want_text in labels + [title, "GPU busy %.1f %%" % want["busy_pct"], "%d proofs" % want["proofs"]]:
        if not any(want_text in t for t in texts):
            bad("the SVG has no text \"%s\" (texts: %s)" % (want_text, texts[:40]))


def expect_fail(tmp, what, args, needles):
    out = os.path.join(tmp, "fail.png")
    if os.path.exists(out):
        os.unlink(out)
    rc, so, se = run(*(args + ["-o", out] if "-o" not in args else args))
    if rc != 2:
        bad("%s: exit %d, expected 2 (stderr: %s)" % (what, rc, se.strip()))
    for n in needles:
        if n not in se:
            bad("%s: stderr does not say \"%s\": %s" % (what, n, se.strip()))
    if os.path.exists(out):
        bad("%s: wrote %s anyway" % (what, out))
    print("%s: exit %d: %s" % (what, rc, se.strip().splitlines()[-1] if se.strip() else ""))


def main():
    base, gpid, spids, fpid, ev = make_trace()
    t0 = min(e[4] for e in ev)
    end_us = max(e[4] + e[5] for e in ev) - t0
    labels = ["ctx 0 compute", "ctx 0 copy", "ctx 1 compute", "ctx 1 copy",
              "synth %d" % min(spids), "synth %d" % max(spids), "finalizer %d" % fpid]
    with tempfile.TemporaryDirectory(prefix="czk-plot.") as tmp:
        trace = os.path.join(tmp, "trace.json")
        order = list(range(len(ev)))
        rng.shuffle(order)  # czk trace writes file by file; nothing may depend on the order
        with open(trace, "w") as f:
            f.write(trace_json(ev, [gpid] + spids + [fpid], order))

        # the whole trace, the default window, then a chosen window that no
        # two whole-µs ends can sit exactly on
        check_plot(tmp, trace, ev, t0, 0, end_us, None, labels, [])
        w = rng.randrange(2000, 200000) + 0.5
        check_plot(tmp, trace, ev, t0, 0, end_us, w, labels, ["--window", "%.7f" % (w / 1e6)])
        # a cut that starts inside a compute span and ends inside a finalize
        # span: both are drawn cut, the compute counts from the cut on, the
        # finalize is no proof of the range
        comp = sorted((e[4] - t0, e[5]) for e in ev if e[0] == "compute" and e[5] > 2)
        fin = sorted((e[4] - t0, e[5]) for e in ev if e[0] == "finalize" and e[5] > 2)
        b, d = comp[rng.randrange(2, len(comp) // 3)]
        lo = rng.randint(b + 1, b + d - 1)
        b, d = fin[rng.randrange(2 * len(fin) // 3, len(fin) - 2)]
        hi = rng.randint(b + 1, b + d - 1)
        check_plot(tmp, trace, ev, t0, lo, hi, w, labels[:4],
                   ["--since", "%.6f" % (lo / 1e6), "--until", "%.6f" % (hi / 1e6), "--window", "%.7f" % (w / 1e6)])

        # malformed inputs and bad arguments: exit 2, the file named
        text = open(trace).read()
        cases = [
            ("missing file", os.path.join(tmp, "nosuch.json"), None, ["nosuch.json", "cannot read"]),
            ("truncated JSON", "cut.json", text[:rng.randrange(10, len(text) - 10)], ["cut.json", "invalid JSON"]),
            ("random bytes", "noise.json", bytes(rng.randrange(256) for _ in range(4096)), ["noise.json"]),
            ("no traceEvents", "obj.json", '{"events": []}', ["obj.json", "traceEvents"]),
            ("no records", "empty.json", '{"traceEvents": [{"name":"process_name","ph":"M","pid":1}]}',
             ["empty.json", "no records"]),
            ("ts not a number", "ts.json",
             '{"traceEvents": [{"name":"compute","ph":"X","pid":1,"tid":2,"ts":"7.000","dur":1.000}]}',
             ["ts.json", "traceEvents[0]", "bad \"ts\""]),
            ("no dur", "dur.json", '[{"name":"copy","ph":"X","pid":1,"tid":2,"ts":7.000}]',
             ["dur.json", "traceEvents[0]", "no \"dur\""]),
            ("event not an object", "arr.json", '{"traceEvents": [7]}', ["arr.json", "traceEvents[0]"]),
        ]
        for what, name, content, needles in cases:
            path = name if content is None else os.path.join(tmp, name)
            if content is not None:
                with open(path, "wb" if isinstance(content, bytes) else "w") as f:
                    f.write(content)
            expect_fail(tmp, what, [path], needles)
        expect_fail(tmp, "output not .png/.svg", [trace, "-o", os.path.join(tmp, "fail.jpg")], ["fail.jpg"])
        expect_fail(tmp, "--until before --since", [trace, "--since", "2", "--until", "1"], ["--until"])
        expect_fail(tmp, "--since past the end", [trace, "--since", "%.6f" % (end_us / 1e6 + 5)],
                    ["trace.json", "no records"])
        expect_fail(tmp, "--since not a number", [trace, "--since", "soon"], ["--since"])
    if failures:
        print("%d check(s) failed (seed %d)" % (failures, seed), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
