/**
 * One measurement of the scale bench, in a process of its own (so its CPU time and peak memory are
 * its own): `--mode bare` is a keep-alive node:http loop, `completions` and `tokens` are trace-rl's
 * rollout engine with OpenAIPolicy in that mode. Both run `--trajectories` episodes of ≤ 5 turns at
 * `--concurrency` requests in flight against the server at `--port`, after a short warm-up of the same
 * kind. Prints one JSON line: requests, turns, CPU microseconds (user + system), wall ms, RSS.
 */
import { setMaxListeners } from 'node:events';
import { Agent, request } from 'node:http';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { Pool } from 'undici';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { JsonPost } from '../../src/policy/openai/json-post.ts';
import { runStep } from '../../src/rollout/index.ts';
import { loadTranscript } from '../../src/tokens/index.ts';
import { parseTurn } from '../../src/env/index.ts';
import type { Policy, PolicyContext, PolicyOutput } from '../../src/policy/types.ts';
import type { Turn } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';
import { MAX_TURNS, observationFor, renderPrompt, ROLLOUTS_PER_PROMPT, ScaleEnv, scaleReply, scalePrompts } from './script.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const mode = arg('mode', 'bare') as 'bare' | 'bare-signal' | 'bare-undici' | 'bare-client' | 'policy' | 'engine' | 'completions' | 'tokens';
const trajectories = Number(arg('trajectories', '1000'));
const concurrency = Number(arg('concurrency', '256'));
const port = Number(arg('port', '0'));
const tokenizerSpec = arg('tokenizer', 'qwen3');
const url = `http://127.0.0.1:${port}/v1`;
const STOP = ['</search>', '</answer>'];
const MAX_TOKENS = 64;

type Run = (n: number) => Promise<{ requests: number; turns: number }>;

/** One request: the body as JSON in, the parsed answer out (each transport serialises and parses as it would). */
type Post = (body: object) => Promise<unknown>;

/**
 * The bare loop's transport: a keep-alive node:http agent. `withSignal`: each request also gets a fresh
 * AbortSignal through http.request's `signal` option (what the client did before; `bare-signal`).
 */
function httpPost(withSignal = false): Post {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  return (json: object) =>
    new Promise<unknown>((resolve, reject) => {
      const body = JSON.stringify(json);
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/completions',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          ...(withSignal ? { signal: new AbortController().signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`HTTP ${res.statusCode}`)),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

/** The same loop over undici's connection pool, through its lowest-level call (dispatch with a handler: no streams). */
function undiciPost(): Post {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: concurrency });
  return (json: object) =>
    new Promise<unknown>((resolve, reject) => {
      const body = JSON.stringify(json);
      const chunks: Buffer[] = [];
      let status = 0;
      pool.dispatch(
        { path: '/v1/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body },
        {
          onConnect: () => undefined,
          onHeaders: (statusCode) => ((status = statusCode), true),
          onData: (chunk) => (chunks.push(chunk), true),
          onComplete: () => (status === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`HTTP ${status}`))),
          onError: reject,
        },
      );
    });
}

/** The same loop over the policy's own transport (JsonPost, with one signal for all calls, as a trajectory's calls share one): the client's HTTP cost alone. */
function clientPost(): Post {
  const client = new JsonPost(url, { apiKey: 'EMPTY', maxResponseBytes: 16 * 2 ** 20 });
  const signal = new AbortController().signal;
  setMaxListeners(0, signal); // 256 calls at once on it here; in the engine each trajectory has its own
  return (body: object) => client.post('completions', body, signal);
}

/** The least a client can do: the same conversations, one keep-alive socket pool, JSON in and out. */
function bareLoop(post: Post): Run {
  return async (n) => {
    const prompts = scalePrompts(Math.ceil(n / ROLLOUTS_PER_PROMPT));
    let next = 0;
    let requests = 0;
    const worker = async () => {
      for (let j = next++; j < n; j = next++) {
        let conversation = renderPrompt(prompts[Math.floor(j / ROLLOUTS_PER_PROMPT)]!);
        for (let turn = 0, searches = 0; turn < MAX_TURNS; turn++) {
          const body = {
            model: 'scale',
            prompt: conversation,
            max_tokens: MAX_TOKENS,
            stop: STOP,
            temperature: 1,
            top_p: 1,
            seed: (j * 31 + turn) % 2 ** 31,
            logprobs: 0,
            return_token_ids: true,
            include_stop_str_in_output: true,
          };
          const r = (await post(body)) as { choices: Array<{ text: string }> };
          requests++;
          const text = r.choices[0]!.text;
          const query = /<search>([\s\S]*?)<\/search>/.exec(text)?.[1];
          if (query === undefined) break;
          conversation += text + observationFor(query.trim(), searches++);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
    return { requests, turns: requests };
  };
}

/**
 * The engine without a client: a policy in this process that answers each call as the server would
 * (the scripted reply, an id and a log-probability per four characters), so `engine` is trace-rl's cost
 * a turn with no HTTP at all.
 */
class InProcessPolicy implements Policy {
  readonly name = 'in-process';
  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const text = scaleReply(ctx.rendered + ctx.turns.map((t) => (t.text ?? '') + t.observation).join(''));
    const ids = Array.from({ length: Math.min(ctx.maxTokens, Math.ceil(text.length / 4)) }, (_, i) => text.charCodeAt(i * 4));
    const logprobs = ids.map(() => -0.25);
    return {
      text,
      generatedTokens: ids.length,
      tokens: { ids, logprobs, mask: ids.map(() => 1), prompt: 'text' },
      logprob: logprobs.reduce((a, b) => a + b, 0),
    };
  }
}

async function traceRl(): Promise<Run> {
  const transcript = mode === 'tokens' ? await loadTranscript(tokenizerSpec) : undefined;
  const policy =
    mode === 'engine'
      ? new InProcessPolicy()
      : new OpenAIPolicy({
          baseURLs: [url],
          model: 'scale',
          mode: mode as 'completions' | 'tokens',
          ...(transcript ? { transcript } : {}),
          extras: mode === 'completions' ? 'vllm' : 'none',
        });
  const env = new ScaleEnv();
  return async (n) => {
    const prompts = scalePrompts(Math.ceil(n / ROLLOUTS_PER_PROMPT));
    const res = await runStep({
      prompts,
      env,
      policy,
      rng: createRng(1),
      rootPlan: new Map(prompts.map((p) => [p.id, ROLLOUTS_PER_PROMPT])),
      settings: { concurrency, maxTurns: MAX_TURNS, maxTokensPerTurn: MAX_TOKENS, timeoutMs: 600_000, retry: { maxAttempts: 1 } },
    });
    const failed = Object.values(res.failures).reduce((a, b) => a + (b ?? 0), 0);
    if (failed > 0) throw new Error(`${failed} trajectories failed: ${JSON.stringify(res.failures)}`);
    return { requests: res.spend.turns, turns: res.progress.turns };
  };
}

/**
 * The policy alone: the bare loop's conversations through OpenAIPolicy.act (its client, body and
 * response handling) without the engine, to split trace-rl's cost between the two.
 */
function policyLoop(): Run {
  const policy = new OpenAIPolicy({ baseURLs: [url], model: 'scale', mode: 'completions', extras: 'vllm' });
  const env = new ScaleEnv();
  return async (n) => {
    const prompts = scalePrompts(Math.ceil(n / ROLLOUTS_PER_PROMPT));
    const rng = createRng(1);
    let next = 0;
    let requests = 0;
    const worker = async () => {
      for (let j = next++; j < n; j = next++) {
        const prompt = prompts[Math.floor(j / ROLLOUTS_PER_PROMPT)]!;
        const rendered = env.render(prompt);
        const turns: Turn[] = [];
        for (let turn = 0, searches = 0; turn < MAX_TURNS; turn++) {
          const ctl = new AbortController();
          const out = await policy.act({
            prompt,
            rendered,
            turns,
            rng: rng.fork(`${j}/${turn}`),
            maxTokens: MAX_TOKENS,
            signal: ctl.signal,
            trajectoryId: `${j}`,
          });
          requests++;
          const { thought, action } = parseTurn(out.text);
          if (action.type !== 'search') break;
          turns.push({ thought, action, observation: observationFor(action.input.trim(), searches++), text: out.text });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
    return { requests, turns: requests };
  };
}

const run =
  mode === 'bare'
    ? bareLoop(httpPost())
    : mode === 'bare-signal'
      ? bareLoop(httpPost(true))
      : mode === 'bare-undici'
        ? bareLoop(undiciPost())
        : mode === 'bare-client'
          ? bareLoop(clientPost())
          : mode === 'policy'
            ? policyLoop()
            : await traceRl();
await run(Math.min(trajectories, 256));
globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
// Garbage-collection pauses on the main thread during the timed run (by kind: minor = scavenge, major = mark-compact).
const gc = { minor: 0, major: 0, other: 0 };
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    gc[kind === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : kind === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : 'other'] += e.duration;
  }
});
gcObserver.observe({ entryTypes: ['gc'] });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const { requests, turns } = await run(trajectories);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await new Promise((r) => setTimeout(r, 100));
gcObserver.disconnect();
console.log(
  JSON.stringify({
    mode: mode as 'completions' | 'tokens',
    trajectories,
    concurrency,
    requests,
    turns,
    cpuUs: cpu.user + cpu.system,
    wallMs,
    rssBeforeMB: rssBefore / 2 ** 20,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    gcMs: { minor: Math.round(gc.minor), major: Math.round(gc.major), other: Math.round(gc.other) },
  }),
);
process.exit(0);
