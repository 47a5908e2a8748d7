// Runs the CPython-for-WASI artifact under Node's own WASI (node:wasi): the independent check of
// scripts/build-python-wasi's output and the reference figure for start-up time.
//
// Usage: node scripts/python-wasi-node.mjs [--time] [--dir HOST::GUEST]... [--] [PYTHON-ARGS...]
//   The standard library (.artifacts/python-wasi/lib, or SPRAWLING_PYTHON_LIB) is preopened at
//   /usr/local/lib; python.wasm comes from SPRAWLING_PYTHON_WASM or .artifacts/python-wasi/.
//   Node has no read-only preopens, so the library is writable here (unlike under `sprawl`).
//   --time prints compile and run milliseconds to stderr. The exit status is the guest's.
import { WASI } from 'node:wasi';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import process from 'node:process';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const wasmPath = process.env.SPRAWLING_PYTHON_WASM ?? join(root, '.artifacts/python-wasi/python.wasm');
const libPath = process.env.SPRAWLING_PYTHON_LIB ?? join(root, '.artifacts/python-wasi/lib');

const preopens = { '/usr/local/lib': libPath };
const pythonArgs = [];
let time = false;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (pythonArgs.length === 0 && a === '--time') { time = true; continue; }
  if (pythonArgs.length === 0 && a === '--dir') {
    const spec = argv[++i] ?? '';
    const sep = spec.indexOf('::');
    if (sep < 0) { console.error(`--dir wants HOST::GUEST, got '${spec}'`); process.exit(2); }
    preopens[spec.slice(sep + 2)] = resolve(spec.slice(0, sep));
    continue;
  }
  if (pythonArgs.length === 0 && a === '--') { pythonArgs.push(...argv.slice(i + 1)); break; }
  pythonArgs.push(a);
}

if (!existsSync(wasmPath) || !existsSync(join(libPath, 'python3.11', 'os.py'))) {
  console.error(`no CPython-for-WASI artifact at ${wasmPath} / ${libPath}: run scripts/build-python-wasi`);
  process.exit(127);
}

const t0 = performance.now();
const module = await WebAssembly.compile(await readFile(wasmPath));
const t1 = performance.now();
const wasi = new WASI({
  version: 'preview1',
  args: ['python3.11', ...pythonArgs],
  env: { PYTHONHOME: '/usr/local', LANG: 'C.UTF-8' },
  preopens,
  returnOnExit: true,
});
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
const code = wasi.start(instance);
const t2 = performance.now();
if (time) {
  console.error(`compile_ms=${(t1 - t0).toFixed(1)} run_ms=${(t2 - t1).toFixed(1)}`);
}
process.exitCode = code;
