#!/usr/bin/env python3
"""zkey_edit.py — edits a .zkey or a verified-key record in place for the key
loading tests (tests/keyload/*.sh).

  zkey_edit.py flip ZKEY SECTION SEED   flips one byte of the x coordinate of a
                                        point of SECTION (5..9), chosen from SEED
                                        among the points that are not infinity;
                                        size, inode and (restored) mtime stay
  zkey_edit.py offset ZKEY SECTION      prints the payload offset and size
  zkey_edit.py reidentify RECORD ZKEY   rewrites RECORD's dev, ino, size,
                                        mtime_ns and ctime_ns with ZKEY's, keeping
                                        its key id and digest (a record that
                                        names the file as it is now)
"""
import os
import random
import struct
import sys


def sections(path):
    out = {}
    with open(path, 'rb') as f:
        data = f.read(12)
        if data[:4] != b'zkey':
            sys.exit('%s: not a zkey' % path)
        n = struct.unpack('<I', data[8:12])[0]
        pos = 12
        for _ in range(n):
            f.seek(pos)
            sid, size = struct.unpack('<IQ', f.read(12))
            out.setdefault(sid, (pos + 12, size))
            pos += 12 + size
    return out


def flip(path, sec, seed):
    off, size = sections(path)[sec]
    psize = 192 if sec == 7 else 96
    st = os.stat(path)
    rng = random.Random(seed)
    with open(path, 'r+b') as f:
        for _ in range(1000):
            i = rng.randrange(size // psize)
            f.seek(off + i * psize)
            pt = f.read(psize)
            if any(pt):
                break
        else:
            sys.exit('%s: section %d has only points at infinity' % (path, sec))
        byte = rng.randrange(8, 40)  # inside x, below the top limb: the point leaves the curve
        f.seek(off + i * psize + byte)
        b = f.read(1)[0]
        f.seek(off + i * psize + byte)
        f.write(bytes([b ^ (1 << rng.randrange(8))]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    print('flipped a byte of point %d of section %d (offset %d)' % (i, sec, off + i * psize + byte))


def reidentify(rec, path):
    st = os.stat(path)
    new = {'dev': st.st_dev, 'ino': st.st_ino, 'size': st.st_size, 'mtime_ns': st.st_mtime_ns,
           'ctime_ns': st.st_ctime_ns}
    lines = []
    with open(rec) as f:
        for line in f:
            k = line.split(' ', 1)[0]
            lines.append('%s %d\n' % (k, new[k]) if k in new else line)
    with open(rec, 'w') as f:
        f.writelines(lines)


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == 'flip':
        flip(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) == 4 and sys.argv[1] == 'offset':
        print('%d %d' % sections(sys.argv[2])[int(sys.argv[3])])
    elif len(sys.argv) == 4 and sys.argv[1] == 'reidentify':
        reidentify(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
