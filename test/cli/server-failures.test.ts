/**
 * Issue 62 item 2: every failure of a policy server, an engine or an environment server in `train`,
 * `rollout`, `eval` and `compare` is one stderr line naming the server, the call and the fix, with a
 * non-zero exit and no stack trace; the run folder stays a valid run, and `--resume` (eval and compare:
 * the same command again) continues from the last completed step once the server is back.
 *
 * Real servers, each behind a real fault proxy (test/helpers/fault-proxy.ts) that lets the run complete
 * step 0 and then answers the chosen call with one failure class: 400 (refused), 413, 503 (after the
 * engine's retries where the engine retries), a refused connection, no answer (timeout).
 * - train: `serve --tinker`'s routes on the tiny LM, in process (the engine: sampling, checkpoints);
 * - rollout and eval: the scripted OpenAI-compatible stand-in (the policy server);
 * - compare: the world served over AgentGym's HTTP protocol (the environment server), embedded policy.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ServedEnv } from '../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../src/env/remote/serve/servers.ts';
import { RunStore } from '../../src/store/index.ts';
import { LlamaEngine, serveOpenAI } from '../../src/tinylm/index.ts';
import { buildEnvironment, parseTrainConfig } from '../../src/train/index.ts';
import { initJax } from '../../src/util/jax.ts';
import { startFaultProxy, type FaultProxy, type ProxyFault } from '../helpers/fault-proxy.ts';
import { runCli as spawnCli, type CliRun } from '../helpers/run-cli.ts';
import { runCli as runInProcess } from '../reliability/cli-in-process.ts';
import { startStandIn } from '../policy/openai-stand-in.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-server-failures-'));
const KEY = 'tml-server-failures-key';
let engine: { url: string; close(): Promise<void> };
let llama: LlamaEngine[] = [];
let standIn: { url: string; close(): Promise<void> };
let envServer: { url: string; close(): Promise<void> };
let tasks: string;

before(async () => {
  await initJax();
  const { model } = fixture({}, 4);
  const file = writeTemp(model, 'tiny.gguf');
  const load = async (f: string) => {
    const e = await LlamaEngine.load(f, { sequences: 4, contextSize: 256 });
    llama.push(e);
    return e;
  };
  engine = await serveOpenAI(await load(file), {
    modelName: 'tiny',
    port: 0,
    tinker: { model, workDir: join(root, 'engine'), apiKey: KEY, baseFile: file, load },
  });
  standIn = await startStandIn();
  const setup = await buildEnvironment(parseTrainConfig({ env: { kind: 'world', questions: 300, seed: 7 }, engine: { maxTurns: 3 } }));
  envServer = await serveEnvironment(new ServedEnv(setup, 'world', { maxSessions: 16 }), 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
  tasks = join(root, 'tasks.jsonl');
  writeFileSync(tasks, [0, 1, 2, 3].map((i) => JSON.stringify({ params: { data_idx: i } })).join('\n') + '\n');
});
after(async () => {
  await envServer?.close();
  await standIn?.close();
  await engine?.close();
  for (const e of llama) await e.dispose();
  llama = [];
});

/** The failure classes, each with what its one line must say. */
const CLASSES: Array<{ name: string; fault: ProxyFault; says: RegExp }> = [
  { name: 'refused (400)', fault: { kind: 'status', status: 400 }, says: /HTTP 400.*the server refused the request/ },
  { name: '413', fault: { kind: 'status', status: 413 }, says: /413.*too large for the server/ },
  { name: '5xx after retries', fault: { kind: 'status', status: 503 }, says: /HTTP 503.*answered HTTP 503 \(an error on its side\)/ },
  { name: 'connection refused', fault: { kind: 'refuse' }, says: /could not be reached: check that it is running/ },
  { name: 'timeout', fault: { kind: 'hang' }, says: /did not answer in time/ },
];

/**
 * A short retry policy, so that each class fails within seconds. The call timeout (engine.timeoutMs;
 * compare also env.timeoutMs) is short only where the class waits for it (timeout): elsewhere a slow
 * answer of a loaded machine must not fail a call before the fault is reached.
 */
const HANG_MS = 1500;
const fast = (timeoutMs: number) => ['--set', 'engine.retry.maxAttempts=2', '--set', 'engine.retry.baseDelayMs=1', '--set', `engine.timeoutMs=${timeoutMs}`];
const SLOW_MS = 20_000;

/**
 * How a command runs. `spawn`: the real `trace-rl` in a child process, as a user runs it. `inProcess`:
 * the real `main` in this process (test/reliability/cli-in-process.ts), which skips a child's ~1.4 CPU-s
 * of loading; it shares this process's stdout, stderr, exit code and environment, so in-process runs
 * take turns (a queue) and `env` is set around each run only.
 */
type Cli = (args: readonly string[], env?: Record<string, string>) => Promise<CliRun>;
const spawn: Cli = (args, env = {}) => spawnCli(args, '', env);
let turn: Promise<unknown> = Promise.resolve();
const inProcess: Cli = (args, env = {}) => {
  const run = turn.then(async () => {
    const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
    Object.assign(process.env, env);
    try {
      return await runInProcess(args);
    } finally {
      for (const [k, v] of saved)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
  turn = run.catch(() => {});
  return run;
};

interface Command {
  /** The proxy in front of the server this command fails on. */
  proxy(fault: ProxyFault): Promise<FaultProxy>;
  /** The run; `dir` is a fresh folder, `timeoutMs` the call timeout. */
  run(cli: Cli, url: string, dir: string, timeoutMs: number): Promise<CliRun>;
  /** Continue after the server is back (resume, or the same command again). */
  resume(cli: Cli, url: string, dir: string): Promise<CliRun>;
  /** The run folder stays a valid run that holds step 0 (eval: its finished questions). */
  valid(dir: string): void;
}

const ONE_STEP_STORED = (dir: string) => {
  const store = RunStore.open(dir, { readonly: true });
  try {
    assert.equal(store.lastStep(), 0, 'step 0 is kept, nothing of step 1');
    assert.equal(store.status(), 'running');
  } finally {
    store.close();
  }
};

const TRAIN_ARGS = (url: string, out: string, timeoutMs: number, { steps = 2, pool = 2 } = {}) => [
  'train',
  '--policy',
  'tinker',
  '--base-url',
  url,
  '--set',
  'policy.model=tiny',
  '--set',
  'policy.prompt=question',
  '--set',
  'policy.maxTokensPerTurn=16',
  '--set',
  'policy.learningRate=0.003',
  '--steps',
  String(steps),
  '--budget',
  '4',
  '--pool',
  String(pool),
  '--set',
  'engine.maxTurns=2',
  '--set',
  'eval.questions=1',
  ...fast(timeoutMs),
  '--out',
  out,
  '--quiet',
];

const COMMANDS: Record<string, Command> = {
  // The engine: sampling fails from step 1 on (armed by step 0's checkpoint), or step 1's checkpoint is refused.
  train: {
    proxy: (fault) =>
      fault.kind === 'status' && fault.status !== 503
        ? startFaultProxy({ upstream: engine.url, route: /\/save_weights$/, after: 1, fault })
        : startFaultProxy({ upstream: engine.url, route: /\/asample$/, armOn: /\/save_weights$/, fault }),
    run: (cli, url, dir, timeoutMs) => cli(TRAIN_ARGS(url, dir, timeoutMs), { TINKER_API_KEY: KEY }),
    resume: (cli, _url, dir) => cli(['train', '--resume', dir, '--quiet'], { TINKER_API_KEY: KEY }),
    valid: ONE_STEP_STORED,
  },
  // The policy server: step 0's eight calls (four trajectories: search, answer) pass, step 1's fail.
  rollout: {
    proxy: (fault) => startFaultProxy({ upstream: standIn.url, route: /\/completions$/, after: 8, fault }),
    run: (cli, url, dir, timeoutMs) => {
      // The weights of step 0 are there already: the gate lets step 1 start at once.
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'weights-step-0.ready'), '');
      return cli([
        'rollout',
        '--policy',
        'openai',
        '--base-url',
        url,
        '--extras',
        'vllm',
        '--tokenizer',
        'codepoints',
        '--format',
        'jsonl',
        '--steps',
        '2',
        '--budget',
        '4',
        '--pool',
        '2',
        '--strategy',
        'grpo',
        ...fast(timeoutMs),
        '--out',
        dir,
        '--quiet',
      ]);
    },
    resume: (cli, _url, dir) => cli(['rollout', '--resume', dir, '--quiet']),
    valid: ONE_STEP_STORED,
  },
  // The policy server: the first question's two calls pass, the other two questions fail.
  eval: {
    proxy: (fault) => startFaultProxy({ upstream: standIn.url, route: /\/completions$/, after: 2, fault }),
    run: (cli, url, dir, timeoutMs) => cli(evalArgs(url, dir, timeoutMs)),
    // The same command again; its call timeout is not what it tests.
    resume: (cli, url, dir) => cli(evalArgs(url, dir, SLOW_MS)),
    valid: () => {},
  },
  // The environment server: the tasks' first observations (4 sessions) and step 0's four sessions pass, step 1's fail.
  compare: {
    proxy: (fault) => startFaultProxy({ upstream: envServer.url, route: /^\/create$/, after: 8, fault }),
    run: (cli, url, dir, timeoutMs) => cli(compareArgs(url, dir, timeoutMs)),
    resume: (cli, url, dir) => cli(compareArgs(url, dir, SLOW_MS)),
    valid: (dir) => ONE_STEP_STORED(join(dir, 'grpo-s0')),
  },
};

function evalArgs(url: string, out: string, timeoutMs: number): string[] {
  return [
    'eval',
    '--env',
    'world',
    '--questions',
    '3',
    '--concurrency',
    '1',
    '--policy',
    'openai',
    '--base-url',
    url,
    '--model',
    'm',
    ...fast(timeoutMs),
    '--out',
    out,
    '--quiet',
  ];
}

function compareArgs(url: string, out: string, timeoutMs: number): string[] {
  const env = [
    'env.kind=agentgym',
    `env.url=${url}`,
    `env.tasks=${JSON.stringify({ file: tasks })}`,
    `env.timeoutMs=${timeoutMs}`,
    'env.action.text=action',
    'env.questionAfter=Question: ',
  ];
  return [
    'compare',
    '--strategies',
    'grpo',
    '--seeds',
    '1',
    '--jobs',
    '1',
    '--steps',
    '2',
    '--budget',
    '4',
    '--pool',
    '2',
    ...env.flatMap((s) => ['--set', s]),
    ...fast(timeoutMs),
    '--out',
    out,
    '--quiet',
  ];
}

/** Exactly one stderr line, the server's call named, no stack frame. */
function assertOneLine(r: CliRun, command: string, says: RegExp): void {
  assert.notEqual(r.code, 0, `${command}: a non-zero exit\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${command}: no stack trace\n${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${command}: exactly one stderr line\n${r.stderr}`);
  assert.match(lines[0]!, new RegExp(`^trace-rl ${command}: `));
  assert.match(lines[0]!, /http:\/\/127\.0\.0\.1:\d+/, 'it names the server');
  assert.match(lines[0]!, says);
}

// Every test starts at once: the in-process runs take turns, while each command's timeout class (a
// child process, mostly waiting for its timeout) runs beside them.
describe('server failures', { concurrency: true }, () => {
  for (const [command, c] of Object.entries(COMMANDS)) {
    describe(`trace-rl ${command}`, { concurrency: true }, () => {
      for (const k of CLASSES) {
        const hang = k.fault.kind === 'hang';
        const retried = k.fault.kind === 'status' && k.fault.status === 503;
        // The timeout class runs the real `trace-rl` in a child process: its fault leaves a connection
        // open that never answers, and only a real process shows that the command still exits on its own
        // (nothing left holding the event loop), with nothing but its one line on stderr (no stack trace,
        // no warning or late rejection printed by Node). The other classes run the same `main` in process.
        const cli = hang ? spawn : inProcess;
        test(`${k.name}: one line, non-zero exit, the run kept${retried ? ', and it continues once the server is back' : ''}${hang ? ' (a child process)' : ''}`, async () => {
          const proxy = await c.proxy(k.fault);
          const dir = join(root, `${command}-${k.name.replace(/\W+/g, '-')}`);
          try {
            const r = await c.run(cli, proxy.url, dir, hang ? HANG_MS : SLOW_MS);
            assert.ok(proxy.faulted > 0, `the fault was reached (${proxy.log.length} requests)\n${r.stderr}`);
            assertOneLine(r, command, k.says);
            c.valid(dir);
            if (retried) {
              await proxy.heal();
              const again = await c.resume(inProcess, proxy.url, dir);
              assert.equal(again.code, 0, again.stderr);
            }
          } finally {
            await proxy.close();
          }
        });
      }
    });
  }

  test('export RUN of a tinker run uses the run’s own tokenizer (its engine’s /tokenize), and says in one line when that server is gone', async () => {
    const proxy = await startFaultProxy({ upstream: engine.url, route: /^$/, fault: { kind: 'refuse' } });
    const dir = join(root, 'export-tinker');
    try {
      const made = await inProcess(TRAIN_ARGS(proxy.url, dir, SLOW_MS, { steps: 1, pool: 1 }), { TINKER_API_KEY: KEY });
      assert.equal(made.code, 0, made.stderr);
      // What a user had to repeat before: the default tokenizer (bytes) does not read the engine's ids.
      const bytes = await inProcess(['export', dir, '--format', 'jsonl', '--tokenizer', 'bytes', '--out', join(root, 'bytes.jsonl')]);
      assert.equal(bytes.code, 2, bytes.stderr);
      assert.match(bytes.stderr, /do not decode to the turn's text with the "bytes\+3" tokenizer/);
      const mark = proxy.log.length;
      const own = await inProcess(['export', dir, '--format', 'jsonl', '--out', join(root, 'own.jsonl')]);
      assert.equal(own.code, 0, own.stderr);
      assert.ok((JSON.parse(own.stdout) as { rows: number }).rows > 0);
      assert.ok(proxy.log.slice(mark).includes('POST /tokenize'), 'the engine’s /tokenize was asked, at the run’s address');
    } finally {
      await proxy.close();
    }
    const gone = await inProcess(['export', dir, '--format', 'jsonl', '--out', join(root, 'gone.jsonl')]);
    assert.equal(gone.code, 1, gone.stderr);
    assert.doesNotMatch(gone.stderr, /\n\s+at /);
    assert.equal(gone.stderr.trimEnd().split('\n').length, 1, gone.stderr);
    assert.match(
      gone.stderr,
      /^trace-rl export: the run's tokenizer \(policy\.tokenizer: server\) is its server's, and the server's \/tokenize failed: .*127\.0\.0\.1.*; start that server again \(or give its new address with --base-url URL\)/,
    );
  });
});
