// Small JSON helper for the czk interop tests (plain node, no packages):
//   node jsontool.js cmp A.json B.json            semantic equality (decimal strings compared as
//                                                  integers, numbers == numeric strings); exit 1 and
//                                                  print the first differing path otherwise
//   node jsontool.js proof-shape proof.json CURVE check the snarkjs groth16 proof.json layout
//   node jsontool.js bump-public IN OUT IDX DELTA public signal IDX += DELTA (mod r)
//   node jsontool.js noncanon-public IN OUT IDX   public signal IDX += r (same value mod r, not < r)
//   node jsontool.js neg-point IN OUT NAME        negate proof point NAME (pi_a, pi_b, pi_c): y -> q - y
//   node jsontool.js bump-x IN OUT NAME           x coordinate of proof point NAME += 1 (off-curve)
//   node jsontool.js count FILE                   print the length of a JSON array
//   node jsontool.js get FILE KEY                 print a top-level field
// The moduli of bump-public, noncanon-public, neg-point and bump-x are the curve's named by
// $JT_CURVE (bls12381, the default, or bn128).
'use strict';
const fs = require('fs');

const CURVES = {
  bls12381: {
    r: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n,
    q: 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaabn,
  },
  bn128: {
    r: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
    q: 21888242871839275222246405745257275088696311157297823662689037894645226208583n,
  },
};

const CUR = CURVES[process.env.JT_CURVE || 'bls12381'];
if (!CUR) { console.error(`jsontool: JT_CURVE=${process.env.JT_CURVE}: unknown curve`); process.exit(1); }

const read = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const write = (f, v) => fs.writeFileSync(f, JSON.stringify(v, null, 1) + '\n');
const die = (msg) => { console.error('jsontool: ' + msg); process.exit(1); };

function isIntLike(v) {
  return (typeof v === 'number' && Number.isInteger(v)) ||
         (typeof v === 'string' && /^-?[0-9]+$/.test(v));
}

// Returns null when equal, otherwise a description of the first difference.
function diff(a, b, path) {
  if (isIntLike(a) && isIntLike(b)) {
    return BigInt(a) === BigInt(b) ? null : `${path}: ${a} != ${b}`;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return `${path}: array vs non-array`;
    if (a.length !== b.length) return `${path}: length ${a.length} != ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = diff(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort(), kb = Object.keys(b).sort();
    for (const k of ka) if (!(k in b)) return `${path}.${k}: missing in second file`;
    for (const k of kb) if (!(k in a)) return `${path}.${k}: missing in first file`;
    for (const k of ka) {
      const d = diff(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return a === b ? null : `${path}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`;
}

function checkProofShape(p, curve) {
  const fe = (v, what) => {
    if (typeof v !== 'string' || !/^[0-9]+$/.test(v)) die(`${what}: not a decimal string: ${JSON.stringify(v)}`);
    if (BigInt(v) >= CURVES[curve].q) die(`${what}: not reduced mod q`);
  };
  if (p.protocol !== 'groth16') die(`protocol is ${JSON.stringify(p.protocol)}, want "groth16"`);
  if (p.curve !== curve) die(`curve is ${JSON.stringify(p.curve)}, want "${curve}"`);
  for (const n of ['pi_a', 'pi_c']) {
    if (!Array.isArray(p[n]) || p[n].length !== 3) die(`${n}: want [x, y, "1"]`);
    fe(p[n][0], n + '[0]'); fe(p[n][1], n + '[1]');
    if (p[n][2] !== '1') die(`${n}[2] is ${JSON.stringify(p[n][2])}, want "1"`);
  }
  const b = p.pi_b;
  if (!Array.isArray(b) || b.length !== 3 || !b.every((c) => Array.isArray(c) && c.length === 2)) {
    die('pi_b: want [[x0, x1], [y0, y1], ["1", "0"]]');
  }
  for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) fe(b[i][j], `pi_b[${i}][${j}]`);
  if (b[2][0] !== '1' || b[2][1] !== '0') die('pi_b[2] must be ["1", "0"]');
}

const [cmd, ...args] = process.argv.slice(2);
switch (cmd) {
  case 'cmp': {
    const d = diff(read(args[0]), read(args[1]), '$');
    if (d) { console.error(`${args[0]} vs ${args[1]}: ${d}`); process.exit(1); }
    break;
  }
  case 'proof-shape':
    checkProofShape(read(args[0]), args[1] || 'bls12381');
    break;
  case 'bump-public': {
    const pub = read(args[0]), i = Number(args[2]), r = CUR.r;
    if (!(i >= 0 && i < pub.length)) die(`index ${i} out of range (${pub.length} signals)`);
    let d = BigInt(args[3]) % r;
    if (d === 0n) d = 1n;
    pub[i] = ((BigInt(pub[i]) + d) % r).toString();
    write(args[1], pub);
    break;
  }
  case 'noncanon-public': {
    const pub = read(args[0]), i = Number(args[2]);
    if (!(i >= 0 && i < pub.length)) die(`index ${i} out of range (${pub.length} signals)`);
    pub[i] = (BigInt(pub[i]) + CUR.r).toString();
    write(args[1], pub);
    break;
  }
  case 'neg-point': {
    const p = read(args[0]), n = args[2], q = CUR.q;
    if (n === 'pi_b') {
      p.pi_b[1] = p.pi_b[1].map((c) => ((q - BigInt(c)) % q).toString());
    } else {
      p[n][1] = ((q - BigInt(p[n][1])) % q).toString();
    }
    write(args[1], p);
    break;
  }
  case 'bump-x': {
    const p = read(args[0]), n = args[2], q = CUR.q;
    if (n === 'pi_b') p.pi_b[0][0] = ((BigInt(p.pi_b[0][0]) + 1n) % q).toString();
    else p[n][0] = ((BigInt(p[n][0]) + 1n) % q).toString();
    write(args[1], p);
    break;
  }
  case 'count':
    console.log(read(args[0]).length);
    break;
  case 'get':
    console.log(JSON.stringify(read(args[0])[args[1]]));
    break;
  default:
    die(`unknown command ${cmd}`);
}
