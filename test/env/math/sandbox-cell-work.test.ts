/**
 * Work a cell schedules must end with the cell. A cell that set `asyncio` work for later (call_later,
 * call_soon, a task) answered, and then its interpreter ran that work between cells: a busy loop kept
 * a core busy until the process's CPU limit (90 CPU-s at the defaults), and a late print landed in the
 * next cell's output. Now the sandbox clears every timer a cell set when it answers; and a sandbox
 * that still uses CPU while idle (code escaped to JavaScript can schedule work no timer list sees) is
 * killed by the parent. Real bubblewrap-confined pyodide processes; CPU time read from /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PyodideCodeTool } from '../../../src/env/index.ts';
import { IDLE_CPU_MS, processTreeCpuMs } from '../../../src/env/math/pyodide-tool.ts';

const tool = new PyodideCodeTool({ timeoutMs: 5000, workers: 1 });
before(() => tool.warmup());
after(() => tool.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** CPU ms the idle sandboxes use over `ms`. */
async function idleCpu(ms: number): Promise<number> {
  const pids = tool.idleProcesses();
  assert.ok(pids.length > 0, 'a sandbox is idle, holding the trajectory');
  const before = pids.map((p) => processTreeCpuMs(p) ?? 0);
  await sleep(ms);
  return pids.reduce((sum, p, i) => sum + Math.max(0, (processTreeCpuMs(p) ?? before[i]!) - before[i]!), 0);
}

const SCHEDULES = [
  'import asyncio',
  'def spin():',
  '    while True:',
  '        pass',
  'async def forever():',
  '    while True:',
  '        await asyncio.sleep(0)',
  'loop = asyncio.get_event_loop()',
  "loop.call_later(0.05, print, 'late')",
  'loop.call_later(0.1, spin)',
  'loop.call_soon(spin)',
  'asyncio.ensure_future(forever())',
  "print('answered')",
].join('\n');

test('asyncio work a cell scheduled does not run after it answers: no CPU while idle, no late output in the next cell', async () => {
  const replacedBefore = tool.replaced;
  const first = await tool.run(SCHEDULES);
  assert.equal(first.status, 'ok', first.error);
  assert.equal(first.stdout, 'answered\n');
  const used = await idleCpu(1500);
  assert.ok(used < 200, `the idle sandbox used ${used} ms of CPU in 1.5 s`);
  const next = await tool.run("print('next')", { history: [SCHEDULES] });
  assert.equal(next.status, 'ok', next.error);
  assert.equal(next.stdout, 'next\n', 'nothing the earlier cell scheduled printed into this one');
  assert.equal(tool.replaced, replacedBefore, 'the same process went on: it was idle, not killed');
});

test('work scheduled from JavaScript the cell escaped to (a microtask loop) ends when the parent kills the busy idle sandbox', async () => {
  // The import block is not a boundary: the garbage collector hands out pyodide.ffi, and through it
  // JavaScript's Function constructor; a promise job runs after the answer, outside any timer.
  const escape = [
    'import gc',
    "ffi = next(o for o in gc.get_objects() if type(o).__name__ == 'module' and o.__name__ == 'pyodide.ffi')",
    `ffi.to_js([1]).constructor.constructor(${JSON.stringify('Promise.resolve().then(() => { for (;;) {} })')})()`,
    "print('answered')",
  ].join('\n');
  const replacedBefore = tool.replaced;
  const earlier = new Set(tool.idleProcesses());
  const r = await tool.run(escape);
  assert.equal(r.status, 'ok', r.error);
  const busy = tool.idleProcesses().filter((p) => !earlier.has(p));
  assert.equal(busy.length, 1, 'the escaped cell’s sandbox waits for its next cell');
  const t = performance.now();
  while (tool.replaced === replacedBefore && performance.now() - t < 10_000) await sleep(100);
  assert.equal(tool.replaced, replacedBefore + 1, 'the busy idle sandbox was killed');
  assert.ok(performance.now() - t < IDLE_CPU_MS * 4 + 2000, `killed after ${Math.round(performance.now() - t)} ms`);
  assert.ok(!tool.idleProcesses().includes(busy[0]!), 'it no longer holds the trajectory');
  const t1 = performance.now();
  while (processTreeCpuMs(busy[0]!) !== undefined && performance.now() - t1 < 3000) await sleep(50);
  assert.equal(processTreeCpuMs(busy[0]!), undefined, 'the process is gone');
  const fresh = await tool.run("print('still works')");
  assert.equal(fresh.stdout, 'still works\n');
});

/** `pid` and every process below it (from /proc). */
function tree(pid: number): number[] {
  const out = [pid];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (kids) for (const k of kids.split(' ')) out.push(...tree(Number(k)));
    }
  } catch {
    // gone meanwhile
  }
  return out;
}
const alive = (pid: number) => {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

test('closing the tool kills every process of each sandbox: no bwrap is left holding its pipes', async () => {
  const own = new PyodideCodeTool({ timeoutMs: 5000, workers: 1 });
  await own.warmup();
  assert.equal((await own.run("print('hi')", { history: [] })).status, 'ok');
  const pids = own.idleProcesses().flatMap(tree);
  assert.ok(pids.length >= 2, `prlimit → bwrap → its monitor → node: ${pids.length} processes`);
  await own.close();
  await sleep(500);
  assert.deepEqual(pids.filter(alive), [], 'every process of the sandboxes is gone');
});

test('a sandbox killed while it is still being handed its snapshot leaves no write pending and no process behind', async () => {
  const own = new PyodideCodeTool({ timeoutMs: 5000, workers: 2 });
  await own.warmup();
  const starting = own.idleProcesses().flatMap(tree);
  // Spares start as the tool is used; closing at once kills them mid-start.
  void own.run("print('hi')", { history: [] }).catch(() => undefined);
  const procs = (own as unknown as { spare: Array<{ proc: { pid: number } }> }).spare.map((s) => s.proc.pid).flatMap(tree);
  await own.close();
  const pendingWrites = () =>
    (process as unknown as { _getActiveRequests(): Array<{ constructor: { name: string } }> })
      ._getActiveRequests()
      .filter((r) => r.constructor.name === 'WriteWrap').length;
  // A destroyed pipe's write fails on a later turn of the event loop; on a loaded machine that can take
  // a while, so the test waits up to 10 s. The bug this guards against kept the write pending forever.
  for (let waited = 0; waited < 10_000 && (pendingWrites() > 0 || [...starting, ...procs].some(alive)); waited += 100) await sleep(100);
  assert.deepEqual([...starting, ...procs].filter(alive), [], 'every process is gone');
  assert.deepEqual(pendingWrites(), 0, 'no write to a dead sandbox is pending');
});
