// Runs a wasip1 command module under node's WASI (node 20+): the JIT yardstick of bench/run.
// Usage: node node-wasi.mjs MODULE.wasm [ARGS...]; exits with the guest's exit code.
import { readFile } from 'node:fs/promises';
import { argv, exit } from 'node:process';
import { WASI } from 'node:wasi';

const [path, ...args] = argv.slice(2);
if (!path) {
  console.error('usage: node node-wasi.mjs MODULE.wasm [ARGS...]');
  exit(2);
}
const wasi = new WASI({ version: 'preview1', args: [path, ...args], env: {}, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(path));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
