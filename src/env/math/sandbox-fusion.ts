/**
 * The `url` code tool: an HTTP sandbox speaking SandboxFusion's `POST /run_code` API (the sandbox
 * verl users deploy). Request `{code, language: "python", run_timeout, memory_limit_MB}`; response
 * `{status: "Success" | "Failed" | "SandboxError", message, run_result: {status: "Finished" |
 * "TimeLimitExceeded" | …, return_code, stdout, stderr, execution_time}}`. A `Failed` run is the
 * cell's own error (a traceback on stderr); network errors, HTTP 5xx/429 and `SandboxError` are
 * retried with exponential back-off, and after the last attempt become a `sandbox_error` result,
 * which the environment records as a turn error. Each request is a fresh program, so a cell with a
 * history is sent after a prelude that first runs the earlier cells with their output discarded.
 */
import { cutToBytes, DEFAULT_CODE_LIMITS, limitMessage, type CodeLimits, type CodeResult, type CodeRunOptions, type CodeTool } from './code-tool.ts';

export interface SandboxFusionOptions extends Partial<CodeLimits> {
  /** Base URL of the sandbox, e.g. http://localhost:8080 (`/run_code` is appended). */
  url: string;
  /** Attempts per cell (1 = no retry). Default 3. */
  attempts?: number;
  /** First back-off delay, doubled per retry (ms). Default 500. */
  backoffMs?: number;
  /** Time allowed for one HTTP request beyond the cell's own time limit (ms). Default 10000. */
  requestSlackMs?: number;
  /** Injected for tests; defaults to setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

interface RunCodeResponse {
  status?: string;
  message?: string;
  run_result?: { status?: string; return_code?: number | null; stdout?: string; stderr?: string; execution_time?: number } | null;
}

/** A reply that is worth retrying (the sandbox's fault, not the cell's). */
class TransientError extends Error {}

export class SandboxFusionTool implements CodeTool {
  readonly name = 'sandbox-fusion';
  readonly limits: CodeLimits;
  private readonly endpoint: string;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly slackMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: SandboxFusionOptions) {
    this.limits = {
      timeoutMs: options.timeoutMs ?? DEFAULT_CODE_LIMITS.timeoutMs,
      memoryMb: options.memoryMb ?? DEFAULT_CODE_LIMITS.memoryMb,
      outputBytes: options.outputBytes ?? DEFAULT_CODE_LIMITS.outputBytes,
    };
    this.endpoint = options.url.replace(/\/+$/, '') + '/run_code';
    this.attempts = Math.max(1, options.attempts ?? 3);
    this.backoffMs = options.backoffMs ?? 500;
    this.slackMs = options.requestSlackMs ?? 10000;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  async run(code: string, options: CodeRunOptions = {}): Promise<CodeResult> {
    code = withHistory(code, options.history ?? []);
    let last = '';
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      if (attempt > 0) await this.sleep(this.backoffMs * 2 ** (attempt - 1));
      if (options.signal?.aborted) throw options.signal.reason;
      try {
        return this.toResult(await this.request(code, options.signal));
      } catch (e) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (!(e instanceof TransientError)) throw e;
        last = e.message;
      }
    }
    return { status: 'sandbox_error', stdout: '', stderr: '', error: `code sandbox ${this.endpoint} failed after ${this.attempts} attempts: ${last}`, ms: 0 };
  }

  async close(): Promise<void> {}

  private async request(code: string, signal?: AbortSignal): Promise<RunCodeResponse> {
    const timeout = AbortSignal.timeout(this.limits.timeoutMs + this.slackMs);
    const body = { code, language: 'python', run_timeout: this.limits.timeoutMs / 1000, memory_limit_MB: this.limits.memoryMb };
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (e) {
      throw new TransientError(timeout.aborted ? `no reply within ${this.limits.timeoutMs + this.slackMs} ms` : `request failed: ${(e as Error).message}`);
    }
    const text = await res.text().catch(() => '');
    if (res.status >= 500 || res.status === 429) throw new TransientError(`HTTP ${res.status}`);
    if (!res.ok) return { status: 'SandboxError', message: `HTTP ${res.status}: ${text.slice(0, 200)}` };
    let json: RunCodeResponse;
    try {
      json = JSON.parse(text) as RunCodeResponse;
    } catch {
      throw new TransientError('reply is not JSON');
    }
    if (json.status === 'SandboxError') throw new TransientError(`SandboxError: ${json.message ?? ''}`);
    return json;
  }

  private toResult(r: RunCodeResponse): CodeResult {
    const run = r.run_result;
    if (!run)
      return {
        status: 'sandbox_error',
        stdout: '',
        stderr: '',
        error: `code sandbox ${this.endpoint}: ${r.status ?? 'no status'} without run_result ${r.message ?? ''}`.trim(),
        ms: 0,
      };
    const ms = (run.execution_time ?? 0) * 1000;
    // stdout and stderr together within outputBytes, as the pyodide tool keeps them (the server's reply
    // may hold any amount).
    const stdout = cutToBytes(run.stdout ?? '', this.limits.outputBytes);
    const stderr = cutToBytes(run.stderr ?? '', this.limits.outputBytes - Buffer.byteLength(stdout));
    const over = stdout !== (run.stdout ?? '') || stderr !== (run.stderr ?? '');
    if (run.status === 'TimeLimitExceeded') return { status: 'timeout', stdout, stderr, error: limitMessage('timeout', this.limits), ms };
    if (/MemoryError/.test(stderr) && r.status === 'Failed') return { status: 'memory', stdout, stderr: '', error: limitMessage('memory', this.limits), ms };
    if (over) return { status: 'output_limit', stdout, stderr, error: limitMessage('output_limit', this.limits), ms };
    if (r.status === 'Failed' || (run.return_code ?? 0) !== 0) {
      // The traceback is on stderr; keep it there and name no extra error.
      return { status: 'error', stdout, stderr, ms };
    }
    return { status: 'ok', stdout, stderr, ms };
  }
}

/**
 * The program that runs `code` after `history` (each earlier cell in the same globals, its output
 * and errors discarded), so that a stateless sandbox gives the cell its trajectory's state. The cells
 * travel as base64, so no cell text can break out of the prelude's string literals.
 */
export function withHistory(code: string, history: readonly string[]): string {
  if (history.length === 0) return code;
  const b64 = (s: string) => JSON.stringify(Buffer.from(s, 'utf8').toString('base64'));
  return [
    'import base64 as _b64, contextlib as _ctx, io as _io',
    `for _cell in [${history.map(b64).join(', ')}]:`,
    '    try:',
    '        with _ctx.redirect_stdout(_io.StringIO()), _ctx.redirect_stderr(_io.StringIO()):',
    "            exec(compile(_b64.b64decode(_cell).decode('utf-8'), '<cell>', 'exec'), globals())",
    '    except BaseException:',
    '        pass',
    'del _b64, _ctx, _io, _cell',
    `exec(compile(__import__('base64').b64decode(${b64(code)}).decode('utf-8'), '<cell>', 'exec'), globals())`,
  ].join('\n');
}
