// verify_batch.js — checks many Groth16 proofs with snarkjs (the independent
// oracle) in ONE node process: snarkjs' CLI costs ~1 s of start-up per call,
// the check itself a few tens of ms.  Reads lines "VKEY PUBLIC PROOF" on
// stdin, prints "OK PROOF" or "FAIL PROOF: why" per line; exits 0 only when
// every proof verifies, 1 otherwise, 2 on a usage error.
// usage: node verify_batch.js SNARKJS_MODULE_DIR < list
"use strict";
const fs = require("fs");
const path = require("path");

async function main() {
    if (process.argv.length < 3) {
        console.error("usage: node verify_batch.js SNARKJS_MODULE_DIR < list");
        process.exit(2);
    }
    const snarkjs = require(path.resolve(process.argv[2]));
    const lines = fs.readFileSync(0, "utf8").split("\n").map((l) => l.trim()).filter((l) => l);
    const vkeys = new Map();
    let bad = 0;
    for (const line of lines) {
        const [vk, pub, proof] = line.split(/\s+/);
        if (!proof) {
            console.log(`FAIL ${line}: expected "VKEY PUBLIC PROOF"`);
            bad++;
            continue;
        }
        try {
            if (!vkeys.has(vk)) vkeys.set(vk, JSON.parse(fs.readFileSync(vk, "utf8")));
            const ok = await snarkjs.groth16.verify(vkeys.get(vk), JSON.parse(fs.readFileSync(pub, "utf8")),
                                                    JSON.parse(fs.readFileSync(proof, "utf8")));
            if (ok) console.log(`OK ${proof}`);
            else { console.log(`FAIL ${proof}: snarkjs rejects the proof`); bad++; }
        } catch (e) {
            console.log(`FAIL ${proof}: ${e.message}`);
            bad++;
        }
    }
    console.log(`${lines.length - bad}/${lines.length} proofs verified by snarkjs`);
    process.exit(bad ? 1 : 0);
}
main().catch((e) => { console.error(e); process.exit(2); });
