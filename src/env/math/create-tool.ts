import type { CodeLimits, CodeTool } from './code-tool.ts';
import { PyodideCodeTool } from './pyodide-tool.ts';
import { SandboxFusionTool } from './sandbox-fusion.ts';

export interface CodeToolSettings extends CodeLimits {
  tool: 'pyodide' | 'url';
  url?: string;
  workers: number;
  packagesDir?: string;
  unsafeUnconfined?: boolean;
  replayMs?: number;
}

/** The code tool a configuration names (env.math in the run config). */
export function createCodeTool(s: CodeToolSettings): CodeTool {
  const limits = { timeoutMs: s.timeoutMs, memoryMb: s.memoryMb, outputBytes: s.outputBytes };
  if (s.tool === 'url') {
    if (!s.url) throw new RangeError('code tool url needs a url (the SandboxFusion base URL)');
    return new SandboxFusionTool({ url: s.url, ...limits });
  }
  return new PyodideCodeTool({ ...limits, workers: s.workers, packagesDir: s.packagesDir, unsafeUnconfined: s.unsafeUnconfined, replayMs: s.replayMs });
}
