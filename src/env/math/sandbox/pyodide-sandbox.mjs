// One code-sandbox process (plain JavaScript: it runs under `node` directly, inside bubblewrap, with
// Node's permission model on; see confine.ts for the layers around it and docs/reliability.md for the
// threat model). It loads Python (pyodide) once, then runs the cells it is sent, in order, in one
// interpreter: the parent gives each process one trajectory's cells only, so a cell sees its own
// trajectory's earlier cells and nothing else.
//
// Two modes. `snapshot`: load Python and the modules cells use most, write one line
// {snapshot: base64} (a pyodide memory snapshot, taken before any cell ran) and exit. `run`: read such
// a snapshot from descriptor 4 (restoring it is ~5× faster than loading Python), then speak the
// protocol: one JSON object per line; stdin: {id, code, quiet}; stdout: {ready: true} once, then one
// {id, status, stdout, stderr, error?, value?, ms, fatal?} per cell. Nothing else is written to stdout
// (console output goes to stderr), so the parent can treat any other line as a failure.
//
// The parent runs it at a neutral path (/sandbox/sandbox.mjs, pyodide at /sandbox/pyodide: confine.ts),
// so nothing here (process.argv, stack traces) names the host's folders.
//
// Limits enforced here (the operating system enforces the hard ones, confine.ts):
//  - memory: the WebAssembly memory is created with a maximum of `memoryMb`, so Python sees a failed
//    allocation and raises MemoryError;
//  - output: stdout + stderr past `outputBytes` makes the next write fail, and the cell stops; the
//    value and the error are cut to what is left of `outputBytes` (status output_limit, the process
//    lives on);
//  - determinism: the entropy source is a fixed-seed generator and PYTHONHASHSEED is 0, so the same
//    cells give the same output in every process (random.random() included);
//  - second layer only: the `js`, `pyodide_js`, `pyodide`, `_pyodide` and `_pyodide_core` modules are
//    not importable from cells;
//  - a cell's work ends with it: every timer it set (asyncio's call_soon / call_later / tasks, which
//    pyodide runs on setImmediate and setTimeout; an itimer) is cleared once it answers, so nothing
//    it scheduled runs between cells (a `call_later` of a busy loop burned CPU until RLIMIT_CPU).
//    Code that escapes to JavaScript can still schedule work: the parent kills a sandbox that uses
//    CPU while idle (pyodide-tool.ts).
import nodeCrypto from 'node:crypto';
import { constants as fsConstants, readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { createInterface } from 'node:readline';
import v8 from 'node:v8';

const config = JSON.parse(process.argv[2]);
const { mode, memoryMb, outputBytes, pyodideDir, packagesDir } = config;

const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
// pyodide and Node print warnings with console.*: keep stdout for the protocol.
for (const name of ['log', 'info', 'warn', 'debug']) console[name] = console.error;

// Node's permission model refuses process.binding; pyodide's NODEFS asks it only for the file-system
// constants, which the public fs module has.
process.binding = (name) => {
  if (name === 'constants') return { fs: fsConstants };
  throw new Error(`process.binding('${name}') is not available in the sandbox`);
};

// V8's flags stay as the process started with them (`--allow-natives-syntax` would hand a cell that
// reached JavaScript V8's test-only primitives): the function that changes them refuses, and cannot be
// put back (the module is frozen; its ESM view is synced). The process runs with
// --freeze-flags-after-init too (confine.ts), which ends it on any other route to a flag change.
v8.setFlagsFromString = function setFlagsFromString() {
  throw new Error("v8.setFlagsFromString is not available in the sandbox: V8's flags are fixed");
};
Object.freeze(v8);
syncBuiltinESMExports();

// Timers set while a cell runs, cleared when it answers. Installed before pyodide loads, so its
// scheduler (which looks these up on the global object when it schedules) goes through them.
let inCell = false;
const cellTimers = [];
for (const [set, clear] of [
  ['setTimeout', 'clearTimeout'],
  ['setInterval', 'clearInterval'],
  ['setImmediate', 'clearImmediate'],
]) {
  const realSet = globalThis[set];
  const realClear = globalThis[clear];
  globalThis[set] = function (...args) {
    const handle = realSet.apply(this, args);
    if (inCell) cellTimers.push(() => realClear(handle));
    return handle;
  };
}
function endCellWork() {
  inCell = false;
  for (const clear of cellTimers.splice(0)) clear();
}

const RealMemory = WebAssembly.Memory;
const maxPages = Math.floor((memoryMb * 1024 * 1024) / 65536);
WebAssembly.Memory = function Memory(desc) {
  if (desc.shared) return new RealMemory(desc);
  return new RealMemory({ ...desc, maximum: Math.min(desc.maximum ?? maxPages, maxPages) });
};
WebAssembly.Memory.prototype = RealMemory.prototype;

// xorshift128+: the sandbox needs reproducibility here, not unpredictability.
let s0 = 0x9e3779b97f4a7c15n,
  s1 = 0xbf58476d1ce4e5b9n;
const M64 = (1n << 64n) - 1n;
function next64() {
  let x = s0;
  const y = s1;
  s0 = y;
  x = (x ^ (x << 23n)) & M64;
  s1 = x ^ y ^ (x >> 17n) ^ (y >> 26n);
  return (s1 + y) & M64;
}
function fillRandom(array) {
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  for (let i = 0; i < bytes.length; i += 8) {
    let v = next64();
    for (let j = i; j < Math.min(i + 8, bytes.length); j++, v >>= 8n) bytes[j] = Number(v & 0xffn);
  }
  return array;
}
// Emscripten draws entropy from node:crypto under Node, and from the Web Crypto API elsewhere.
globalThis.crypto.getRandomValues = fillRandom;
nodeCrypto.randomFillSync = fillRandom;

// Loaded with require: importing this 9 MB CommonJS file from ESM would make Node scan it for
// exports first (about a quarter of a second per process); pyodide skips loading it when it is set.
createRequire(import.meta.url)(`${pyodideDir}/pyodide.asm.js`); // sets globalThis._createPyodideModule
const { loadPyodide } = await import(`${pyodideDir}/pyodide.mjs`);
const options = { indexURL: `${pyodideDir}/`, env: { HOME: '/home/pyodide', PYTHONHASHSEED: '0' } };
if (mode === 'snapshot') {
  const maker = await loadPyodide({ ...options, _makeSnapshot: true });
  maker.runPython('import fractions, math, cmath, decimal, itertools, functools, statistics, random, collections, re');
  // Exit once the whole line is written: a large write to a pipe completes asynchronously.
  process.stdout.write(JSON.stringify({ snapshot: Buffer.from(maker.makeMemorySnapshot()).toString('base64') }) + '\n', () => process.exit(0));
  await new Promise(() => undefined);
}
const py = await loadPyodide({ ...options, _loadSnapshot: readFileSync(4) });

let out = '';
let err = '';
let written = 0;
let overflow = false;
/** Set while what a cell stopped at the output limit left in Python's stream buffers is flushed away. */
let draining = false;
function sink(append) {
  return {
    write(bytes) {
      if (draining) return bytes.length;
      if (written + bytes.length > outputBytes) {
        if (!overflow) append(new TextDecoder().decode(bytes.subarray(0, outputBytes - written)));
        overflow = true;
        throw new Error('output limit');
      }
      written += bytes.length;
      append(new TextDecoder().decode(bytes));
      return bytes.length;
    },
  };
}
py.setStdout(sink((s) => (out += s)));
py.setStderr(sink((s) => (err += s)));

if (packagesDir) py.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(packagesDir)})`);
if (packagesDir) py.mountNodeFS(packagesDir, packagesDir);

// A cell runs in the trajectory's one namespace; the value of a trailing expression comes back as
// its repr (like a notebook). The runner keeps its own references, so the import block below does
// not reach it.
py.runPython(`
from pyodide.code import eval_code as _eval_code
import sys as _sys
_ns = {'__name__': '__main__'}
def _trace_rl_run(code, max_chars):
    try:
        value = _eval_code(code, _ns, filename='<cell>')
        # Cut in Python: a character is at least one byte, so max_chars + 1 tells whether it is over.
        return None if value is None else repr(value)[:max_chars + 1]
    finally:
        for stream in (_sys.stdout, _sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
def _trace_rl_drain():
    for stream in (_sys.stdout, _sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
`);
const runCell = py.globals.get('_trace_rl_run');
const drainStreams = py.globals.get('_trace_rl_drain');

py.runPython(`
import sys, importlib.abc
from _pyodide._importhook import jsfinder
for _name in ('js', 'pyodide_js'):
    try:
        jsfinder.unregister_js_module(_name)
    except Exception:
        pass
sys.meta_path[:] = [f for f in sys.meta_path if f is not jsfinder]
_blocked = ('js', 'pyodide_js', 'pyodide', '_pyodide', '_pyodide_core')
class _BlockBridge(importlib.abc.MetaPathFinder):
    blocked = _blocked
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in self.blocked:
            raise ImportError(f"module '{name}' is not available in the sandbox")
        return None
for _name in list(sys.modules):
    if _name.split('.')[0] in _blocked:
        del sys.modules[_name]
sys.meta_path.insert(0, _BlockBridge())
del jsfinder, _name, _BlockBridge, _blocked
import os as _os
def _no_processes(*args, **kwargs):
    raise PermissionError('the sandbox cannot start processes')
for _name in ('system', 'popen', 'fork', 'forkpty', 'posix_spawn', 'posix_spawnp', 'execv', 'execve', 'execl', 'execle', 'execlp', 'execlpe', 'execvp', 'execvpe', 'spawnv', 'spawnve', 'spawnl', 'spawnle', 'spawnlp', 'spawnlpe', 'spawnvp', 'spawnvpe'):
    if hasattr(_os, _name):
        setattr(_os, _name, _no_processes)
del _os, _name, _no_processes
`);
for (const name of ['fetch', 'WebSocket', 'XMLHttpRequest', 'EventSource', 'Request', 'Response', 'Headers']) delete globalThis[name];

/** `text` cut to at most `max` UTF-8 bytes, at a character boundary. */
function cutToBytes(text, max) {
  const bytes = Buffer.from(text);
  let end = Math.max(0, max);
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString();
}

/** Drops pyodide's own frames from a traceback, keeping the cell's lines and the exception. */
function trimTraceback(text) {
  const lines = text.trimEnd().split('\n');
  const cell = lines.findIndex((l) => l.includes('File "<cell>"'));
  if (cell < 0) return lines.slice(-1).join('\n');
  return ['Traceback (most recent call last):', ...lines.slice(cell)].join('\n');
}

const lines = createInterface({ input: process.stdin });
/** Set once a fatal error's reply is being written: the process runs nothing more and exits after it. */
let exiting = false;
lines.on('line', (line) => {
  if (exiting) return;
  const msg = JSON.parse(line);
  out = '';
  err = '';
  written = 0;
  overflow = false;
  const started = performance.now();
  let status = 'ok';
  let error;
  let value;
  try {
    inCell = true;
    value = runCell(msg.code, outputBytes) ?? undefined;
  } catch (e) {
    const text = String(e?.message ?? e);
    if (e?.pyodide_fatal_error) {
      // The interpreter cannot run another cell: say why, then end this process (the parent replaces it).
      const reply = { id: msg.id, status: 'error', fatal: true, error: text.trim().split('\n').at(-1)?.slice(0, 300), ms: performance.now() - started };
      exiting = true;
      process.stdout.write(JSON.stringify(reply) + '\n', () => process.exit(70));
      return;
    }
    status = overflow ? 'output_limit' : /\bMemoryError\b/.test(text) ? 'memory' : 'error';
    // Past the limit the exception is the sink's own (the failed write), not the cell's.
    if (!overflow) error = trimTraceback(text);
  } finally {
    endCellWork();
  }
  if (overflow) {
    // The write that passed the limit failed, so Python still holds it (and maybe more) in the stream's
    // buffer, and the next cell's first flush would print it there: this cell's output, past its limit.
    draining = true;
    try {
      drainStreams();
    } finally {
      draining = false;
    }
  }
  // The value and the error count against the same limit as the printed output, in the order the
  // observation shows them: what does not fit is cut there and the cell answers output_limit (a value
  // or traceback of any length no longer makes a reply too long for the parent, which ended the process).
  let room = outputBytes - written;
  const fit = (text) => {
    if (text === undefined) return undefined;
    const bytes = Buffer.byteLength(text);
    if (bytes <= room) {
      room -= bytes;
      return text;
    }
    const cut = cutToBytes(text, room);
    room = 0;
    if (status !== 'memory') status = 'output_limit';
    return cut;
  };
  value = fit(value);
  error = fit(error);
  const ms = performance.now() - started;
  if (msg.quiet) send({ id: msg.id, status, ms });
  else send({ id: msg.id, status, stdout: out, stderr: err, error, value, ms });
});
lines.on('close', () => exiting || process.exit(0));

send({ ready: true });
