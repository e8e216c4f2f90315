/**
 * The rollout path at scale against a zero-latency server in another process (results in
 * BENCHMARKS.md, "Rollout path at scale"). One server (server.ts) answers every request at once with
 * a scripted Search-R1 reply; per size and repetition, one client process per mode runs after the other
 * (client.ts): a bare keep-alive node:http loop, the same loop through OpenAIPolicy.act alone
 * (`policy`: the client without the engine), the engine with an in-process policy answering as the
 * server does (`engine`: the engine without HTTP), and trace-rl's engine with OpenAIPolicy in
 * completions mode and in token mode, each with the same conversations (P prompts × 8 rollouts,
 * 3–5 turns each) at the same concurrency. Reported per mode: client CPU-seconds per 1,000 requests,
 * requests/s, client CPU µs and wall µs per turn, peak RSS (and its growth per 1,000 trajectories),
 * and trace-rl ÷ bare in CPU per request, taken per repetition (the runs side by side) then
 * min / median / max.
 *
 * Not in the default modes: `bare-undici`, the bare loop over undici's Pool.dispatch (the other
 * transport considered for the client), `bare-signal`, the bare loop handing each request an
 * AbortSignal through http.request's option (what the client did before), and `bare-client`, the
 * bare loop over the policy's own transport (JsonPost) without the rest of the policy.
 *
 * Run: npx tsx bench/scale/run.ts [--sizes 1000,4000] [--reps 3] [--concurrency 256]
 *        [--modes bare,policy,engine,completions,tokens] [--tokenizer qwen3] [--pin]
 * `--pin` (Linux, `taskset`): the server on the last CPU, each client on the others, so the two do not
 * take turns on one core and the client's GC helper threads stay with it. On this 2-core machine it
 * narrows the spread of repetitions several times over (bare 76–82 µs a turn against 74–104 unpinned)
 * and lowers every mode's CPU a little (no parallel scavenging across cores); ratios stay comparable.
 * Before / after: --modes bare,completions,completions@/path/to/other/checkout (that checkout's client).
 * Young generation: `mode:young=64` runs that client with `--max-semi-space-size=64` (MB), beside the
 * same mode at Node's default (16), e.g. --modes bare,completions,completions:young=64.
 * Big sizes: --sizes 1000,4000,16000,64000 (16k takes about a minute a run; 64k several).
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startServer } from './start-server.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const sizes = arg('sizes', '1000,4000').split(',').map(Number);
const reps = Number(arg('reps', '3'));
const concurrency = Number(arg('concurrency', '256'));
const modes = arg('modes', 'bare,policy,engine,completions,tokens').split(',');
const tokenizer = arg('tokenizer', 'qwen3');
const pin = process.argv.includes('--pin');
const lastCpu = cpus().length - 1;
if (pin && lastCpu < 1) throw new Error('--pin needs at least 2 CPUs (one for the server, the rest for the client)');
/** Under --pin, `command args` run by taskset on the given CPUs. */
const pinned = (cpuList: string, command: string, args: string[]): [string, string[]] =>
  pin ? ['taskset', ['-c', cpuList, command, ...args]] : [command, args];
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const tsx = ['--import', 'tsx'];

interface Sample {
  mode: string;
  trajectories: number;
  requests: number;
  turns: number;
  cpuUs: number;
  wallMs: number;
  rssBeforeMB: number;
  peakRssMB: number;
  gcMs?: { minor: number; major: number; other: number };
}

/**
 * `mode`, `mode@DIR` (DIR's own bench/scale/client.ts: another checkout, before and after in one run),
 * `mode:young=N` (the client's young generation at N MB a semi-space).
 */
function measure(label: string, trajectories: number, port: number): Promise<Sample> {
  const [spec, dir] = label.split('@') as [string, string | undefined];
  const [mode, young] = spec.split(':young=') as [string, string | undefined];
  const client = dir ? `${dir}/bench/scale/client.ts` : here('./client.ts');
  return new Promise((resolve, reject) => {
    const args = [...(young ? [`--max-semi-space-size=${young}`] : []), ...tsx, '--expose-gc', client, '--mode', mode, '--trajectories', String(trajectories)];
    args.push('--concurrency', String(concurrency), '--port', String(port), '--tokenizer', tokenizer);
    const child = spawn(...pinned(`0-${lastCpu - 1}`, process.execPath, args), { stdio: ['ignore', 'pipe', 'inherit'], ...(dir ? { cwd: dir } : {}) });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) reject(new Error(`${label} at ${trajectories}: exit ${code}\n${out}`));
      else resolve(JSON.parse(line) as Sample);
    });
  });
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor((s.length - 1) / 2)]!, max: s.at(-1)! };
};
const fmt = (xs: number[], d: number) => {
  const s = stats(xs);
  return `${s.min.toFixed(d)} / ${s.median.toFixed(d)} / ${s.max.toFixed(d)}`;
};
const cpuPer1k = (s: Sample) => s.cpuUs / 1e6 / (s.requests / 1000);

console.log(
  `# scale bench — ${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(
        ' ',
      )}; concurrency ${concurrency}, ${reps} repetitions, token-mode tokenizer ${tokenizer}${pin ? `; pinned: server on CPU ${lastCpu}, clients on 0–${lastCpu - 1}` : ''}`,
);
const { port, child } = await startServer(tokenizer, pin ? String(lastCpu) : undefined);
try {
  for (const n of sizes) {
    const samples = new Map<string, Sample[]>(modes.map((m) => [m, []]));
    for (let r = 0; r < reps; r++) for (const m of modes) samples.get(m)!.push(await measure(m, n, port));
    const bare = samples.get('bare');
    console.log(`\n## ${n} trajectories (${samples.get(modes[0]!)![0]!.requests} requests), min / median / max of ${reps}`);
    console.log(
      '| client | CPU-s per 1k requests | requests/s | CPU µs per turn | wall µs per turn | GC pause µs per turn | peak RSS MB | RSS growth MB per 1k trajectories | CPU ÷ bare |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const [m, xs] of samples) {
      const ratio =
        bare && m !== 'bare'
          ? fmt(
              xs.map((s, i) => cpuPer1k(s) / cpuPer1k(bare[i]!)),
              2,
            )
          : '—';
      console.log(
        `| ${m === 'bare' ? 'bare http.Agent loop' : m === 'bare-undici' ? 'bare undici Pool loop' : m === 'bare-signal' ? 'bare loop with a signal' : m === 'bare-client' ? "bare loop over the policy's client" : `trace-rl ${m}`} | ${fmt(xs.map(cpuPer1k), 3)} | ${fmt(
          xs.map((s) => s.requests / (s.wallMs / 1000)),
          0,
        )} | ${fmt(
          xs.map((s) => s.cpuUs / s.turns),
          0,
        )} | ${fmt(
          xs.map((s) => (s.wallMs * 1000) / s.turns),
          0,
        )} | ${
          xs.every((s) => s.gcMs) // a client from an older checkout does not report it
            ? fmt(
                xs.map((s) => ((s.gcMs!.minor + s.gcMs!.major + s.gcMs!.other) * 1000) / s.turns),
                0,
              )
            : '—'
        } | ${fmt(
          xs.map((s) => s.peakRssMB),
          0,
        )} | ${fmt(
          xs.map((s) => Math.max(0, s.peakRssMB - s.rssBeforeMB) / (n / 1000)),
          1,
        )} | ${ratio} |`,
      );
    }
  }
} finally {
  child.kill('SIGTERM');
}
