#!/usr/bin/env python3
"""gpud_calls.py SRCDIR — the call graph between czk-gpud's modules, read
from the sources: which gpud/*.c calls a non-static gpud_* function defined
in another.  Prints the graph and fails when it has a cycle (docs/HACKING.md:
the modules call each other one way; the scheduler is reached through the
dirty flag, clients through the events leaf)."""
import glob
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else '.'
files = sorted(glob.glob(os.path.join(src, 'gpud', '*.c')))
if not files:
    sys.exit('no gpud/*.c under %s' % src)

def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)

defs = {}
bodies = {}
for f in files:
    mod = os.path.basename(f)[:-2]
    text = strip_comments(open(f, encoding='utf-8').read())
    bodies[mod] = text
    for m in re.finditer(r'^(?!static)[a-z][\w \*]*?\b(gpud_\w+)\(', text, flags=re.M):
        defs[m.group(1)] = mod

graph = {}
for mod, text in bodies.items():
    graph[mod] = sorted({defs[fn] for fn in re.findall(r'\b(gpud_\w+)\s*\(', text)
                         if fn in defs and defs[fn] != mod})

for mod in sorted(graph):
    print('%-8s -> %s' % (mod, ', '.join(graph[mod]) or '(none)'))

# depth-first search for a cycle
state = {}
def visit(mod, path):
    state[mod] = 1
    for nxt in graph[mod]:
        if state.get(nxt) == 1:
            cyc = path[path.index(nxt):] + [nxt]
            sys.exit('call cycle between gpud modules: ' + ' -> '.join(cyc))
        if not state.get(nxt):
            visit(nxt, path + [nxt])
    state[mod] = 2
for mod in sorted(graph):
    if not state.get(mod):
        visit(mod, [mod])
print('no call cycle between the %d gpud modules' % len(graph))
