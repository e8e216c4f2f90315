/**
 * `trace-rl diagnose` through the real CLI: the world environment with the embedded policy (--json
 * parses, depth-0 share 1, the spend it must have, same seed = same output), --html writes a page,
 * hostile flags exit 2 naming the flag, and an OpenAI-compatible endpoint (the project's stand-in).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/run-cli.ts';
import { runCli as runInProcess } from '../reliability/cli-in-process.ts';
import { startStandIn } from '../policy/openai-stand-in.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'trace-diagnose-'));
const notes = path.join(dir, 'notes.txt');
writeFileSync(notes, 'my notes\n');

interface Row {
  depth: number;
  prefixes: number;
  ended: number;
  contrast: number | null;
  share: number | null;
  entropy: number | null;
  cost: { trajectories: number; turns: number | null; tokens: number | null };
}
interface Out {
  env: string;
  prompts: number;
  k: number;
  depths: Row[];
  spend: { trajectories: number; bare: number; continuations: number; turns: number; tokens: number };
}

test('world + embedded policy: --json is one object; depth-0 share is 1; spend matches the rows; seeded', async () => {
  const args = ['diagnose', '--env', 'world', '--policy', 'embedded', '--prompts', '3', '--k', '4', '--max-turns', '4', '--seed', '5', '--json', '--quiet'];
  const r = await runCli(args);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n').length, 1);
  const out = JSON.parse(r.stdout) as Out;
  assert.equal(out.env, 'world');
  assert.equal(out.prompts, 3);
  const d0 = out.depths[0]!;
  assert.equal(d0.depth, 0);
  assert.equal(d0.prefixes, 3);
  if (d0.contrast) assert.equal(d0.share, 1);
  // The embedded policy reports its entropy; costs are per continuation, a trajectory each.
  assert.ok(d0.entropy !== null && d0.entropy > 0);
  assert.equal(out.spend.bare, 3 * 4);
  // k continuations per open prefix: the continuation count is k · Σ_t prefixes(t).
  assert.equal(out.spend.continuations, 4 * out.depths.filter((x) => x.depth > 0).reduce((a, x) => a + x.prefixes, 0));
  assert.equal(out.spend.trajectories, out.spend.bare + out.spend.continuations);
  for (const x of out.depths) assert.equal(x.cost.trajectories, 1);
  const again = await runCli(args);
  assert.equal(again.stdout, r.stdout, 'same seed, same diagnosis');
});

test('--html writes a self-contained page with the plots; the table is printed', async () => {
  const file = path.join(dir, 'page.html');
  const r = await runCli(['diagnose', '--env', 'simulator', '--policy', 'scripted', '--prompts', '4', '--k', '4', '--html', file, '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^diagnose: env simulator/);
  assert.match(r.stdout, /\ndepth +prefixes +ended +mean V +V\(1-V\) +true V\(1-V\) +open share/);
  assert.match(r.stdout, /\n0 +4 +0 +[\d.]+ +[\d.]+ +[\d.]+ +1\.000 /);
  const html = readFileSync(file, 'utf8');
  assert.match(html, /<table id="diagnose-table">/);
  assert.equal((html.match(/<svg/g) ?? []).length, 2);
  assert.doesNotMatch(html, /https?:\/\/(?!www\.w3\.org)/, 'no URL: nothing is fetched');
  // A rerun replaces the page it wrote; no temporary file is left beside it.
  const rerun = await runCli(['diagnose', '--env', 'simulator', '--policy', 'scripted', '--prompts', '4', '--k', '4', '--html', file, '--quiet']);
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.startsWith('page.html')),
    ['page.html'],
  );
});

test('hostile input: unknown flags and out-of-range sizes exit 2 with one line naming the flag and the fix', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['--bogus', '1'], /unknown option '--bogus'.*see trace-rl diagnose --help/],
    [['--k', '1'], /--k "1": .* in \[2, 256\]/],
    [['--k', '1e3'], /--k "1e3": expected a whole number/],
    [['--prompts', '0'], /--prompts "0"/],
    [['--prompts', '5000'], /--prompts "5000".*\[1, 1000\]/],
    [['--max-turns', '9999'], /--max-turns "9999".*\[1, 256\]/],
    [['--rollouts', '5', '--k', '4'], /--rollouts 5 > --k 4.*lower --rollouts or raise --k/],
    [['--prompts', '1000', '--k', '256'], /up to \d+ trajectories, above the limit of 100000; lower --prompts, --k/],
    [['--temperature', '0'], /--temperature 0 .* give a temperature > 0/],
    [['--html', dir], /--html .*not a regular file/],
    // A file diagnose did not write (here: notes) is never replaced.
    [['--html', notes], /--html .*notes\.txt: exists and is not a page written by trace-rl diagnose; .*choose another --html/],
    [['--html', path.join(dir, 'no', 'such', 'x.html')], /folder .* does not exist/],
    [['--policy', 'nonsense'], /--policy nonsense: Invalid option: expected one of "embedded"\|"scripted"\|"openai"\|"tinker"\|"simulator-tabular"\|"tiny-lm"/],
    [['--warm-start'], /--warm-start is for --policy embedded on --env world without --run/],
  ];
  // Through the CLI's main in this process: fourteen spawned CLIs cost half a minute for the same code path.
  for (const [extra, message] of cases) {
    const args = ['diagnose', '--env', 'simulator', '--policy', 'scripted', '--quiet', ...extra];
    const r = await runInProcess(args);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
  assert.equal(readFileSync(notes, 'utf8'), 'my notes\n');
});

test('an OpenAI-compatible endpoint (the stand-in server) is diagnosed like any policy', async () => {
  const server = await startStandIn();
  try {
    const data = path.join(dir, 'two.jsonl');
    writeFileSync(
      data,
      [
        { id: 'a', question: 'When was Alan Turing born?', answer: '1912' },
        { id: 'b', question: 'Who wrote Hamlet?', answer: 'Shakespeare' },
      ]
        .map((x) => JSON.stringify(x))
        .join('\n') + '\n',
    );
    const r = await runCli([
      'diagnose',
      '--env',
      'qa',
      '--datasets',
      data,
      '--policy',
      'openai',
      '--base-url',
      server.url,
      '--prompts',
      '2',
      '--k',
      '2',
      '--max-turns',
      '3',
      '--json',
      '--quiet',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Out;
    assert.equal(out.depths[0]!.prefixes, 2);
    assert.equal(out.spend.bare, 4);
    assert.ok(server.requests >= out.spend.turns && out.spend.turns > 0, `${server.requests} requests, ${out.spend.turns} turns`);
  } finally {
    await server.close();
  }
});
