// Minimal iden3 binary container reader for the czk interop tests (plain node, no packages):
//   node binfmt.js r1cs-header FILE      print {prime, nWires, nPubOut, nPubIn, nPrvIn,
//                                         nLabels, nConstraints} of an .r1cs as JSON
//   node binfmt.js wtns-header FILE      print {prime, nWitness} of a .wtns as JSON
//   node binfmt.js wtns-bump-all IN OUT  add 1 (mod prime) to every witness value except wire 0
//   node binfmt.js bitfrac FILE          print the fraction of witness values (wires >= 1) in {0, 1}
'use strict';
const fs = require('fs');

function sections(buf, magic) {
  if (buf.toString('latin1', 0, 4) !== magic) throw new Error(`not a ${magic} file`);
  const n = buf.readUInt32LE(8);
  const out = {};
  let off = 12;
  for (let i = 0; i < n; i++) {
    const id = buf.readUInt32LE(off);
    const size = Number(buf.readBigUInt64LE(off + 4));
    out[id] = { off: off + 12, size };
    off += 12 + size;
  }
  if (off !== buf.length) throw new Error(`trailing or missing bytes: ${off} != ${buf.length}`);
  return out;
}

const le = (buf, off, n) => {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(buf[off + i]);
  return v;
};
const putLe = (buf, off, n, v) => {
  for (let i = 0; i < n; i++) { buf[off + i] = Number(v & 0xffn); v >>= 8n; }
};

function wtns(buf) {
  const s = sections(buf, 'wtns');
  const h = s[1].off, n8 = buf.readUInt32LE(h);
  return { n8, prime: le(buf, h + 4, n8), nWitness: buf.readUInt32LE(h + 4 + n8), data: s[2].off };
}

const [cmd, file, out] = process.argv.slice(2);
const buf = fs.readFileSync(file);
switch (cmd) {
  case 'r1cs-header': {
    const s = sections(buf, 'r1cs');
    let o = s[1].off;
    const n8 = buf.readUInt32LE(o); o += 4;
    const prime = le(buf, o, n8); o += n8;
    const h = { prime: prime.toString(), nWires: buf.readUInt32LE(o), nPubOut: buf.readUInt32LE(o + 4),
      nPubIn: buf.readUInt32LE(o + 8), nPrvIn: buf.readUInt32LE(o + 12),
      nLabels: Number(buf.readBigUInt64LE(o + 16)), nConstraints: buf.readUInt32LE(o + 24) };
    console.log(JSON.stringify(h));
    break;
  }
  case 'wtns-header': {
    const w = wtns(buf);
    console.log(JSON.stringify({ prime: w.prime.toString(), nWitness: w.nWitness }));
    break;
  }
  case 'wtns-bump-all': {
    const w = wtns(buf);
    for (let i = 1; i < w.nWitness; i++) {
      const off = w.data + i * w.n8;
      putLe(buf, off, w.n8, (le(buf, off, w.n8) + 1n) % w.prime);
    }
    fs.writeFileSync(out, buf);
    break;
  }
  case 'bitfrac': {
    const w = wtns(buf);
    let bits = 0;
    for (let i = 1; i < w.nWitness; i++) if (le(buf, w.data + i * w.n8, w.n8) < 2n) bits++;
    console.log((bits / Math.max(1, w.nWitness - 1)).toFixed(4));
    break;
  }
  default:
    console.error(`binfmt: unknown command ${cmd}`);
    process.exit(1);
}
