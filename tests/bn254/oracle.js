// oracle.js — an independent BN254 ("bn128") oracle for test_bn254_pairing:
// ffjavascript's bn128 (the wasm curve snarkjs uses).  Reads decimal scalar
// pairs "a b" from the command line and prints, for each pair, aG1, bG2 and
// e(aG1, bG2) as decimal integers in standard (not Montgomery) form, one
// number per line:
//   G1 x y                    (2 lines)
//   G2 x.c0 x.c1 y.c0 y.c1    (4 lines)
//   GT c0.c0.c0 c0.c0.c1 c0.c1.c0 ... c1.c2.c1  (12 lines; Fp12 = c0 + c1 w,
//      Fp6 = c0 + c1 v + c2 v^2, Fp2 = c0 + c1 u: ffjavascript's tower order)
// Usage: node oracle.js MODULES_DIR a1 b1 [a2 b2 ...]
"use strict";
const path = require("path");

async function main() {
    const dir = process.argv[2];
    const { buildBn128 } = require(path.join(path.resolve(dir), "ffjavascript"));
    const curve = await buildBn128(true);
    const out = [];
    const dec = (v) => BigInt(v).toString(10);
    for (let i = 3; i + 1 < process.argv.length; i += 2) {
        const a = BigInt(process.argv[i]);
        const b = BigInt(process.argv[i + 1]);
        const P = curve.G1.toAffine(curve.G1.timesScalar(curve.G1.g, a));
        const Q = curve.G2.toAffine(curve.G2.timesScalar(curve.G2.g, b));
        const e = curve.Gt.toObject(curve.pairing(P, Q));
        const p = curve.G1.toObject(P), q = curve.G2.toObject(Q);
        out.push(dec(p[0]), dec(p[1]));
        out.push(dec(q[0][0]), dec(q[0][1]), dec(q[1][0]), dec(q[1][1]));
        for (let j = 0; j < 2; j++)
            for (let k = 0; k < 3; k++)
                for (let l = 0; l < 2; l++)
                    out.push(dec(e[j][k][l]));
    }
    process.stdout.write(out.join("\n") + "\n");
    await curve.terminate();
}

main().then(() => process.exit(0), (err) => {
    process.stderr.write("oracle.js: " + (err && err.stack ? err.stack : String(err)) + "\n");
    process.exit(2);
});
