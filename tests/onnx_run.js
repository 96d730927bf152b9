// Runs ONNX models with ONNX Runtime (npm's onnxruntime-node, found through NODE_PATH) for the
// tests: node onnx_run.js MANIFEST.json, where the manifest is
//   [{"model": "a.onnx", "input": "x.f32", "shape": [1, 3, R, R]}, ...]
// (inputs are raw little-endian float32). Prints one JSON array: per case the first output's
// values, or {"error": "..."} for a case the runtime refused.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
    const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
    const results = [];
    for (const c of cases) {
        try {
            const session = await ort.InferenceSession.create(c.model, {intraOpNumThreads: 1, interOpNumThreads: 1});
            const raw = fs.readFileSync(c.input);
            const x = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
            const feeds = {};
            feeds[session.inputNames[0]] = new ort.Tensor('float32', Float32Array.from(x), c.shape);
            const out = await session.run(feeds);
            results.push(Array.from(out[session.outputNames[0]].data));
        } catch (e) {
            results.push({error: String(e && e.message ? e.message : e)});
        }
    }
    process.stdout.write(JSON.stringify(results) + '\n');
}

main().catch((e) => {
    process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
    process.exit(1);
});
