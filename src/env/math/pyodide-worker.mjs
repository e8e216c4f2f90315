// The pyodide code tool's worker thread (plain JavaScript: worker threads do not inherit the tsx
// loader when trace-rl runs from bin/trace-rl.js). It loads Python once, then runs one code cell per
// message in a fresh namespace. Limits enforced here:
//  - memory: WebAssembly.Memory.grow is wrapped before pyodide loads, so the heap cannot grow past
//    `memoryLimitMb`; Python sees a failed allocation and raises MemoryError;
//  - output: stdout + stderr past `outputLimitBytes` makes the next write fail (Python: OSError), and
//    the cell stops;
//  - no network, no host files: fetch/WebSocket/XMLHttpRequest are removed from this thread, the
//    Python `js`/`pyodide_js` modules are unregistered, and Python's file system is pyodide's
//    in-memory one (the host's is never mounted).
// Wall time is enforced by the parent, which terminates this thread (see pyodide-tool.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

const { memoryLimitMb, outputLimitBytes, packagesDir } = workerData;
const limitBytes = memoryLimitMb * 1024 * 1024;
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (pages) {
  if (this.buffer.byteLength + pages * 65536 > limitBytes) throw new RangeError(`memory limit of ${memoryLimitMb} MB`);
  return grow.call(this, pages);
};
// pyodide reports a failed stdout write on console.error as well; the cell's OSError says it already.
const consoleError = console.error;
console.error = (...args) => {
  if (args.some((a) => String(a?.message ?? a).includes('output limit') || String(a).startsWith('Error thrown in'))) return;
  consoleError(...args);
};

const { loadPyodide } = await import('pyodide');
// pyodide finds its files from its own URL, which loaders like tsx hide: name the folder.
const indexURL = dirname(createRequire(import.meta.url).resolve('pyodide/package.json')) + '/';
const py = await loadPyodide({ indexURL, env: { HOME: '/home/pyodide' } });

let out = '';
let err = '';
let written = 0;
let overflow = false;
/** While set, writes are dropped (flushing what an earlier cell left in Python's buffers). */
let discard = false;
function sink(append) {
  return {
    write(bytes) {
      if (discard) return bytes.length;
      if (written + bytes.length > outputLimitBytes) {
        if (!overflow) append(new TextDecoder().decode(bytes.subarray(0, outputLimitBytes - written)));
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

if (packagesDir) {
  copyIntoPython(packagesDir, '/packages');
  py.runPython("import sys; sys.path.insert(0, '/packages')");
}

/** Copies a host directory of pure-Python packages into the in-memory file system (read once, at start). */
function copyIntoPython(hostDir, pyDir) {
  py.FS.mkdirTree(pyDir);
  for (const name of readdirSync(hostDir)) {
    if (name === '__pycache__') continue;
    const host = join(hostDir, name);
    const st = statSync(host);
    if (st.isDirectory()) copyIntoPython(host, `${pyDir}/${name}`);
    else if (st.isFile()) py.FS.writeFile(`${pyDir}/${name}`, readFileSync(host));
  }
}

// One cell: a fresh namespace, the value of a trailing expression returned as its repr (like a notebook).
py.runPython(`
from pyodide.code import eval_code as _eval_code
import sys as _sys
def _trace_rl_flush():
    for stream in (_sys.stdout, _sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
def _trace_rl_run(code):
    try:
        value = _eval_code(code, {'__name__': '__main__'}, filename='<cell>')
        return None if value is None else repr(value)
    finally:
        _trace_rl_flush()
`);
const runCell = py.globals.get('_trace_rl_run');
const flush = py.globals.get('_trace_rl_flush');

// Close the ways out of the interpreter. Python first (it needs the js module to do so), then this thread.
py.runPython(`
import sys
from _pyodide._importhook import jsfinder
for _name in ('js', 'pyodide_js'):
    try:
        jsfinder.unregister_js_module(_name)
    except Exception:
        pass
    sys.modules.pop(_name, None)
sys.meta_path[:] = [f for f in sys.meta_path if f is not jsfinder]
del jsfinder, _name
`);
for (const name of ['fetch', 'WebSocket', 'XMLHttpRequest', 'EventSource', 'Request', 'Response', 'Headers']) delete globalThis[name];

parentPort.on('message', (msg) => {
  discard = true;
  flush();
  discard = false;
  out = '';
  err = '';
  written = 0;
  overflow = false;
  const started = performance.now();
  let status = 'ok';
  let error;
  let value;
  try {
    value = runCell(msg.code) ?? undefined;
  } catch (e) {
    const text = String(e?.message ?? e);
    status = overflow ? 'output_limit' : /\bMemoryError\b/.test(text) ? 'memory' : 'error';
    error = trimTraceback(text);
  }
  parentPort.postMessage({ id: msg.id, status, stdout: out, stderr: err, error, value, ms: performance.now() - started });
});

/** Drops pyodide's own frames from a traceback, keeping the cell's lines and the exception. */
function trimTraceback(text) {
  const lines = text.trimEnd().split('\n');
  const cell = lines.findIndex((l) => l.includes('File "<cell>"'));
  if (cell < 0) return lines.slice(-1).join('\n');
  return ['Traceback (most recent call last):', ...lines.slice(cell)].join('\n');
}

parentPort.postMessage({ ready: true });
