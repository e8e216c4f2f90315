import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  InlineArithmeticTool,
  leavesState,
  MathWorldEnv,
  formatObservation,
  limitMessage,
  MathEnv,
  replayLimitMessage,
  PyodideCodeTool,
  SandboxFusionTool,
  loadMathDataset,
  worldCandidates,
  type CodeResult,
} from '../../../src/env/index.ts';
import { snapshotsStarted } from '../../../src/env/math/pyodide-tool.ts';
import type { RolloutTree } from '../../../src/tree/types.ts';

// One pyodide worker for the whole file (loading Python costs seconds).
// Time bounds are loose on purpose: CI machines are shared; the checks are "stopped near the limit", not speed.
// 3 s is far above what any cell here that must finish takes (under half a second on a loaded 2-core
// machine), and the cells that must be stopped (an infinite loop, here and in the math env) wait it out.
const LIMITS = { timeoutMs: 3000, memoryMb: 96, outputBytes: 2000 };
const tool = new PyodideCodeTool({ ...LIMITS, workers: 1 });
before(() => tool.warmup());
after(() => tool.close());

/** Runs a cell once the pool's worker is loaded (a replaced worker's cold start is not the cell's time). */
async function timed(code: string): Promise<{ r: CodeResult; ms: number }> {
  await tool.warmup();
  const t = performance.now();
  const r = await tool.run(code);
  return { r, ms: performance.now() - t };
}

/**
 * The cells below that must finish run as one trajectory, each after the earlier ones (as a model's
 * turns do), so one interpreter runs them all: a fresh trajectory takes a fresh process (about a
 * second of CPU each). A cell that leaves no state is not part of what comes after, as in the math env.
 */
const ran: string[] = [];
async function next(code: string): Promise<CodeResult> {
  const r = await tool.run(code, { history: ran });
  if (leavesState(formatObservation(r))) ran.push(code);
  return r;
}

describe('pyodide code tool: limits give the documented observation and the next cell runs', () => {
  test('a normal cell: printed output, or the value of a trailing expression', async () => {
    const r = await next('from fractions import Fraction\nprint(Fraction(1, 3) + Fraction(1, 6))');
    assert.equal(r.status, 'ok');
    assert.equal(formatObservation(r), '1/2');
    assert.equal(formatObservation(await next('x = 21\nx * 2')), '42');
    assert.equal(formatObservation(await next('y = 1')), '(no output; print the values you need)');
  });

  test('syntax error and missing module: the Python traceback of the cell', async () => {
    const syntax = await next('def f(:\n    pass');
    assert.equal(syntax.status, 'error');
    assert.match(formatObservation(syntax), /File "<cell>", line 1[\s\S]*SyntaxError/);
    const missing = await next('import sympy');
    assert.equal(missing.status, 'error');
    assert.match(formatObservation(missing), /ModuleNotFoundError: No module named 'sympy'/);
  });

  test('huge output: kept up to the limit, then the OutputLimitError line; nothing leaks into the next cell', async () => {
    const r = await next("while True:\n    print('spam')");
    assert.equal(r.status, 'output_limit');
    assert.ok(r.stdout.length <= LIMITS.outputBytes, `${r.stdout.length} bytes kept`);
    assert.ok(r.stdout.startsWith('spam\nspam\n'));
    assert.ok(formatObservation(r).endsWith(limitMessage('output_limit', tool.limits)));
    assert.equal(formatObservation(await next("print('clean')")), 'clean');
  });

  test('a value or an error past outputBytes: cut at the limit with the OutputLimitError mark, and the interpreter lives on (issue 69)', async () => {
    const before = { replaced: tool.replaced, replayed: tool.replayed, started: tool.started };
    const mark = limitMessage('output_limit', tool.limits);
    const error = await next("raise ValueError('x' * 30000)");
    assert.equal(error.status, 'output_limit');
    const errorText = formatObservation(error);
    assert.match(errorText, /^Traceback \(most recent call last\):\n {2}File "<cell>", line 1/);
    assert.ok(errorText.endsWith(`xxx\n${mark}`), errorText.slice(-300));
    assert.ok(Buffer.byteLength(errorText) <= LIMITS.outputBytes + 1 + mark.length, `${errorText.length} characters`);
    const value = await next("big = 'é' * 10**6\nbig");
    assert.equal(value.status, 'output_limit');
    const valueText = formatObservation(value);
    assert.ok(valueText.startsWith("'éé") && valueText.endsWith(`é\n${mark}`), valueText.slice(-200));
    assert.ok(!valueText.includes('\uFFFD'), 'cut at a character boundary');
    assert.ok(Buffer.byteLength(valueText) <= LIMITS.outputBytes + 1 + mark.length);
    // Printed text first, then the value's share of what is left: together within the limit.
    const both = await next("print('p' * 1500)\nValueError('v' * 5000)");
    assert.equal(both.status, 'output_limit');
    assert.equal(Buffer.byteLength(both.stdout) + Buffer.byteLength(both.value ?? ''), LIMITS.outputBytes);
    assert.equal(both.error, mark);
    // The same interpreter goes on, with the cell's state: nothing was replaced or replayed.
    assert.equal(formatObservation(await next('print(len(big))')), '1000000');
    assert.deepEqual({ replaced: tool.replaced, replayed: tool.replayed, started: tool.started }, before);
  });

  test('no network, no host file system, no way back into JavaScript', async () => {
    const net = await next("import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9/').read()");
    assert.notEqual(net.status, 'ok', 'no connection can be made (an error, or a timeout on a slow machine)');
    const file = await next("open('/etc/hostname').read()");
    assert.match(formatObservation(file), /FileNotFoundError/);
    const js = await next('import sys\nfrom _pyodide._importhook import jsfinder\nsys.meta_path.append(jsfinder)\nimport js');
    assert.match(formatObservation(js), /ImportError: module '_pyodide' is not available in the sandbox/);
    // The whole attack suite is test/env/math/sandbox-attacks.test.ts.
  });

  test('memory bomb: MemoryError observation, the worker is replaced, the next cell runs', async () => {
    const before = tool.replaced;
    const { r, ms } = await timed("chunks = []\nwhile True:\n    chunks.append('x' * 10**6)");
    assert.equal(r.status, 'memory', formatObservation(r));
    assert.equal(formatObservation(r), limitMessage('memory', tool.limits));
    assert.ok(ms < LIMITS.timeoutMs + 4000, `${ms} ms`);
    assert.equal(tool.replaced, before + 1);
    assert.equal(formatObservation((await timed('print(2 ** 10)')).r), '1024');
  });

  test('infinite loop: TimeoutError observation at the time limit, the worker is replaced, the next cell runs', async () => {
    const { r, ms } = await timed('while True:\n    pass');
    assert.equal(r.status, 'timeout');
    assert.equal(formatObservation(r), limitMessage('timeout', tool.limits));
    assert.ok(ms >= LIMITS.timeoutMs - 50 && ms < LIMITS.timeoutMs + 4000, `${ms} ms`);
    assert.equal(formatObservation((await timed('print(sum(range(10)))')).r), '45');
  });
});

test("the math world's in-process tool prints exactly what pyodide prints for every candidate cell of 30 problems", async () => {
  const world = new MathWorldEnv({ seed: 5, problems: 30, tool: new InlineArithmeticTool() });
  const inline = new InlineArithmeticTool();
  // The world's cells keep no state, so they all run as one trajectory: one interpreter process
  // instead of one per cell (a fresh process costs about a second of CPU).
  const ran: string[] = [];
  for (const prompt of [...world.train, ...world.test]) {
    for (const c of worldCandidates(prompt, []).code) {
      assert.equal((await inline.run(c.input)).stdout, (await tool.run(c.input, { history: ran })).stdout, c.input);
      ran.push(c.input);
    }
  }
  const cells = ran.length;
  assert.ok(cells >= 200, `${cells} cells`);
});

test('a packages folder is importable in the sandbox, read-only; a missing one is refused by name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-rl-pkgs-'));
  mkdirSync(join(dir, 'tracepkg'));
  writeFileSync(join(dir, 'tracepkg', '__init__.py'), 'VALUE = 41\n');
  const started = snapshotsStarted();
  const withPackages = new PyodideCodeTool({ ...LIMITS, packagesDir: dir });
  try {
    assert.equal(snapshotsStarted(), started, "the file's tool and this one share a snapshot: a packages folder is added after it");
    const read = 'import tracepkg\nprint(tracepkg.VALUE + 1)';
    assert.equal(formatObservation(await withPackages.run(read)), '42');
    // In the same trajectory (one process; a fresh one costs about a second of CPU).
    const write = await withPackages.run(`open('${dir}/tracepkg/evil.py', 'w').write('x')`, { history: [read] });
    assert.equal(write.status, 'error', formatObservation(write));
    assert.equal(existsSync(join(dir, 'tracepkg', 'evil.py')), false);
  } finally {
    await withPackages.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => new PyodideCodeTool({ packagesDir: join(dir, 'missing') }), /env\.math\.packagesDir: .*missing is not a folder/);
});

test('open tools with the same limits share one snapshot process; other limits make their own; a failed or unused one is made again', async () => {
  const started = snapshotsStarted();
  const same = new PyodideCodeTool({ ...LIMITS, workers: 2 });
  assert.equal(snapshotsStarted(), started, 'same limits as the open file tool: no new process');
  await same.close();
  // Stopped at once (closing the last tool that uses a snapshot kills its process), so these cost little.
  const other = new PyodideCodeTool({ ...LIMITS, memoryMb: LIMITS.memoryMb + 1 });
  assert.equal(snapshotsStarted(), started + 1, 'another memory limit: its own snapshot');
  await other.close();
  const again = new PyodideCodeTool({ ...LIMITS, memoryMb: LIMITS.memoryMb + 1 });
  assert.equal(snapshotsStarted(), started + 2, 'no open tool held it, so it was dropped');
  await again.close();
  // 1 MB is too little memory to load Python: the snapshot fails, and is not kept for the next tool.
  const failing = new PyodideCodeTool({ ...LIMITS, memoryMb: 1 });
  const failed = await failing.run('print(1)');
  assert.equal(failed.status, 'sandbox_error');
  assert.match(failed.error!, /loading Python in the sandbox failed/);
  const retry = new PyodideCodeTool({ ...LIMITS, memoryMb: 1 });
  assert.equal(snapshotsStarted(), started + 4, 'a failed snapshot is made again for a later tool');
  await Promise.all([failing.close(), retry.close()]);
});

describe('url code tool (SandboxFusion run_code API)', () => {
  // SandboxFusion itself (a Docker service) cannot run here. This server speaks its run_code request
  // and response format and runs the code for real in the pyodide tool above; `failures` makes its
  // next replies fail to exercise retries. Unlike SandboxFusion it runs each request after the earlier
  // ones in one interpreter (a fresh one costs about a second of CPU): no request here depends on that.
  let server: Server;
  const served: string[] = [];
  let url = '';
  let failures: Array<'http500' | 'sandbox'> = [];
  const requests: unknown[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const json = JSON.parse(body) as { code: string; language: string; run_timeout: number };
        requests.push(json);
        const fail = failures.shift();
        if (fail === 'http500') return void res.writeHead(500).end('boom');
        res.setHeader('content-type', 'application/json');
        if (fail === 'sandbox') return void res.end(JSON.stringify({ status: 'SandboxError', message: 'no executor', run_result: null }));
        void tool.run(json.code, { history: served }).then((r) => {
          if (leavesState(formatObservation(r))) served.push(json.code);
          const run = {
            status: r.status === 'timeout' ? 'TimeLimitExceeded' : 'Finished',
            execution_time: r.ms / 1000,
            return_code: r.status === 'ok' ? 0 : 1,
            stdout: r.stdout,
            stderr: r.stderr + (r.error ?? ''),
          };
          res.end(JSON.stringify({ status: r.status === 'ok' ? 'Success' : 'Failed', message: '', compile_result: null, run_result: run, files: {} }));
        });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const sf = () => new SandboxFusionTool({ url, timeoutMs: 3000, attempts: 3, backoffMs: 1 });

  test('request format; success and a Python error', async () => {
    const ok = await sf().run('print(6 * 7)');
    assert.equal(ok.status, 'ok');
    assert.equal(formatObservation(ok), '42');
    assert.deepEqual(requests.at(-1), { code: 'print(6 * 7)', language: 'python', run_timeout: 3, memory_limit_MB: 256 });
    const err = await sf().run('1/0');
    assert.equal(err.status, 'error');
    assert.match(formatObservation(err), /ZeroDivisionError/);
  });

  test('stdout and stderr from the server are kept within outputBytes together, with the OutputLimitError mark (issue 69)', async () => {
    const small = new SandboxFusionTool({ url, timeoutMs: 3000, outputBytes: 500, attempts: 1 });
    const r = await small.run("print('a' * 400)\nraise ValueError('b' * 1000)");
    assert.equal(r.status, 'output_limit');
    assert.equal(Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr), 500);
    assert.ok(formatObservation(r).endsWith(limitMessage('output_limit', small.limits)));
  });

  test('HTTP 500 and SandboxError are retried; after the last attempt the result is a sandbox_error', async () => {
    failures = ['http500', 'sandbox'];
    const retried = await sf().run('print(1)');
    assert.equal(retried.status, 'ok');
    failures = ['http500', 'http500', 'sandbox'];
    const failed = await sf().run('print(1)');
    assert.equal(failed.status, 'sandbox_error');
    assert.match(failed.error!, /failed after 3 attempts: SandboxError: no executor/);
  });

  test('an unreachable sandbox is a sandbox_error, and the math env turns it into a thrown step error (a tool_error turn)', async () => {
    const dead = new SandboxFusionTool({ url: 'http://127.0.0.1:9', attempts: 2, backoffMs: 1 });
    const env = new MathEnv({ tool: dead });
    const prompt = loadMathDataset('gsm8k', { limit: 1 })[0]!;
    await assert.rejects(env.step(env.reset(prompt), { type: 'python', input: 'print(1)' }), /failed after 2 attempts/);
  });
});

describe('math environment', () => {
  const prompt = loadMathDataset('gsm8k', { limit: 1 })[0]!;

  test('GSM8K loads with its #### answer; MATH 500 and AIME rows load', () => {
    assert.equal(prompt.answers[0], '18');
    assert.equal(loadMathDataset('math500').length, 500);
    assert.equal(loadMathDataset('aime25')[0]!.answers[0], '70');
    assert.equal(loadMathDataset('aime24').length, 30);
  });

  for (const format of ['markdown', 'code-tag', 'tool-call'] as const) {
    test(`a ${format} episode: code runs, its output comes back wrapped, a boxed answer ends it; restore rebuilds the state`, async () => {
      const env = new MathEnv({ tool, format, maxTurns: 3 });
      const s0 = env.reset(prompt);
      const t1 = env.parse(`Eggs left: ${env.protocol.write('print((16 - 3 - 4) * 2)')}`);
      assert.equal(t1.action.type, 'python');
      const o1 = await env.step(s0, t1.action);
      assert.equal(o1.done, false);
      assert.equal(o1.observation, env.protocol.wrap('18'));
      const t2 = env.parse('So she makes $\\boxed{\\$18}$ a day.');
      assert.deepEqual(t2.action, { type: 'answer', input: '\\$18' });
      const o2 = await env.step(o1.state, t2.action);
      assert.equal(o2.done, true);
      assert.equal(o2.reward, 1);
      const turns = [
        { thought: t1.thought, action: t1.action, observation: o1.observation },
        { thought: t2.thought, action: t2.action, observation: o2.observation },
      ];
      assert.deepEqual(env.restore(prompt, turns), o2.state);
    });
  }

  test("a cell sees the earlier cells of its own trajectory (its path in the tree), never a sibling's; a stopped cell leaves nothing", async () => {
    const env = new MathEnv({ tool, maxTurns: 5 });
    const code = (c: string) => env.parse(env.protocol.write(c)).action;
    const s0 = env.reset(prompt);
    const a = await env.step(s0, code('x = 16 - 3 - 4\nprint(x)'));
    assert.equal(a.observation, env.protocol.wrap('9'));
    // Two continuations branch from the same prefix: each sees x, neither sees the other's y.
    const left = await env.step(a.state, code('y = x * 2\nprint(y)'));
    const right = await env.step(a.state, code("print(x, 'y' in dir())"));
    assert.equal(left.observation, env.protocol.wrap('18'));
    assert.equal(right.observation, env.protocol.wrap('9 False'));
    // A fresh trajectory of the same question sees nothing of either.
    assert.match((await env.step(s0, code('print(x)'))).observation, /NameError: name 'x' is not defined/);
    // A cell stopped by the time limit leaves no state; the trajectory goes on from before it.
    const stopped = await env.step(left.state, code('z = 1\nwhile True:\n    pass'));
    assert.match(stopped.observation, /TimeoutError/);
    const after = await env.step(stopped.state, code("print(y, 'z' in dir())"));
    assert.equal(after.observation, env.protocol.wrap('18 False'));
    // Restoring from the recorded turns rebuilds the same state, history included.
    const turns = [a, left, stopped].map((o, i) => ({
      thought: '',
      action: [code('x = 16 - 3 - 4\nprint(x)'), code('y = x * 2\nprint(y)'), code('z = 1\nwhile True:\n    pass')][i]!,
      observation: o.observation,
    }));
    assert.deepEqual(env.restore(prompt, turns), stopped.state);
  });

  test('replay is bounded in total: past replayMs the cell answers replay_limit, the trajectory ends (reason replay_limit), restore agrees, the step metric counts it (issue 69)', async () => {
    // Same limits as `tool`, so it shares its snapshot; replaying three 0.4 s cells passes 0.6 s.
    const bounded = new PyodideCodeTool({ ...LIMITS, workers: 1, replayMs: 600 });
    try {
      const env = new MathEnv({ tool: bounded, maxTurns: 6 });
      const code = (c: string) => env.parse(env.protocol.write(c)).action;
      const slow = 'import time\nt = time.time()\nwhile time.time() - t < 0.4:\n    pass';
      // The history as recorded turns: restore runs no code, so the next cell must replay all of it.
      const turns = [1, 2, 3].map(() => ({ thought: '', action: code(slow), observation: env.protocol.wrap('(no output; print the values you need)') }));
      const out = await env.step(env.restore(prompt, turns), code('print(1)'));
      assert.deepEqual([out.done, out.reward, out.reason], [true, 0, 'replay_limit']);
      assert.equal(out.observation, env.protocol.wrap(replayLimitMessage(3, 600)));
      assert.equal(bounded.replayLimited, 1);
      const ended = env.restore(prompt, [...turns, { thought: '', action: code('print(1)'), observation: out.observation }]);
      assert.deepEqual(ended, out.state, 'restored from its turns, the trajectory ends at the same turn');
      // A short history replays within the bound, and the trajectory goes on.
      const short = await env.step(
        env.restore(prompt, [{ thought: '', action: code('x = 5'), observation: env.protocol.wrap('(no output; print the values you need)') }]),
        code('print(x)'),
      );
      assert.deepEqual([short.done, short.observation], [false, env.protocol.wrap('5')]);
      // The step metric, read from the trees' leaves.
      const leaf = (observation: string) => ({ end: 'answer', turn: { thought: '', action: code('print(1)'), observation } });
      const tree = {
        nodes: { a: leaf(out.observation), b: leaf(env.protocol.wrap('1')), c: { turn: { observation: out.observation } } },
      } as unknown as RolloutTree;
      assert.deepEqual(env.treeMetrics([tree]), { code_replay_limited: 1 });
    } finally {
      await bounded.close();
    }
  });

  test('a turn with neither code nor an answer is invalid and named; the turn limit ends the episode with reward 0', async () => {
    const env = new MathEnv({ tool, maxTurns: 2 });
    const bad = env.parse('I think it is 18.');
    assert.equal(bad.action.type, 'invalid');
    const o1 = await env.step(env.reset(prompt), bad.action);
    assert.equal(o1.invalid, true);
    assert.match(o1.observation, /Invalid turn \(no_action\)/);
    const o2 = await env.step(o1.state, env.parse(env.protocol.write('print(1)')).action);
    assert.deepEqual([o2.done, o2.reward, o2.reason], [true, 0, 'turn_limit']);
    const wrong = await env.step(env.reset(prompt), { type: 'answer', input: '17' });
    assert.equal(wrong.reward, 0);
  });
});
