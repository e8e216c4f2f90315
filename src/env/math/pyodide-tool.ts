/**
 * The default code tool: CPython compiled to WebAssembly (pyodide, standard library only unless a
 * package directory is given), each interpreter in its own operating-system process confined by
 * sandbox/confine.ts (bubblewrap, seccomp, resource limits, Node's permission model).
 *
 * State: a cell runs in an interpreter whose only past is the earlier cells of its own trajectory
 * (`history`), in order — never another trajectory's or question's. A process that has run exactly
 * a cell's history is reused for it (the common case: a trajectory's next turn); otherwise a fresh,
 * pre-started process replays the history quietly first (a tree's sibling continuations, or a chain
 * that was evicted). Same cells, same output: entropy is seeded, so what ran before never matters.
 *
 * Limits: wall time here (the process is killed at the limit and the cell is a `timeout`), memory and
 * output in the process and by the operating system; a process that hit a limit or died is discarded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { DEFAULT_CODE_LIMITS, limitMessage, replayLimitMessage, type CodeLimits, type CodeResult, type CodeRunOptions, type CodeTool } from './code-tool.ts';
import { sandboxCommand, type SandboxCommand } from './sandbox/confine.ts';

export interface PyodideToolOptions extends Partial<CodeLimits> {
  /** Cells run in parallel up to this (one process each). Default 1. */
  workers?: number;
  /** A host directory of pure-Python packages (e.g. `pip install --target DIR sympy mpmath`), mounted read-only first on sys.path. */
  packagesDir?: string;
  /** Runs without the operating system's confinement (see confine.ts); never for a model's code. */
  unsafeUnconfined?: boolean;
  /**
   * Wall time for replaying a trajectory's earlier cells in a fresh process, all of them together (ms;
   * default {@link DEFAULT_REPLAY_TIMEOUTS} × timeoutMs). Past it the cell answers `replay_limit`.
   */
  replayMs?: number;
}

/**
 * The default replay bound, in cells' worth of wall time. Each replayed cell had up to timeoutMs, so
 * without a bound of its own a replay grew with the history (one cheap cell cost 7.0 s, then 12.2 s);
 * math cells are short, so a history that needs more than two full-length cells to replay is an attack
 * or a runaway, and the trajectory ends instead.
 */
export const DEFAULT_REPLAY_TIMEOUTS = 2;

interface Reply {
  id?: number;
  ready?: boolean;
  status?: 'ok' | 'error' | 'memory' | 'output_limit';
  stdout?: string;
  stderr?: string;
  error?: string;
  value?: string;
  ms?: number;
  /** The interpreter cannot go on (pyodide's fatal error); the process exits after this reply. */
  fatal?: boolean;
}

/**
 * The longest protocol line accepted from a sandbox: its output is capped at `outputBytes` for stdout
 * and for stderr, which JSON escapes to at most 6 characters a byte; anything longer is an attack.
 */
const maxReplyChars = (outputBytes: number) => 12 * outputBytes + 65536;
/** How V8, the C++ runtime and pyodide say that an allocation failed (the process's memory limit). */
const MEMORY_DEATH = /heap out of memory|bad_alloc|Cannot allocate memory|allocation failed|OutOfMemory|could not allocate/i;
/** Bytes of a sandbox's stderr kept to explain its death. */
const STDERR_TAIL = 2048;
/**
 * CPU a sandbox may use in all while it waits between cells (Node's own idle work is a few ms). The
 * sandbox clears the timers a cell set when it answers, but code that escaped to JavaScript can still
 * schedule work; past this the process is killed, so a cell's work ends with it (give or take a second)
 * instead of running on until RLIMIT_CPU.
 */
export const IDLE_CPU_MS = 500;
/** How often an idle sandbox's CPU time is read. */
const IDLE_CHECK_MS = 500;
/** Linux reports process CPU time in clock ticks of 1/100 s (USER_HZ). */
const MS_PER_TICK = 10;

/**
 * CPU time in ms used so far by process `pid` and its descendants (the confined node under prlimit
 * and bubblewrap), from /proc; undefined where that cannot be read (not Linux, the process gone).
 */
export function processTreeCpuMs(pid: number): number | undefined {
  try {
    let ticks = 0;
    const walk = (p: number): void => {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        if (kids) for (const k of kids.split(' ')) walk(Number(k));
      }
    };
    walk(pid);
    return ticks * MS_PER_TICK;
  } catch {
    return undefined;
  }
}

/**
 * Writes `bytes` to a child's extra descriptor and closes it. Node opens such pipes in both
 * directions; the read side would keep the host alive, so the stream is destroyed once written.
 */
function hand(stream: unknown, bytes: Buffer): void {
  const s = stream as NodeJS.WritableStream & { destroy(): void };
  s.on('error', () => undefined);
  s.end(bytes, () => s.destroy());
}

/** One confined interpreter process. */
class Sandbox {
  readonly proc: ChildProcess;
  readonly ready: Promise<void>;
  /** The cells this interpreter has run, in order (its whole state), and their lookup key. */
  readonly ran: string[] = [];
  ranKey = key([]);
  dead = false;
  busy = false;
  exit?: string;
  private stderrTail = '';
  private buffer = '';
  private idleWatch?: NodeJS.Timeout;
  private pending?: { id: number; resolve(r: Reply | undefined): void };
  private nextId = 0;

  constructor(
    cmd: SandboxCommand,
    snapshot: Buffer,
    private readonly maxReply: number,
  ) {
    // Its own process group, so a kill reaches bwrap's monitor too (an orphaned one kept the pipes open).
    this.proc = spawn(cmd.command, cmd.args, { stdio: ['pipe', 'pipe', 'pipe', cmd.seccomp ? 'pipe' : 'ignore', 'pipe'], env: {}, detached: true });
    if (cmd.seccomp) hand(this.proc.stdio[3], cmd.seccomp);
    hand(this.proc.stdio[4], snapshot);
    this.proc.stdin!.on('error', () => undefined);
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (d: string) => (this.stderrTail = (this.stderrTail + d).slice(-STDERR_TAIL)));
    let onReady: () => void = () => undefined;
    let onFail: (e: Error) => void = () => undefined;
    this.ready = new Promise((resolve, reject) => ([onReady, onFail] = [resolve, reject]));
    this.ready.catch(() => undefined);
    this.proc.stdout!.setEncoding('utf8');
    this.proc.stdout!.on('data', (d: string) => {
      // A killed process's pipe may still deliver what it wrote before the kill: none of it is a reply.
      if (this.dead) return;
      this.buffer += d;
      if (this.buffer.length > this.maxReply) return this.kill('a reply longer than the output limit allows');
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        let msg: Reply;
        try {
          msg = JSON.parse(line) as Reply;
        } catch {
          return this.kill('a line that is not the protocol');
        }
        if (msg.ready) onReady();
        else if (this.pending && msg.id === this.pending.id) {
          const p = this.pending;
          this.pending = undefined;
          p.resolve(msg);
        }
      }
    });
    this.proc.on('error', (e) => onFail(e));
    this.proc.on('exit', (code, signal) => {
      this.dropInput();
      this.dead = true;
      this.exit ??= signal ? `signal ${signal}` : `exit code ${code}`;
      onFail(new Error(`the sandbox process ended (${this.death()})`));
      this.pending?.resolve(undefined);
      this.pending = undefined;
    });
  }

  /** Runs one cell; undefined when the process died (or was killed) before answering. */
  run(code: string, quiet: boolean, timeoutMs: number): Promise<Reply | undefined | 'timeout'> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        this.kill('wall-time limit');
        resolve('timeout');
      }, timeoutMs);
      this.pending = {
        id,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      this.proc.stdin!.write(JSON.stringify({ id, code, quiet }) + '\n');
    });
  }

  /** Keeps the host process alive while this one starts or runs a cell; an idle sandbox does not. */
  hold(held: boolean): void {
    if (this.dead) return;
    for (const h of [this.proc, this.proc.stdin, this.proc.stdout, this.proc.stderr] as unknown as { ref(): void; unref(): void }[]) {
      if (held) h.ref();
      else h.unref();
    }
  }

  /** Why the process died, from its exit and the last line it wrote to stderr. */
  death(): string {
    const last = lastLine(this.stderrTail);
    return `${this.exit ?? 'killed'}${last ? `; ${last}` : ''}`;
  }

  /**
   * Between cells: reads the process's CPU time every IDLE_CHECK_MS and kills it once it has used more
   * than IDLE_CPU_MS since it answered (work a cell left behind). `onKilled` is told.
   */
  watchIdle(onKilled: () => void): void {
    const pid = this.proc.pid;
    const start = pid === undefined ? undefined : processTreeCpuMs(pid);
    if (pid === undefined || start === undefined || this.dead) return;
    this.idleWatch = setInterval(() => {
      const now = processTreeCpuMs(pid);
      if (now === undefined || this.dead) return this.stopIdleWatch();
      if (now - start <= IDLE_CPU_MS) return;
      this.stopIdleWatch();
      this.kill(`used ${now - start} ms of CPU after its cell answered`);
      onKilled();
    }, IDLE_CHECK_MS);
    this.idleWatch.unref();
  }

  stopIdleWatch(): void {
    clearInterval(this.idleWatch);
    this.idleWatch = undefined;
  }

  /** Records a cell this interpreter ran to the end (it is now part of its state). */
  record(cell: string): void {
    this.ran.push(cell);
    this.ranKey = key(this.ran);
  }

  get memoryDeath(): boolean {
    return MEMORY_DEATH.test(this.stderrTail);
  }

  kill(why: string): void {
    this.stopIdleWatch();
    if (this.dead) return;
    this.exit ??= `killed: ${why}`;
    this.dead = true;
    this.dropInput();
    try {
      process.kill(-this.proc.pid!, 'SIGKILL');
    } catch {
      this.proc.kill('SIGKILL');
    }
  }

  /**
   * Drops what is still being written to the process (a cell, the snapshot): a write to a pipe that a
   * dead sandbox's surviving descendant holds open never completes and kept the host process alive.
   */
  private dropInput(): void {
    for (const i of [0, 3, 4]) (this.proc.stdio[i] as { destroy?(): void } | null | undefined)?.destroy?.();
  }
}

interface Job {
  code: string;
  history: readonly string[];
  signal?: AbortSignal;
  resolve(r: CodeResult): void;
  reject(e: unknown): void;
}

const key = (cells: readonly string[]) => JSON.stringify(cells);

/** The last line a process wrote to stderr, shortened: what explains its death. */
const lastLine = (stderr: string) => stderr.trim().split('\n').at(-1)?.slice(0, 300);

/** The largest snapshot line accepted (the snapshot of the standard library is ≈ 28 MB of base64). */
const MAX_SNAPSHOT_CHARS = 96 << 20;

/**
 * Loads Python once in a confined process and returns its memory snapshot, taken before any cell
 * ran; every sandbox of the tools that share it starts from it. `stop` kills the process (no-op once it ended).
 */
function makeSnapshot(cmd: SandboxCommand): { bytes: Promise<Buffer>; stop(): void } {
  // Its own process group, as a sandbox's: a stop reaches bwrap's monitor too.
  const proc = spawn(cmd.command, cmd.args, { stdio: ['ignore', 'pipe', 'pipe', cmd.seccomp ? 'pipe' : 'ignore'], env: {}, detached: true });
  let ended = false;
  const bytes = new Promise<Buffer>((resolve, reject) => {
    if (cmd.seccomp) hand(proc.stdio[3], cmd.seccomp);
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    proc.stdout!.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_SNAPSHOT_CHARS) proc.kill('SIGKILL');
      else chunks.push(d);
    });
    proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-STDERR_TAIL)));
    proc.on('error', reject);
    proc.on('exit', () => (ended = true));
    proc.on('close', (code, signal) => {
      try {
        const msg = JSON.parse(Buffer.concat(chunks).toString()) as { snapshot?: string };
        if (code === 0 && typeof msg.snapshot === 'string') return resolve(Buffer.from(msg.snapshot, 'base64'));
      } catch {
        // reported below
      }
      const why = lastLine(stderr);
      reject(new Error(`loading Python in the sandbox failed (${signal ? `signal ${signal}` : `exit code ${code}`})${why ? `: ${why}` : ''}`));
    });
  });
  const stop = () => {
    if (ended || proc.pid === undefined) return;
    try {
      process.kill(-proc.pid, 'SIGKILL');
    } catch {
      proc.kill('SIGKILL');
    }
  };
  return { bytes, stop };
}

/** A snapshot made or being made, and how many open tools use it. */
interface SharedSnapshot {
  key: string;
  bytes: Promise<Buffer>;
  users: number;
  stop(): void;
}

/**
 * Snapshots by the command line that makes them: it names all that decides one (the memory and CPU
 * limits, the confinement; pyodide's files and the sandbox script are fixed for the process), so open
 * tools with the same limits load Python once (a snapshot costs ~3 CPU-s; a math env and a test file's
 * tools paid it each). A snapshot that failed is dropped, so the next tool tries again; one that no
 * open tool uses is dropped too (≈ 20 MB held), and its process stopped if it is still loading.
 */
const snapshots = new Map<string, SharedSnapshot>();
let snapshotProcesses = 0;

/** How many snapshot processes this process has started (for tests and benches). */
export const snapshotsStarted = (): number => snapshotProcesses;

function openSnapshot(cmd: SandboxCommand): SharedSnapshot {
  const key = JSON.stringify([cmd.command, ...cmd.args]);
  let shared = snapshots.get(key);
  if (!shared) {
    snapshotProcesses++;
    const made = makeSnapshot(cmd);
    const entry: SharedSnapshot = { key, bytes: made.bytes, users: 0, stop: made.stop };
    made.bytes.catch(() => snapshots.get(key) === entry && snapshots.delete(key));
    snapshots.set(key, (shared = entry));
  }
  shared.users++;
  return shared;
}

function closeSnapshot(shared: SharedSnapshot): void {
  if (--shared.users > 0) return;
  if (snapshots.get(shared.key) === shared) snapshots.delete(shared.key);
  shared.stop();
}

export class PyodideCodeTool implements CodeTool {
  readonly name = 'pyodide';
  readonly limits: CodeLimits;
  private readonly size: number;
  private readonly command: SandboxCommand;
  private readonly maxReply: number;
  private readonly shared: SharedSnapshot;
  private readonly snapshot: Promise<Buffer>;
  private snapshotBytes?: Buffer;
  /** Started processes that have run nothing, ready for any trajectory. */
  private readonly spare: Sandbox[] = [];
  /** Idle processes that have run some trajectory's cells, oldest first (at most `size * 2`). */
  private readonly chains: Sandbox[] = [];
  private readonly queue: Job[] = [];
  private busy = 0;
  private closed = false;
  /** Processes discarded after a limit, a death or an abort (for tests and benches). */
  replaced = 0;
  /** Processes started (for tests and benches). */
  started = 0;
  /** Earlier cells replayed in a fresh process because no process held the trajectory's state. */
  replayed = 0;
  /** Cells that answered `replay_limit` (for tests and benches; the step metric is read from the trees). */
  replayLimited = 0;
  /** Wall time for replaying one cell's history, all cells together (ms). */
  readonly replayMs: number;

  constructor(options: PyodideToolOptions = {}) {
    this.limits = {
      timeoutMs: options.timeoutMs ?? DEFAULT_CODE_LIMITS.timeoutMs,
      memoryMb: options.memoryMb ?? DEFAULT_CODE_LIMITS.memoryMb,
      outputBytes: options.outputBytes ?? DEFAULT_CODE_LIMITS.outputBytes,
    };
    this.size = Math.max(1, options.workers ?? 1);
    this.replayMs = options.replayMs ?? DEFAULT_REPLAY_TIMEOUTS * this.limits.timeoutMs;
    this.maxReply = maxReplyChars(this.limits.outputBytes);
    // Built now so that a machine that cannot confine code fails at construction, in one line.
    const spec = { limits: this.limits, packagesDir: options.packagesDir, unconfined: options.unsafeUnconfined };
    this.command = sandboxCommand({ ...spec, mode: 'run' });
    this.shared = openSnapshot(sandboxCommand({ ...spec, mode: 'snapshot' }));
    this.snapshot = this.shared.bytes.then((b) => (this.snapshotBytes = b));
    this.snapshot.catch(() => undefined);
    if (options.unsafeUnconfined)
      process.stderr.write(
        "WARNING: env.math.unsafeUnconfined is set: model-written Python runs without the operating system's confinement (no namespaces, seccomp or resource limits)\n",
      );
  }

  /** Starts the spare processes and waits until Python is loaded in each (otherwise the first cells pay for it). */
  async warmup(): Promise<void> {
    await this.snapshot;
    this.refill();
    await Promise.all(this.spare.map((s) => s.ready.catch(() => undefined)));
  }

  run(code: string, options: CodeRunOptions = {}): Promise<CodeResult> {
    if (this.closed) return Promise.reject(new Error('pyodide code tool is closed'));
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise((resolve, reject) => {
      this.queue.push({ code, history: options.history ?? [], signal: options.signal, resolve, reject });
      this.pump();
    });
  }

  /** The process ids of the idle sandboxes holding some trajectory's cells (for tests and benches). */
  idleProcesses(): number[] {
    return this.chains.filter((s) => !s.dead && s.proc.pid !== undefined).map((s) => s.proc.pid!);
  }

  async close(): Promise<void> {
    if (!this.closed) closeSnapshot(this.shared);
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('pyodide code tool closed'));
    for (const s of [...this.spare.splice(0), ...this.chains.splice(0)]) s.kill('tool closed');
  }

  private start(): Sandbox {
    this.started++;
    const s = new Sandbox(this.command, this.snapshotBytes!, this.maxReply);
    // A starting process keeps the host alive; an idle one must not (a CLI run ends when its work does).
    s.ready.then(
      () => s.hold(s.busy),
      () => undefined,
    );
    return s;
  }

  /** Keeps `size` spare processes starting or ready. */
  private refill(): void {
    if (!this.snapshotBytes) return;
    for (let i = this.spare.length - 1; i >= 0; i--) if (this.spare[i]!.dead) this.spare.splice(i, 1);
    while (!this.closed && this.spare.length < this.size) this.spare.push(this.start());
  }

  private pump(): void {
    while (this.queue.length > 0 && this.busy < this.size) {
      const job = this.queue.shift()!;
      if (job.signal?.aborted) {
        job.reject(job.signal.reason);
        continue;
      }
      this.busy++;
      void this.execute(job).finally(() => {
        this.busy--;
        this.pump();
      });
    }
  }

  /** A process holding exactly `history`, or a spare one (started if none is left). */
  private take(history: readonly string[]): Sandbox {
    const k = key(history);
    const i = this.chains.findIndex((s) => !s.dead && s.ranKey === k);
    if (i >= 0) {
      const s = this.chains.splice(i, 1)[0]!;
      s.stopIdleWatch();
      return s;
    }
    let s: Sandbox | undefined;
    while ((s = this.spare.shift()) && s.dead) this.replaced++;
    const fresh = s ?? this.start();
    this.refill();
    return fresh;
  }

  private keep(s: Sandbox): void {
    if (this.closed || s.dead) return;
    this.chains.push(s);
    s.watchIdle(() => {
      this.replaced++;
      const i = this.chains.indexOf(s);
      if (i >= 0) this.chains.splice(i, 1);
    });
    while (this.chains.length > this.size * 2) this.chains.shift()!.kill('evicted');
  }

  private discard(s: Sandbox, why: string): void {
    s.kill(why);
    this.replaced++;
  }

  private async execute(job: Job): Promise<void> {
    try {
      await this.snapshot;
    } catch (e) {
      return job.resolve({ status: 'sandbox_error', stdout: '', stderr: '', error: `pyodide sandbox: ${(e as Error).message}`, ms: 0 });
    }
    const s = this.take(job.history);
    const onAbort = () => this.discard(s, 'aborted');
    job.signal?.addEventListener('abort', onAbort, { once: true });
    s.busy = true;
    s.hold(true);
    try {
      const result = await this.onSandbox(s, job);
      if (job.signal?.aborted) return job.reject(job.signal.reason);
      job.resolve(result);
    } catch (e) {
      job.reject(e);
    } finally {
      job.signal?.removeEventListener('abort', onAbort);
      s.busy = false;
      s.hold(false);
    }
  }

  private async onSandbox(s: Sandbox, job: Job): Promise<CodeResult> {
    const failure = (error: string): CodeResult => ({ status: 'sandbox_error', stdout: '', stderr: '', error, ms: 0 });
    try {
      await s.ready;
    } catch (e) {
      this.discard(s, 'failed to start');
      return failure(`pyodide sandbox failed to start: ${(e as Error).message}`);
    }
    // Replay what this process has not run (all of the history, for a fresh one), within one deadline
    // for all of it: each cell still has timeoutMs at most.
    const toReplay = job.history.slice(s.ran.length);
    const deadline = performance.now() + this.replayMs;
    for (const cell of toReplay) {
      this.replayed++;
      const left = deadline - performance.now();
      const r = left <= 0 ? 'timeout' : await s.run(cell, true, Math.min(this.limits.timeoutMs, left));
      if (r === 'timeout' && performance.now() >= deadline - 1) {
        this.discard(s, 'replay limit');
        this.replayLimited++;
        return { status: 'replay_limit', stdout: '', stderr: '', error: replayLimitMessage(toReplay.length, this.replayMs), ms: 0 };
      }
      if (r === undefined || r === 'timeout' || r.status === 'memory' || r.fatal || s.dead) {
        this.discard(s, 'replay failed');
        return failure(
          `pyodide sandbox: replaying an earlier cell of the trajectory did not finish (${r === 'timeout' ? 'wall-time limit' : r === undefined ? s.death() : 'memory limit'})`,
        );
      }
      s.record(cell);
    }
    const r = await s.run(job.code, false, this.limits.timeoutMs);
    if (r === 'timeout') {
      this.replaced++;
      return { status: 'timeout', stdout: '', stderr: '', error: limitMessage('timeout', this.limits), ms: this.limits.timeoutMs };
    }
    if (r === undefined) {
      // The cell ended its own process (a limit of the operating system, or code that kills it).
      this.discard(s, 'died');
      if (s.memoryDeath) return { status: 'memory', stdout: '', stderr: '', error: limitMessage('memory', this.limits), ms: 0 };
      return {
        status: 'error',
        stdout: '',
        stderr: '',
        error: `SandboxExit: the cell ended its interpreter (${s.death()}); the next cell starts a new one`,
        ms: 0,
      };
    }
    if (r.fatal) {
      this.discard(s, 'fatal error');
      if (MEMORY_DEATH.test(r.error ?? '')) return { status: 'memory', stdout: '', stderr: '', error: limitMessage('memory', this.limits), ms: r.ms ?? 0 };
      return {
        status: 'error',
        stdout: '',
        stderr: '',
        error: `SandboxExit: the cell ended its interpreter (${String(r.error ?? 'fatal error').slice(0, 300)}); the next cell starts a new one`,
        ms: r.ms ?? 0,
      };
    }
    const status = r.status ?? 'error';
    const result: CodeResult = { status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ms: r.ms ?? 0 };
    if (r.value !== undefined) result.value = r.value;
    if (status === 'error') result.error = r.error;
    // Past the output limit, what fits of the cell's own error (if any) comes first, then the mark.
    else if (status === 'output_limit') result.error = [r.error, limitMessage(status, this.limits)].filter(Boolean).join('\n');
    else if (status !== 'ok') result.error = limitMessage(status, this.limits);
    if (status === 'memory') this.discard(s, 'memory limit');
    else {
      s.record(job.code);
      this.keep(s);
    }
    return result;
  }
}
