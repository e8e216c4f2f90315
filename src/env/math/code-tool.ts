/**
 * The code tool of the math environment: runs one Python cell and reports what it printed. Two
 * backends implement it (pyodide in confined processes, and an HTTP sandbox with SandboxFusion's
 * `run_code` API); the environment only sees this interface and turns a result into an observation
 * with {@link formatObservation}.
 *
 * State: a cell runs after the earlier cells of its own trajectory (`history`), as in a notebook, and
 * sees nothing of any other trajectory. A cell stopped by the time or memory limit, or that ended its
 * interpreter, leaves no state ({@link leavesState}); the environment leaves it out of the history.
 */

/**
 * How a cell ended:
 *  - `ok`: ran to the end;
 *  - `error`: Python raised (syntax error, missing module, any exception) — `error` holds the traceback;
 *  - `timeout`: exceeded the wall-time limit (the interpreter was replaced);
 *  - `memory`: exceeded the memory limit (Python's MemoryError, or the operating system's limit; the
 *    interpreter was replaced);
 *  - `output_limit`: its output (printed text, then the value, then the error) passed the output limit:
 *    kept up to the limit, then the OutputLimitError line (printing past it stops the cell; a long
 *    value or error is cut, and the interpreter goes on);
 *  - `replay_limit`: the cell did not run: replaying the trajectory's earlier cells in a fresh
 *    interpreter took longer than the tool allows for all of them together (pyodide backend); the
 *    environment ends the trajectory (reason `replay_limit`);
 *  - `sandbox_error`: the sandbox itself failed (HTTP error after retries, a process that could not
 *    start or replay the history) — not the cell's fault; the environment records it as a turn error.
 * A cell that ends its own interpreter (say, by killing its process) is an `error` whose message
 * starts `SandboxExit:`.
 */
export type CodeStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'output_limit' | 'replay_limit' | 'sandbox_error';

export interface CodeResult {
  status: CodeStatus;
  stdout: string;
  stderr: string;
  /** Traceback or limit message, when status is not ok. */
  error?: string;
  /** repr of a trailing expression's value (pyodide backend only), like a notebook cell. */
  value?: string;
  /** Wall time of the run as the backend measured it (ms). */
  ms: number;
}

export interface CodeRunOptions {
  signal?: AbortSignal;
  /** The earlier cells of this trajectory that left state, in order (default: none). */
  history?: readonly string[];
}

export interface CodeTool {
  readonly name: string;
  run(code: string, options?: CodeRunOptions): Promise<CodeResult>;
  /** Frees workers / connections; the tool cannot run afterwards. */
  close(): Promise<void>;
}

/** Limits every backend applies (the url backend passes the time limit to the sandbox). */
export interface CodeLimits {
  /** Wall time per cell, ms. Default 5000. */
  timeoutMs: number;
  /** Python heap per interpreter, MB (pyodide backend; the whole process may use 320 MB more). Default 256. */
  memoryMb: number;
  /** Bytes of a cell's output kept: stdout, stderr, the value and the error together. Default 16384. */
  outputBytes: number;
}

export const DEFAULT_CODE_LIMITS: CodeLimits = { timeoutMs: 5000, memoryMb: 256, outputBytes: 16384 };

/** The limit messages, fixed so that models (and tests) can rely on them. */
export function limitMessage(status: 'timeout' | 'memory' | 'output_limit', limits: CodeLimits): string {
  switch (status) {
    case 'timeout':
      return `TimeoutError: the cell ran longer than ${limits.timeoutMs / 1000} s and was stopped`;
    case 'memory':
      return `MemoryError: the cell needed more than ${limits.memoryMb} MB and was stopped`;
    case 'output_limit':
      return `OutputLimitError: the cell's output (printed text, value and error together) passed ${limits.outputBytes} bytes and was cut there; printing past it stops the cell`;
  }
}

/** `text` cut to at most `maxBytes` bytes of UTF-8, at a character boundary. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString();
}

/**
 * What the model sees after its cell ran: stdout, then stderr, then the trailing expression's value
 * (when nothing was printed), then the error or limit message. An empty result says so, because an
 * empty observation teaches a model nothing.
 */
export function formatObservation(r: CodeResult): string {
  const parts: string[] = [];
  if (r.stdout.length > 0) parts.push(r.stdout.trimEnd());
  if (r.stderr.length > 0) parts.push(r.stderr.trimEnd());
  if (r.value !== undefined && r.stdout.length === 0) parts.push(r.value);
  if (r.error) parts.push(r.error.trimEnd());
  if (parts.length === 0) return '(no output; print the values you need)';
  return parts.join('\n');
}

/** How the observation of a cell that could not run, because its trajectory's replay took too long, starts. */
export const REPLAY_LIMIT_MARK = 'ReplayLimitError:';

/** The message of a `replay_limit` result: fixed, so that a trajectory restored from its turns ends where it ended live. */
export function replayLimitMessage(cells: number, replayMs: number): string {
  return `${REPLAY_LIMIT_MARK} replaying the trajectory's ${cells} earlier cell(s) in a fresh interpreter took more than ${replayMs / 1000} s; the trajectory ends here`;
}

const REPLAY_LIMIT_LINE =
  /^ReplayLimitError: replaying the trajectory's \d+ earlier cell\(s\) in a fresh interpreter took more than \d+(\.\d+)? s; the trajectory ends here$/m;

/**
 * Whether `observation` is that of a cell whose trajectory's replay passed the tool's bound (it ends the
 * trajectory). Read from the observation, as {@link leavesState} is, so a live episode and one restored
 * from its turns agree; a cell that prints this exact line ends its own trajectory, with reward 0.
 */
export function endedByReplayLimit(observation: string): boolean {
  return REPLAY_LIMIT_LINE.test(observation);
}

const STATELESS_ENDINGS = [
  'TimeoutError: the cell ran longer than',
  'MemoryError: the cell needed more than',
  'SandboxExit: the cell ended its interpreter',
  REPLAY_LIMIT_MARK,
];

/**
 * Whether a cell whose observation is `observation` left state for the next cells of its trajectory:
 * not when a limit stopped it or it ended its interpreter. Read from the observation (not the result)
 * so that a live episode and one restored from its recorded turns agree by construction.
 */
export function leavesState(observation: string): boolean {
  return !STATELESS_ENDINGS.some((e) => observation.includes(e));
}
