import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatObservation, PyodideCodeTool, type CodeResult } from '../../../src/env/index.ts';
import { confinedCommand, FROZEN_FLAGS, PYODIDE_DIR, SANDBOX_SCRIPT } from '../../../src/env/math/sandbox/confine.ts';
import { runCli } from '../../helpers/run-cli.ts';
import { startStandIn } from '../../policy/openai-stand-in.ts';

/**
 * Model-written code against the sandbox, as an attacker would write it (issue 31). Every attack
 * fails closed, the host is checked to be untouched, and the next cell still works. Each attack runs
 * as its own trajectory (a fresh interpreter). The "escape" cells get past the sandbox's Python
 * import block (the second layer, which is not a boundary) and run JavaScript in the interpreter's
 * process, to show that the layers below hold on their own.
 */
// 3 s is far above what any cell here that must finish takes (under half a second on a loaded 2-core
// machine); the cells that must be stopped by the clock (busy loops, a huge integer) wait it out, and
// each burns a core until then. The file-write test below has its own, longer limit.
const LIMITS = { timeoutMs: 3000, memoryMb: 96, outputBytes: 4000 };
process.env.TRACE_RL_TEST_SECRET = 'hunter2';
const tool = new PyodideCodeTool({ ...LIMITS, workers: 2 });
// A second tool (its own snapshot of Python, about 3 CPU-s to make): the file-write test needs a wall
// limit far above what the writes take on a loaded 2-core machine (about 5 s), so that what stops its
// cell is the memory limit, not the clock; the determinism test runs its cell in another tool.
const roomy = new PyodideCodeTool({ ...LIMITS, timeoutMs: 30_000, workers: 1 });
const host = mkdtempSync(join(tmpdir(), 'trace-rl-attacks-'));
let listener: Server;
let port = 0;
let connections = 0;
let bystander: ChildProcess;

before(async () => {
  listener = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  port = (listener.address() as { port: number }).port;
  bystander = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  await tool.warmup();
});
after(async () => {
  await tool.close();
  await roomy.close();
  bystander.kill('SIGKILL');
  await new Promise<void>((r) => listener.close(() => r()));
  rmSync(host, { recursive: true, force: true });
});

const run = (code: string, history: string[] = []): Promise<CodeResult> => tool.run(code, { history });
const obs = (r: CodeResult) => formatObservation(r);

/** A cell that runs `js` (a function body) in the interpreter's JavaScript realm and prints what it returns. */
function escape(js: string): string {
  // The import block is not a boundary: the garbage collector hands out the loaded module.
  return [
    'import gc',
    "ffi = next(o for o in gc.get_objects() if type(o).__name__ == 'module' and o.__name__ == 'pyodide.ffi')",
    `print(ffi.to_js([1]).constructor.constructor(${JSON.stringify(js)})())`,
  ].join('\n');
}
const tryJs = (body: string) => `try { ${body} } catch (e) { return 'blocked ' + (e.code ?? e.message); }`;

/** The host is as it was: no file in its folder, no connection to its listener, its bystander process alive. */
async function assertHostUntouched(): Promise<void> {
  assert.deepEqual(readdirSync(host), [], 'nothing written to the host folder');
  assert.equal(connections, 0, 'no connection reached the host listener');
  assert.doesNotThrow(() => process.kill(bystander.pid!, 0), 'the bystander process lives');
  assert.equal(obs(await run('print(6 * 7)')), '42', 'the next cell works');
}

describe('sandbox attacks: what broke before (issue 31) now fails closed', () => {
  test('os.system writes no host file', async () => {
    const r = await run(`import os\nos.system('id > ${host}/pwned.txt')`);
    assert.equal(r.status, 'error');
    assert.match(obs(r), /PermissionError: the sandbox cannot start processes/);
    const raw = await run(`import posix\nposix.system('id > ${host}/pwned.txt')`);
    assert.notEqual(raw.status, 'ok', obs(raw));
    await assertHostUntouched();
  });

  test('the pyodide.ffi route to JavaScript: closed in Python, and the realm it reaches can do nothing', async () => {
    const blocked = await run('from pyodide.ffi import to_js\nto_js([1]).constructor.constructor(\'process.kill(process.pid, "SIGKILL")\')()');
    assert.match(obs(blocked), /ImportError: module 'pyodide' is not available in the sandbox/);
    // Past the Python block: the process can kill only itself; the host goes on.
    const self = await run(escape('process.kill(process.pid, "SIGKILL")'));
    assert.equal(self.status, 'error');
    assert.match(obs(self), /^SandboxExit: the cell ended its interpreter/);
    const fs = await run(escape(tryJs("return process.getBuiltinModule('fs').readFileSync('/etc/hostname', 'utf8')")));
    assert.equal(obs(fs), 'blocked ERR_ACCESS_DENIED');
    const write = await run(escape(tryJs(`process.getBuiltinModule('fs').writeFileSync('${host}/pwned.txt', 'x'); return 'written'`)));
    assert.equal(obs(write), 'blocked ERR_ACCESS_DENIED');
    const child = await run(escape(tryJs("return String(process.getBuiltinModule('child_process').execSync('id'))")));
    assert.equal(obs(child), 'blocked ERR_ACCESS_DENIED');
    const worker = await run(escape(tryJs("new (process.getBuiltinModule('worker_threads').Worker)('1', { eval: true }); return 'started'")));
    assert.equal(obs(worker), 'blocked ERR_ACCESS_DENIED');
    const kill = await run(escape(tryJs(`process.kill(${bystander.pid}, 'SIGKILL'); return 'sent'`)));
    assert.equal(obs(kill), 'blocked ESRCH', 'the host pid does not exist in the sandbox');
    await assertHostUntouched();
  });

  test('node:net from the escaped realm and Python sockets reach no listener; DNS resolves nothing', async () => {
    const start = escape(
      `globalThis.out = 'pending'; const s = process.getBuiltinModule('net').connect(${port}, '127.0.0.1'); s.on('connect', () => (globalThis.out = 'connected')); s.on('error', (e) => (globalThis.out = 'blocked ' + e.code)); return 'started'`,
    );
    assert.equal(obs(await run(start)), 'started');
    await new Promise((r) => setTimeout(r, 300));
    const outcome = await run(escape('return globalThis.out'), [start]);
    assert.match(obs(outcome), /^blocked E/, obs(outcome));
    const py = await run(`import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(('127.0.0.1', ${port}))`);
    assert.equal(py.status, 'error', obs(py));
    // Python's resolver is emscripten's stand-in (it invents 172.29.x.x addresses without asking
    // anyone), and those addresses lead nowhere; the escaped realm's resolver finds nothing.
    const dns = await run(
      "import socket\nhost = socket.getaddrinfo('example.com', 80)[0][4][0]\nprint(host.startswith('172.29.'))\nsocket.create_connection((host, 80), timeout=2)",
    );
    assert.equal(dns.status, 'error', obs(dns));
    assert.match(obs(dns), /^True\n/);
    const lookup = escape(
      "globalThis.dns = 'pending'; process.getBuiltinModule('dns').lookup('example.com', (e, a) => (globalThis.dns = e ? 'blocked ' + e.code : 'resolved ' + a)); return 'started'",
    );
    assert.equal(obs(await run(lookup)), 'started');
    await new Promise((r) => setTimeout(r, 300));
    assert.match(obs(await run(escape('return globalThis.dns'), [lookup])), /^blocked E/);
    await assertHostUntouched();
  });

  test('in-memory files count against the memory limit (15 × 100 MB files with a 96 MB heap)', async () => {
    const rssBefore = process.memoryUsage().rss;
    const r = await roomy.run(
      "chunk = b'x' * 2**20\nfor i in range(15):\n    with open(f'/tmp/f{i}', 'wb') as f:\n        for _ in range(100):\n            f.write(chunk)\nprint('wrote 1.5 GB')",
      { history: [] },
    );
    assert.notEqual(r.status, 'ok', obs(r));
    assert.ok(['memory', 'error'].includes(r.status), r.status);
    assert.ok(process.memoryUsage().rss - rssBefore < 200 * 2 ** 20, 'the host process did not hold the files');
    await assertHostUntouched();
  });

  test('state does not leak across trajectories: files, builtins overrides, module monkeypatches, a counter file', async () => {
    const poison = "import builtins, math\nbuiltins.abs = lambda x: 'poisoned'\nmath.sqrt = lambda x: -1\nopen('/tmp/counter', 'w').write('1')";
    assert.equal((await run(poison)).status, 'ok');
    const clean = await run("import math, os\nprint(abs(-2), math.sqrt(16), os.path.exists('/tmp/counter'))");
    assert.equal(obs(clean), '2 4.0 False');
    // Within its own trajectory a cell does see what the earlier cells did.
    assert.equal(obs(await run("print(abs(-2), open('/tmp/counter').read())", [poison])), 'poisoned 1');
  });

  test('same cells, same result, whatever ran before: random and hash order are fixed', async () => {
    const cell = "import random\nprint(random.random(), list({'a', 'b', 'c', 'd'}))";
    const first = obs(await run(cell));
    await run('import random\nfor _ in range(1000): random.random()');
    assert.equal(obs(await run(cell)), first);
    assert.equal(obs(await roomy.run(cell)), first, 'another tool gives the same output');
  });
});

describe('sandbox attacks: more ways out, each closed', () => {
  test('fork and process creation: os.fork and subprocess fail in Python; the escaped realm cannot spawn', async () => {
    assert.match(obs(await run('import os\nos.fork()')), /PermissionError|OSError|not supported/);
    assert.notEqual((await run("import subprocess\nsubprocess.run(['id'])")).status, 'ok');
    const bomb = await run(
      escape(
        tryJs("const cp = process.getBuiltinModule('child_process'); for (let i = 0; i < 100; i++) cp.spawn(process.execPath, ['-e', '1']); return 'spawned'"),
      ),
    );
    assert.equal(obs(bomb), 'blocked ERR_ACCESS_DENIED');
    await assertHostUntouched();
  });

  test('/proc and the environment: no host process or variable is visible', async () => {
    const env = await run('import os\nprint(sorted(os.environ))');
    assert.doesNotMatch(obs(env), /TRACE_RL_TEST_SECRET/);
    const jsEnv = await run(escape('return JSON.stringify(process.env)'));
    assert.equal(obs(jsEnv), '{"PWD":"/"}', 'bubblewrap cleared the environment (it sets only PWD)');
    const proc = await run(escape(tryJs("return process.getBuiltinModule('fs').readFileSync('/proc/1/environ', 'utf8')")));
    assert.equal(obs(proc), 'blocked ERR_ACCESS_DENIED');
    const pyProc = await run("print(open('/proc/self/environ').read())");
    assert.doesNotMatch(obs(pyProc), /TRACE_RL_TEST_SECRET/);
  });

  test('writes outside scratch: a host path written from Python lands nowhere on the host', async () => {
    const r = await run(
      `import os\nos.makedirs('${host}', exist_ok=True)\nopen('${host}/pwned.txt', 'w').write('x')\nprint(os.path.exists('${host}/pwned.txt'))`,
    );
    assert.equal(obs(r), 'True', 'the write succeeded inside the sandbox (its own in-memory scratch)');
    assert.equal(existsSync(join(host, 'pwned.txt')), false);
    await assertHostUntouched();
  });

  test('signal handlers do not outlast the wall-time limit', async () => {
    const t = performance.now();
    const r = await run(
      'import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):\n    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass',
    );
    assert.equal(r.status, 'timeout');
    const ms = performance.now() - t;
    assert.ok(ms >= LIMITS.timeoutMs - 50 && ms < LIMITS.timeoutMs + 4000, `stopped after ${Math.round(ms)} ms`);
    const js = await run(escape("process.on('SIGTERM', () => {}); process.on('SIGINT', () => {}); for (;;) {}"));
    assert.equal(js.status, 'timeout');
    await assertHostUntouched();
  });

  test('ctypes and the _pyodide internals', async () => {
    assert.match(obs(await run('import _pyodide')), /ImportError: module '_pyodide' is not available/);
    assert.match(obs(await run('import _pyodide_core')), /ImportError: module '_pyodide_core' is not available/);
    const ctypes = await run('import ctypes\nctypes.string_at(2**31 + 12345, 64)');
    assert.notEqual(ctypes.status, 'ok', obs(ctypes));
    await assertHostUntouched();
  });

  test('a reply that is not the protocol, or longer than the output limit allows, ends the process, not the host', async () => {
    // A junk line of one whole pipe read (64 KiB) puts the reply that follows it in the next read, as a
    // slow machine does: the reply, already in the pipe when the process is killed, must not count.
    for (const line of ["'not json'", "'j'.repeat(65535)", "'j'.repeat(65535)", "'j'.repeat(65535)"]) {
      const junk = await run(escape(`process.stdout.write(${line} + '\\n'); return 'x'`));
      assert.match(obs(junk), /^SandboxExit/);
    }
    const flood = await run(escape("process.stdout.write('x'.repeat(2 ** 22)); return 'x'"));
    assert.match(obs(flood), /^SandboxExit/);
    await assertHostUntouched();
  });

  test('what held before still holds: loops, recursion, huge integers, list bombs, print floods, import js', async () => {
    assert.equal((await run('while True:\n    pass')).status, 'timeout');
    assert.match(obs(await run('def f(n):\n    return f(n + 1)\nf(0)')), /RecursionError/);
    assert.ok(['timeout', 'error', 'memory'].includes((await run('x = 10**(10**7)\nprint(len(str(x)))')).status));
    assert.equal((await run("a = []\nwhile True:\n    a.append('x' * 10**6)")).status, 'memory');
    assert.equal((await run("while True:\n    print('spam')")).status, 'output_limit');
    assert.match(obs(await run('import js')), /ImportError: module 'js' is not available/);
    await assertHostUntouched();
  });
});

describe('issue 69: the process offers no V8 flag change and shows no host path', () => {
  test('v8.setFlagsFromString refuses, cannot be put back, and natives syntax stays off; the interpreter lives on', async () => {
    const set = await run(escape(tryJs("process.getBuiltinModule('v8').setFlagsFromString('--allow-natives-syntax'); return 'set'")));
    assert.equal(obs(set), "blocked v8.setFlagsFromString is not available in the sandbox: V8's flags are fixed");
    const swap = await run(
      escape(
        tryJs(
          "const v8 = process.getBuiltinModule('v8'); try { v8.setFlagsFromString = () => 'mine' } catch {} try { Object.defineProperty(v8, 'setFlagsFromString', { value: () => 'mine' }) } catch {} return String(v8.setFlagsFromString('--allow-natives-syntax'))",
        ),
      ),
    );
    assert.match(obs(swap), /^blocked v8\.setFlagsFromString is not available/, 'the module is frozen');
    // The module's ESM view, by a dynamic import (which settles after the cell: read by the next one).
    const esm = escape(
      "globalThis.esm = 'pending'; import('node:v8').then((m) => { try { m.setFlagsFromString('--allow-natives-syntax'); globalThis.esm = 'set' } catch (e) { globalThis.esm = 'blocked ' + e.message } }, (e) => (globalThis.esm = 'no import ' + e.code)); return 'started'",
    );
    assert.equal(obs(await run(esm)), 'started');
    await new Promise((r) => setTimeout(r, 300));
    assert.match(obs(await run(escape('return globalThis.esm'), [esm])), /^(blocked v8\.setFlagsFromString is not available|no import )/);
    const natives = await run(escape(tryJs("return String(new Function('return %GetOptimizationStatus(function () {})')())")));
    assert.match(obs(natives), /^blocked Unexpected token '%'/);
    const binding = await run(escape(tryJs("return typeof process.binding('v8').setFlagsFromString")));
    assert.match(obs(binding), /^blocked process\.binding\('v8'\) is not available/);
    await assertHostUntouched();
  });

  test('argv, the Node options, stack traces, the process report, Python and /proc name no host folder', async () => {
    const js = await run(
      escape(
        "let cmdline; try { cmdline = process.getBuiltinModule('fs').readFileSync('/proc/self/cmdline', 'utf8') } catch (e) { cmdline = e.code } const r = process.report.getReport(); return JSON.stringify({ argv: process.argv, execArgv: process.execArgv, execPath: process.execPath, stack: new Error('where').stack, cmdline, report: [r.header.commandLine, r.header.cwd, r.sharedObjects, r.javascriptStack] })",
      ),
    );
    const py = await run(
      "import sys, os, traceback\ntry:\n    cmdline = open('/proc/self/cmdline').read()\nexcept OSError as e:\n    cmdline = repr(e)\nprint(sys.path, sys.executable, sys.argv, os.getcwd(), os.listdir('/'), cmdline)\nraise ValueError('where')",
    );
    const seen = `${obs(js)}\n${obs(py)}`;
    const checkout = realpathSync(process.cwd());
    for (const hostPath of [checkout, PYODIDE_DIR, SANDBOX_SCRIPT, realpathSync(process.execPath), host])
      assert.ok(!seen.includes(hostPath), `${hostPath} is visible in the sandbox: ${seen.slice(0, 2000)}`);
    const { argv, execPath } = JSON.parse(obs(js)) as { argv: string[]; execPath: string };
    assert.deepEqual(argv.slice(0, 2), ['/sandbox/node', '/sandbox/sandbox.mjs']);
    assert.equal(execPath, '/sandbox/node');
    assert.match(obs(js), /pyodide\.asm\.js/, 'the stack trace is there, at the neutral path');
  });
});

describe("each operating-system layer on its own (without Node's permission model inside)", () => {
  /** Runs `script` with node under resource limits, bubblewrap and seccomp only; returns its stdout. */
  function confined(script: string, nodeFlags: string[] = []): Promise<string> {
    const cmd = confinedCommand({ nodeArgs: [...nodeFlags, '-e', script], mounts: [], limits: LIMITS });
    return new Promise((resolve, reject) => {
      const p = spawn(cmd.command, cmd.args, { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
      (p.stdio[3] as NodeJS.WritableStream).end(cmd.seccomp!);
      let out = '';
      let err = '';
      p.stdout!.on('data', (d) => (out += d));
      p.stderr!.on('data', (d) => (err += d));
      p.on('error', reject);
      p.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}: ${err.slice(-500)}`))));
    });
  }

  test('bubblewrap: the file system holds the system libraries and node, nothing of the host', async () => {
    const out = await confined(
      `const fs = require('fs'); console.log(JSON.stringify({ root: fs.readdirSync('/').sort(), etc: fs.existsSync('/etc/passwd'), proc: fs.existsSync('/proc/1'), host: fs.existsSync(${JSON.stringify(host)}), cwd: fs.existsSync(${JSON.stringify(process.cwd())}) }))`,
    );
    const seen = JSON.parse(out) as { root: string[]; etc: boolean; proc: boolean; host: boolean; cwd: boolean };
    assert.ok(
      seen.root.every((d) => ['usr', 'lib', 'lib64', 'lib32', 'dev', 'bin', 'sbin', 'libx32', 'sandbox'].includes(d)),
      seen.root.join(' '),
    );
    assert.deepEqual([seen.etc, seen.proc, seen.host, seen.cwd], [false, false, false, false]);
    const write = await confined("try { require('fs').writeFileSync('/usr/x', 'x'); console.log('written') } catch (e) { console.log(e.code) }");
    assert.equal(write, 'EROFS');
  });

  test('seccomp: no process can be created, no network socket opened; threads still run', async () => {
    const out = await confined(`const cp = require('child_process');
      const r = cp.spawnSync(process.execPath, ['-e', '1']);
      const net = require('net');
      const s = net.connect(${port}, '127.0.0.1');
      s.on('error', (e) => {
        const w = new (require('worker_threads').Worker)('1', { eval: true });
        w.on('exit', (c) => console.log(JSON.stringify({ spawn: r.error?.code, socket: e.code, thread: c })));
      });`);
    assert.deepEqual(JSON.parse(out), { spawn: 'EPERM', socket: 'EAFNOSUPPORT', thread: 0 });
    assert.equal(connections, 0);
  });

  test("V8's flags frozen at start: a run-time flag change ends the process instead of taking effect (issue 69)", async () => {
    const attack =
      "require('v8').setFlagsFromString('--allow-natives-syntax'); console.log(new Function('return typeof %GetOptimizationStatus(function () {})')())";
    assert.equal(await confined(attack), 'number', 'without the flag the change takes effect: natives syntax runs');
    const frozen = await confined(attack, FROZEN_FLAGS).catch((e: Error) => `died: ${e.message.slice(0, 200)}`);
    assert.match(frozen, /^died: exit 133: .*SetFlagsFromString/s, 'V8 aborts (SIGTRAP) inside the flag change');
  });

  test('resource limits: private memory past the limit ends the process', async () => {
    const script =
      "const a = []; try { for (let i = 0; i < 64; i++) a.push(Buffer.alloc(32 << 20, 1)); console.log('held ' + a.length * 32 + ' MB') } catch (e) { console.log('refused') }";
    const out = await confined(script).catch((e: Error) => `died: ${e.message.slice(0, 80)}`);
    assert.doesNotMatch(out, /held 2048 MB/, 'the 2 GB allocation did not succeed');
  });
});

describe('through the command line, as a user meets it', () => {
  const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, '', env);

  test('trace-rl eval --env math --policy openai against a server that answers with os.system: the eval goes on, the host is untouched', async () => {
    const attack = `import os\nos.system('id > ${host}/pwned.txt')\nprint('done')`;
    const server = await startStandIn({
      script: (conversation) => (conversation.includes('```output') ? 'So \\boxed{18}.' : `Let me compute.\n\`\`\`python\n${attack}\n\`\`\`\n`),
    });
    const out = mkdtempSync(join(tmpdir(), 'trace-rl-attack-eval-'));
    try {
      const r = await cli(['eval', '--env', 'math', '--policy', 'openai', '--base-url', server.url, '--questions', '2', '--out', out, '--json']);
      assert.equal(r.code, 0, r.stderr.slice(-1000));
      assert.ok(server.requests >= 2, `${server.requests} requests`);
      assert.ok(
        server.bodies.some((b) => JSON.stringify(b).includes('PermissionError: the sandbox cannot start processes')),
        'the model saw the refusal',
      );
      await assertHostUntouched();
    } finally {
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('without bubblewrap the code tool refuses to start, in one line naming the missing piece and the fix', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'trace-rl-no-bwrap-'));
    try {
      const r = await cli(
        ['eval', '--env', 'math', '--policy', 'openai', '--base-url', 'http://127.0.0.1:9/v1', '--questions', '1', '--out', join(empty, 'out')],
        { PATH: empty },
      );
      assert.equal(r.code, 2);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /cannot confine model-written code: .* is not installed\. Fix: install bubblewrap .*env\.math\.unsafeUnconfined=true/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test('the loudly named opt-out runs the code unconfined, and says so', async () => {
    const unconfined = new PyodideCodeTool({ ...LIMITS, unsafeUnconfined: true });
    try {
      assert.equal(obs(await unconfined.run('print(6 * 7)')), '42');
    } finally {
      await unconfined.close();
    }
  });
});
