/**
 * How a code-sandbox process is started: the command line that confines it with the operating system.
 * Layers, outermost first (docs/reliability.md says what each blocks and what none of them does):
 *  1. prlimit (util-linux): RLIMIT_DATA bounds all private writable memory of the process (the Python
 *     heap, JavaScript objects and pyodide's in-memory files alike), RLIMIT_CPU its CPU time,
 *     RLIMIT_FSIZE any file it writes, RLIMIT_NOFILE its descriptors, RLIMIT_CORE = 0;
 *  2. bubblewrap: new user, pid, network, ipc, uts and cgroup namespaces (no network interface but a
 *     downed loopback, no other process visible), an empty read-only root holding only the system
 *     libraries, the node binary and pyodide's files (read-only, under /sandbox), no /proc, no host /tmp, a cleared
 *     environment, all capabilities dropped, a new session (no terminal injection), and death with
 *     its parent;
 *  3. a seccomp filter (seccomp.ts): no process creation, no network sockets, no ptrace / mount /
 *     namespace / kernel-loading calls;
 *  4. Node's permission model: reads only of pyodide's folder and the sandbox script, no writes, no
 *     child processes, no worker threads, no native addons;
 *  5. V8's flags frozen once it started (FROZEN_FLAGS). Host paths are bound at neutral ones (INSIDE),
 *     so the process sees no path of the host.
 * Inside, the sandbox script bounds the Python heap and the output and blocks the JavaScript bridge
 * modules (a convenience, not a boundary). The parent enforces wall time by killing the process.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvError } from '../../errors.ts';
import type { CodeLimits } from '../code-tool.ts';
import { sandboxSeccompFilter } from './seccomp.ts';

export const SANDBOX_SCRIPT = fileURLToPath(new URL('./pyodide-sandbox.mjs', import.meta.url));
export const PYODIDE_DIR = realpathSync(dirname(createRequire(import.meta.url).resolve('pyodide/package.json')));

/**
 * Where the confined process sees what it reads: host paths (the checkout, the user's home, where Node
 * is installed) are bound at these neutral ones, so nothing a cell can read (process.argv, the Node
 * options, stack traces, pyodide's settings) names the host's folders.
 */
export const INSIDE = { node: '/sandbox/node', script: '/sandbox/sandbox.mjs', pyodide: '/sandbox/pyodide', packages: '/sandbox/packages' } as const;

/**
 * V8's flags are fixed once it has started: `v8.setFlagsFromString` (which a cell that reached
 * JavaScript could call, to turn on `--allow-natives-syntax` and V8's test-only primitives) aborts the
 * process instead. The sandbox script also replaces that function with one that refuses, so a cell
 * gets an error and its interpreter lives on; this flag holds for any other way there.
 */
export const FROZEN_FLAGS = ['--freeze-flags-after-init'];

/** Memory the process needs beyond the Python heap: Node, V8 and pyodide's JavaScript (≈ 220 MB measured). */
export const PROCESS_OVERHEAD_MB = 320;
/** CPU seconds a sandbox process may use in its life: loading Python plus this many full-length cells. */
const CPU_CELLS = 16;
/** Any file the process writes (it has nowhere writable; a backstop). */
const FILE_SIZE_BYTES = 1 << 20;
const OPEN_FILES = 256;
/**
 * A `run` process compiles Python's WebAssembly with V8's baseline compiler only. Each trajectory is a
 * fresh process, and optimising its hot functions costs more CPU than short cells gain: a trajectory of
 * one short cell took 1.11–1.24 CPU-s with tiering and 0.57–0.60 without. The price is paid by long
 * computations: one cell of 3·10⁶ Python loop iterations ran 1.6–1.7× slower in wall time, its process
 * about even in CPU (0.95–1.13×). Math cells are short, so the baseline compiler wins where the cost
 * is; the wall-time limit is the user's to raise. The snapshot process (Python's
 * start-up) gains nothing either way and keeps the default.
 */
export const RUN_COMPILER_FLAGS = ['--liftoff-only'];

export interface SandboxCommand {
  command: string;
  args: string[];
  /** The seccomp program to hand bubblewrap on file descriptor 3 (undefined when unconfined). */
  seccomp?: Buffer;
  // A `run` process reads its memory snapshot from descriptor 4.
}

export interface SandboxSpec {
  /** `snapshot`: make the memory snapshot that `run` processes start from (pyodide-sandbox.mjs). */
  mode: 'snapshot' | 'run';
  limits: CodeLimits;
  packagesDir?: string;
  /**
   * Runs the sandbox script as a plain child process, without bubblewrap, seccomp or resource limits
   * (Node's permission model only). For machines where confinement is impossible and the code is
   * trusted; never for a model's code.
   */
  unconfined?: boolean;
}

/** The command that starts one sandbox process. Throws {@link SandboxUnavailableError} when it cannot be confined. */
export function sandboxCommand(spec: SandboxSpec): SandboxCommand {
  // A snapshot process imports no package and prints no cell's output: neither is in its command, which
  // keys the snapshot that tools share (pyodide-tool.ts), so tools that differ only there share one.
  const run = spec.mode === 'run';
  const packagesDir = spec.packagesDir === undefined || !run ? undefined : packagesFolder(spec.packagesDir);
  // Unconfined, nothing can be bound elsewhere: the process sees the host's paths (trusted code only).
  const at = spec.unconfined
    ? { script: SANDBOX_SCRIPT, pyodide: PYODIDE_DIR, packages: packagesDir }
    : { script: INSIDE.script, pyodide: INSIDE.pyodide, packages: packagesDir && INSIDE.packages };
  const config = JSON.stringify({
    mode: spec.mode,
    memoryMb: spec.limits.memoryMb,
    outputBytes: run ? spec.limits.outputBytes : undefined,
    pyodideDir: at.pyodide,
    packagesDir: at.packages,
  });
  const nodeArgs = [
    '--experimental-permission',
    ...[at.script, at.pyodide, ...(at.packages ? [at.packages] : [])].map((p) => `--allow-fs-read=${p}`),
    '--no-warnings',
    '--max-old-space-size=256',
    ...FROZEN_FLAGS,
    ...(run ? RUN_COMPILER_FLAGS : []),
    at.script,
    config,
  ];
  if (spec.unconfined) return { command: realpathSync(process.execPath), args: nodeArgs };
  const mounts = [
    { host: PYODIDE_DIR, inside: INSIDE.pyodide },
    { host: SANDBOX_SCRIPT, inside: INSIDE.script },
    ...(packagesDir ? [{ host: packagesDir, inside: INSIDE.packages }] : []),
  ];
  return confinedCommand({ nodeArgs, mounts, limits: spec.limits });
}

/** A host path bound read-only at `inside` in the sandbox. */
export interface Mount {
  host: string;
  inside: string;
}

/**
 * Layers 1–3 around `node nodeArgs`: resource limits, bubblewrap with `mounts` bound read-only (and
 * node at INSIDE.node), the seccomp filter. (Tests use it to check each layer without the permission
 * model inside.)
 */
export function confinedCommand(o: { nodeArgs: string[]; mounts: Mount[]; limits: CodeLimits }): SandboxCommand {
  const missing = confinementProblem();
  if (missing) throw new SandboxUnavailableError(missing);
  const cpuSeconds = Math.ceil(10 + (CPU_CELLS * o.limits.timeoutMs) / 1000);
  const dataBytes = (o.limits.memoryMb + PROCESS_OVERHEAD_MB) * 1024 * 1024;
  return {
    command: 'prlimit',
    args: [
      `--data=${dataBytes}`,
      `--cpu=${cpuSeconds}`,
      `--fsize=${FILE_SIZE_BYTES}`,
      `--nofile=${OPEN_FILES}`,
      '--core=0',
      '--',
      'bwrap',
      ...bwrapBase(),
      ...o.mounts.flatMap((m) => ['--ro-bind', m.host, m.inside]),
      '--remount-ro',
      '/',
      '--seccomp',
      '3',
      INSIDE.node,
      ...o.nodeArgs,
    ],
    seccomp: sandboxSeccompFilter(),
  };
}

function packagesFolder(dir: string): string {
  try {
    const real = realpathSync(dir);
    if (statSync(real).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw new EnvError(`env.math.packagesDir: ${dir} is not a folder; give a directory of pure-Python packages (pip install --target DIR sympy mpmath)`);
}

/** Namespaces, the system libraries and node (at INSIDE.node) read-only, nothing else of the host. */
function bwrapBase(): string[] {
  const libs = ['/usr/lib', '/usr/lib64', '/lib', '/lib64', '/usr/lib32'].flatMap((p) => {
    try {
      const real = realpathSync(p);
      return real === p ? ['--ro-bind', p, p] : ['--symlink', real, p];
    } catch {
      return [];
    }
  });
  return [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
    '--hostname',
    'sandbox',
    ...libs,
    '--ro-bind',
    realpathSync(process.execPath),
    INSIDE.node,
    '--dev',
    '/dev',
    '--chdir',
    '/',
  ];
}

/** Raised where model-written code would run without the operating system's confinement. */
export class SandboxUnavailableError extends EnvError {
  constructor(missing: string) {
    super(
      `code tool pyodide: cannot confine model-written code: ${missing}. Fix: install bubblewrap and util-linux (Debian/Ubuntu: apt-get install bubblewrap util-linux) on a Linux x86-64 or arm64 host that allows user namespaces, or use a SandboxFusion server (env.math.tool=url); env.math.unsafeUnconfined=true runs the code unconfined (only for code you trust)`,
    );
    this.name = 'SandboxUnavailableError';
  }
}

let checked: { problem: string | undefined } | undefined;

/** What stops confinement on this machine (undefined: nothing). Runs a confined `node -e 0` once per process. */
export function confinementProblem(): string | undefined {
  checked ??= { problem: findProblem() };
  return checked.problem;
}

function findProblem(): string | undefined {
  if (process.platform !== 'linux') return `the sandbox needs Linux (this is ${process.platform})`;
  if (!sandboxSeccompFilter()) return `no system-call filter for the ${process.arch} architecture`;
  if (spawnSync('prlimit', ['--version'], { stdio: 'ignore' }).error) return 'prlimit (util-linux) is not installed';
  if (spawnSync('bwrap', ['--version'], { stdio: 'ignore' }).error) return 'bubblewrap (bwrap) is not installed';
  // The filter goes in on standard input (spawnSync can fill no other descriptor); the real sandbox
  // gets it on descriptor 3 and keeps standard input for its cells.
  const probe = spawnSync('bwrap', [...bwrapBase(), '--remount-ro', '/', '--seccomp', '0', INSIDE.node, '-e', '0'], {
    input: sandboxSeccompFilter(),
    stdio: ['pipe', 'ignore', 'pipe'],
    timeout: 20000,
  });
  if (probe.status !== 0) {
    const why = (probe.stderr?.toString() ?? '').trim().split('\n').at(-1)?.slice(0, 200) || `exit ${probe.status ?? probe.signal}`;
    return `bubblewrap cannot create the sandbox here (${why}; user namespaces may be disabled: sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0)`;
  }
  return undefined;
}
