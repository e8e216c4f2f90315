/**
 * Evaluation throughput (questions/s) of `runEval` on real QA (HotpotQA + 2Wiki + MuSiQue, all
 * questions, per-question BM25), as users scale out: more inference servers behind one process.
 *
 * Part 1, scripted servers with a fixed latency: each server answers with the project's scripted
 * Search-R1 agent (src/faults/scripted-reply.ts) after L ms, and has S slots (a request waits for a free
 * slot, like a real server's batch capacity). With T turns per question (measured), c requests in flight
 * and k servers, the ideal is  q/s* = min(c, k·S) / (T · L).  Reported: measured, ideal, ratio.
 *
 * Part 2, `trace-rl serve` (llama.cpp, the tiny warm-start GGUF) on 1 and 4 server processes: measured
 * q/s and the ratio to the one-request rate of one server (there is no exact ideal for a real model on a
 * shared 2-core machine; the ratio shows whether concurrency and more servers help at all here).
 *
 * Run: nice -n 10 npx tsx bench/qa/eval-throughput.ts [--quick] [--no-serve]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { EvalStore, runEval } from '../../src/eval/index.ts';
import { scriptedReply } from '../../src/faults/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { buildEnvironment, parseTrainConfig } from '../../src/train/index.ts';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');
const BIN = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));
const LATENCY_MS = 50;
const SLOTS = 8;

function scriptedServer(): Promise<{ url: string; close: () => void }> {
  let busy = 0;
  const waiting: Array<() => void> = [];
  const app = new Hono();
  app.post('/v1/completions', async (c) => {
    const body = (await c.req.json()) as { prompt: string; stop?: string[] };
    if (busy >= SLOTS) await new Promise<void>((r) => waiting.push(r));
    busy++;
    await new Promise((r) => setTimeout(r, LATENCY_MS));
    busy--;
    waiting.shift()?.();
    let text = scriptedReply(body.prompt);
    for (const s of body.stop ?? []) if (text.includes(s)) text = text.slice(0, text.indexOf(s));
    return c.json({
      id: 'x',
      object: 'text_completion',
      created: 0,
      model: 'scripted',
      choices: [{ index: 0, text, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 1, completion_tokens: Math.ceil(text.length / 4), total_tokens: 1 },
    });
  });
  return new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({
        url: `http://127.0.0.1:${info.port}/v1`,
        close: () => {
          (s as { closeAllConnections?: () => void }).closeAllConnections?.();
          s.close();
        },
      }),
    );
  });
}

// The scripted servers run in a child process, so the process being measured spends its CPU on evaluation only.
if (args.has('--scripted-servers')) {
  const k = Number(process.argv[process.argv.indexOf('--scripted-servers') + 1]);
  const servers = await Promise.all(Array.from({ length: k }, scriptedServer));
  console.log(JSON.stringify(servers.map((s) => s.url)));
  await new Promise(() => {});
}

function startScripted(k: number): Promise<{ urls: string[]; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--scripted-servers', String(k)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve({ urls: JSON.parse(out.split('\n')[0]!) as string[], child });
    });
    child.once('exit', (code) => reject(new Error(`scripted servers exited ${code}`)));
  });
}

const config = parseTrainConfig({ env: { kind: 'qa', datasets: 'hotpotqa:eval,2wiki:eval,musique:eval', retrieval: 'per-question' } });
const setup = await buildEnvironment(config);
const allPrompts = [...setup.heldOut.values()].flat();

async function measure(urls: string[], concurrency: number, questions: number, model = 'scripted') {
  const suite = { kind: 'qa', env: setup.env, datasets: new Map([['all', allPrompts.slice(0, questions)]]) };
  const store = EvalStore.open(mkdtempSync(path.join(tmpdir(), 'bench-eval-')), { concurrency, servers: urls.length });
  const policy = new OpenAIPolicy({ baseURLs: urls, model });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const r = await runEval({ suite, policy, concurrency, store, engine: { maxTurns: 4, maxTokensPerTurn: 32, timeoutMs: 120_000 } });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuMsPerQuestion = (cpu.user + cpu.system) / 1000 / r.records.length;
  const turns = r.records.reduce((a, x) => a + Object.values(x.tree.nodes).filter((n) => n.turn).length, 0) / r.records.length;
  return { qps: r.records.length / seconds, turns, n: r.records.length, errors: r.records.filter((x) => x.errors > 0).length, cpuMsPerQuestion };
}

console.log(`date ${new Date().toISOString()}, node ${process.version}, nproc ${availableParallelism()}, questions available ${allPrompts.length}`);
console.log(`\n## scripted servers: latency ${LATENCY_MS} ms, ${SLOTS} slots each`);
console.log(
  '| servers | concurrency | questions | turns/question | q/s | ideal q/s | ratio | CPU ms / question (this process) |\n| --- | --- | --- | --- | --- | --- | --- | --- |',
);
for (const k of [1, 4]) {
  const servers = await startScripted(k);
  for (const c of [1, 8, 32, 256]) {
    const questions = Math.min(allPrompts.length, quick ? Math.max(20, c * 2) : Math.max(60, c * 3));
    const m = await measure(servers.urls, c, questions);
    const ideal = Math.min(c, k * SLOTS) / ((m.turns * LATENCY_MS) / 1000);
    console.log(
      `| ${k} | ${c} | ${m.n} | ${m.turns.toFixed(2)} | ${m.qps.toFixed(1)} | ${ideal.toFixed(1)} | ${(m.qps / ideal).toFixed(2)} | ${m.cpuMsPerQuestion.toFixed(1)} |`,
    );
  }
  servers.child.kill('SIGTERM');
}

if (!args.has('--no-serve')) {
  const model = fileURLToPath(new URL('../tinylm/warm-start.gguf', import.meta.url));
  console.log(`\n## trace-rl serve (${path.basename(model)}, --parallel 2, threads 1 each)`);
  console.log('| servers | concurrency | questions | turns/question | q/s | ratio to 1 server × 1 request |\n| --- | --- | --- | --- | --- | --- |');
  let base = 0;
  for (const k of [1, 4]) {
    const children: ChildProcess[] = [];
    const urls = await Promise.all(
      Array.from(
        { length: k },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, [BIN, 'serve', '--model', model, '--port', '0', '--parallel', '2'], { stdio: ['ignore', 'ignore', 'pipe'] });
            children.push(child);
            let err = '';
            child.stderr!.on('data', (d: Buffer) => {
              err += d.toString();
              const m = /at (http:\/\/\S+\/v1)/.exec(err);
              if (m) resolve(m[1]!);
            });
            child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
          }),
      ),
    );
    for (const c of k === 1 ? [1, 8, 32] : [8, 32]) {
      const m = await measure(urls, c, quick ? 16 : 48, 'warm-start');
      if (k === 1 && c === 1) base = m.qps;
      console.log(`| ${k} | ${c} | ${m.n} | ${m.turns.toFixed(2)} | ${m.qps.toFixed(2)} | ${(m.qps / base).toFixed(2)} |`);
    }
    for (const ch of children) ch.kill('SIGTERM');
  }
}
process.exit(0);
