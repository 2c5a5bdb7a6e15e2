#!/usr/bin/env python3
"""trace_stats.py TRACE_JSON [SLOT_BYTES] — per-stage means, GPU busy % and the
largest idle gap over the span of the gpud compute records of a `czk trace`
export, and the host-to-device rate of the slot copies when SLOT_BYTES is given."""
import json, sys
from collections import defaultdict

t = json.load(open(sys.argv[1]))
ev = [e for e in (t['traceEvents'] if isinstance(t, dict) else t) if e.get('ph') == 'X']
by = defaultdict(list)
for e in ev:
    by[(e.get('cat', ''), e['name'])].append(e['dur'])
print('| process | stage | count | mean ms |')
print('| --- | --- | --- | --- |')
for (cat, name), d in sorted(by.items()):
    print('| %s | %s | %d | %.1f |' % (cat, name, len(d), sum(d) / len(d) / 1000))
iv = sorted((e['ts'], e['ts'] + e['dur']) for e in ev if e['name'] == 'compute')
if iv:
    busy, gaps, (cs, ce) = 0, [], iv[0]
    for a, b in iv[1:]:
        if a > ce:
            busy += ce - cs; gaps.append(a - ce); cs, ce = a, b
        else:
            ce = max(ce, b)
    busy += ce - cs
    span = ce - iv[0][0]
    print('gpu: %d partitions over %.0f ms, busy %.1f%%, largest idle gap %.1f ms, %.0f proofs/min while busy'
          % (len(iv), span / 1000, 100 * busy / span, max(gaps) / 1000 if gaps else 0, 60e6 * len(iv) / span))
    if gaps:
        g = sorted(gaps)
        print('gaps between compute spans: %d, median %.3f ms, 95th percentile %.3f ms, %d over 5 ms'
              % (len(g), g[len(g) // 2] / 1000, g[min(len(g) - 1, int(0.95 * len(g)))] / 1000,
                 sum(1 for x in g if x > 5000)))
    # inside compute: the device stages (h + the five MSMs) against the whole span
    dev = sum(sum(by.get(('czk-gpud', n), [])) for n in ('h', 'msm_a', 'msm_b1', 'msm_b2', 'msm_c', 'msm_h'))
    comp = sum(by.get(('czk-gpud', 'compute'), []))
    if dev and comp:
        print('compute spans: %.1f%% in the h and MSM stages, the rest host work between them' % (100 * dev / comp))
if len(sys.argv) > 2 and by.get(('czk-gpud', 'copy')):
    d = by[('czk-gpud', 'copy')]
    print('copy: %.1f MB per slot, mean %.1f ms: %.1f GB/s (enqueue to completion callback)'
          % (int(sys.argv[2]) / 1e6, sum(d) / len(d) / 1000, int(sys.argv[2]) / (sum(d) / len(d) / 1e6) / 1e9))
if len(sys.argv) > 2 and by.get(('czk-gpud', 'h2d')):
    d = sorted(by[('czk-gpud', 'h2d')])
    print('h2d: %.1f MB per slot, DMA alone (CUDA events) median %.2f ms: %.1f GB/s, slowest %.2f ms: %.1f GB/s'
          % (int(sys.argv[2]) / 1e6, d[len(d) // 2] / 1000, int(sys.argv[2]) / (d[len(d) // 2] / 1e6) / 1e9,
             d[-1] / 1000, int(sys.argv[2]) / (d[-1] / 1e6) / 1e9))
