/**
 * Runs documented shell commands as a reader would, for the test/docs/run-*.test.ts files.
 *
 * A workspace is a fresh folder that stands for the reader's checkout: `bench/`, `data/` and
 * `examples/` link to the repository's (inputs only; `bench/tinylm/` is a folder of links, so a test
 * may add a restored checkpoint to it), and the commands' own outputs (runs/, key files, Parquet) land
 * in it, never in the repository. `npx trace-rl …` and `trace-rl …` reach bin/trace-rl.js through two
 * small scripts first on PATH: in a checkout `npx trace-rl` resolves the project's own bin
 * (run-instant.test.ts checks that once against the real npx), and an installed package puts
 * `trace-rl` on PATH. A command runs in bash, with pipefail, exactly as the doc writes it, except what
 * its test changes on purpose and says: a port or URL (the servers a block assumes are started by the
 * test on free ports) and flags appended to make it smaller (`--steps 1`: commander keeps an option's
 * last value).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { docCommands, keyOf, manifest, ROOT } from './shell-commands.ts';

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface Background {
  process: ChildProcess;
  /** What it wrote so far (stdout and stderr, in one file). */
  output(): string;
  stop(): Promise<void>;
}

const shim = (body: string) => `#!/usr/bin/env bash\n${body}\n`;

export class DocWorkspace {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  private readonly background: Background[] = [];

  constructor(label: string) {
    this.dir = mkdtempSync(join(tmpdir(), `trace-doc-${label}-`));
    const bin = join(this.dir, '.bin');
    mkdirSync(bin);
    const traceRl = `exec "${process.execPath}" "${join(ROOT, 'bin/trace-rl.js')}" "$@"`;
    writeFileSync(
      join(bin, 'npx'),
      shim(
        [
          `if [ "$1" = trace-rl ]; then shift; ${traceRl}; fi`,
          `if [ "$1" = tsx ]; then shift; exec "${join(ROOT, 'node_modules/.bin/tsx')}" "$@"; fi`,
          `PATH="${process.env.PATH}" exec npx "$@"`,
        ].join('\n'),
      ),
    );
    writeFileSync(join(bin, 'trace-rl'), shim(traceRl));
    for (const f of ['npx', 'trace-rl']) chmodSync(join(bin, f), 0o755);
    for (const f of ['data', 'examples']) symlinkSync(join(ROOT, f), join(this.dir, f));
    mkdirSync(join(this.dir, 'bench/tinylm'), { recursive: true });
    for (const f of readdirSync(join(ROOT, 'bench'))) if (f !== 'tinylm') symlinkSync(join(ROOT, 'bench', f), join(this.dir, 'bench', f));
    for (const f of readdirSync(join(ROOT, 'bench/tinylm'))) symlinkSync(join(ROOT, 'bench/tinylm', f), join(this.dir, 'bench/tinylm', f));
    this.env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1' };
    after(() => this.close());
  }

  path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  /** Runs a shell line (or several) in the workspace; resolves when it exits or after `timeoutMs` (then killed, status null). */
  run(shell: string, timeoutMs = 120_000): Promise<Ran> {
    return new Promise((resolve) => {
      const child = spawn('bash', ['-c', `set -o pipefail\n${shell}`], { cwd: this.dir, env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      const timer = setTimeout(() => signalGroup(child), timeoutMs);
      let status: number | null = null;
      // What the line left running (a block's `server &`) is stopped when the line ends; its output pipes then close.
      child.on('exit', (code) => {
        status = code;
        signalGroup(child);
      });
      child.on('close', () => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }

  /** Runs and asserts exit 0, naming the doc's place and the output when it fails. */
  async ok(place: string, shell: string, timeoutMs?: number): Promise<Ran> {
    const r = await this.run(shell, timeoutMs);
    assert.equal(r.status, 0, `${place}: \`${shell}\` exited ${r.status}\n--- stderr:\n${r.stderr.slice(-4000)}\n--- stdout:\n${r.stdout.slice(-2000)}`);
    return r;
  }

  /** Starts a long-running command (a server) in its own process group; stopped with the workspace. */
  start(shell: string): Background {
    const log = this.path(`.bg-${this.background.length}.log`);
    const fd = openSync(log, 'w');
    const child = spawn('bash', ['-c', shell], { cwd: this.dir, env: this.env, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const bg: Background = {
      process: child,
      output: () => readFileSync(log, 'utf8'),
      stop: async () => {
        const running = child.exitCode === null && child.signalCode === null;
        signalGroup(child);
        if (running) await exited;
      },
    };
    this.background.push(bg);
    return bg;
  }

  /** Waits until the output of a background command matches, or fails with what it wrote. */
  async waitFor(bg: Background, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const m = bg.output().match(pattern);
      if (m) return m;
      if (bg.process.exitCode !== null || Date.now() > end) assert.fail(`never printed ${pattern} (exit ${bg.process.exitCode}):\n${bg.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.background.map((b) => b.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** SIGTERM to the child's process group (it was started detached: its own group), if any of it is left. */
function signalGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // nothing of it is left
  }
}

/** A port nothing listens on now (the OS's pick, released at once: a block that names its port needs one in advance). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The text with each `from` replaced by its `to`; each must occur (a rewrite that no longer applies means the doc changed). */
export function rewrite(text: string, pairs: ReadonlyArray<readonly [string, string]>): string {
  for (const [from, to] of pairs) {
    assert.ok(text.includes(from), `expected "${from}" in \`${text}\``);
    text = text.split(from).join(to);
  }
  return text;
}

/** Appends flags to the command (the trace-rl command of the line: before a redirect or trailing `&`). */
export function withFlags(text: string, flags: string): string {
  const m = /^(.*?)(\s+(?:<|>|&)\s*\S*)?\s*$/.exec(text)!;
  return `${m[1]} ${flags}${m[2] ?? ''}`;
}

export interface DocStep {
  /** The command as the doc writes it. */
  text: string;
  /** Where it stands (file:line, every place that shows it). */
  place: string;
}

/**
 * Declares the test file's documented commands: one test per handler, in the order given (later ones
 * may use what earlier ones made), and a test that the handlers are exactly the commands the manifest
 * (test/docs/shell-commands.yaml) says this file runs. A handler covers every place that shows its text.
 */
export function docTests(
  testFile: string,
  handlers: ReadonlyArray<readonly [string, (step: DocStep, t: TestContext) => Promise<unknown>]>,
  options: { timeout?: number } = {},
): void {
  const assigned = manifest().filter((e) => 'test' in e && e.test === testFile);
  const commands = docCommands();
  test(`${testFile} runs exactly the documented commands the manifest gives it`, () => {
    assert.deepEqual([...new Set(handlers.map(([t]) => t))].sort(), [...new Set(assigned.map((e) => e.command))].sort());
  });
  for (const [text, handler] of handlers) {
    const place =
      commands
        .filter((c) => c.text === text && assigned.some((e) => keyOf(e) === keyOf(c)))
        .map((c) => `${c.file}:${c.line}`)
        .join(', ') || '(not in the docs)';
    test(`${place}: ${text}`, { timeout: options.timeout ?? 300_000 }, async (t) => {
      await handler({ text, place }, t);
    });
  }
}
