/** The code tool's settings (env.math of kinds math and math-world), described once for both. */
import { z } from 'zod';

export const codeToolFields = {
  url: z.string().optional().describe('tool url only: base URL of the SandboxFusion server, e.g. http://localhost:8080.'),
  workers: z.number().int().min(1).default(1).describe('tool pyodide only: sandbox processes running cells in parallel (up to this).'),
  unsafeUnconfined: z
    .boolean()
    .default(false)
    .describe(
      "tool pyodide only: run model-written code WITHOUT the operating system's confinement (no bubblewrap, seccomp or resource limits; Node's permission model only), for machines that cannot confine it. Unsafe with any model output: prefer installing bubblewrap or env.math.tool url.",
    ),
  packagesDir: z
    .string()
    .optional()
    .describe('tool pyodide only: a directory of pure-Python packages (pip install --target DIR sympy mpmath) made importable in the sandbox.'),
  timeoutMs: z.number().int().min(100).default(5000).describe('Wall time per code cell (ms).'),
  memoryMb: z.number().int().min(32).default(256).describe('Python heap per interpreter (MB; pyodide) / memory_limit_MB sent to the url sandbox.'),
  replayMs: z
    .number()
    .int()
    .min(100)
    .optional()
    .describe(
      "tool pyodide only: wall time for replaying a trajectory's earlier cells in a fresh sandbox, all together (ms; default 2 × timeoutMs); past it the trajectory ends with reason replay_limit (metric code_replay_limited).",
    ),
  outputBytes: z
    .number()
    .int()
    .min(64)
    .default(16384)
    .describe(
      "bytes of a cell's output kept (printed text, value and error together); past it the output is cut with an OutputLimitError (printing past it stops the cell).",
    ),
};
export const toolDescription =
  "Code tool: pyodide (Python in WebAssembly, each trajectory in its own process confined by bubblewrap, seccomp and resource limits, offline; the default for math; docs/reliability.md), url (a SandboxFusion run_code server) or inline (math-world only, its default: the world's print(a op b) cells evaluated in-process with Python semantics).";
export const urlNeeded = (m: { tool?: string; url?: string }) => m.tool !== 'url' || m.url !== undefined;
export const urlError = { message: 'env.math.tool url needs env.math.url (the SandboxFusion base URL)', path: ['url'] };
