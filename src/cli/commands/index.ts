import type { Command } from 'commander';

/** A subcommand module: it registers its command (options, help, action) on the program. */
export interface CommandModule {
  register(program: Command): void;
  /**
   * What the command prints when given no argument and no option, for a command whose bare output
   * depends on the code alone (`config`: the defaults). The build writes it into the command table
   * (../command-table.ts), which then answers the bare command as it answers help.
   */
  bareOutput?(): string;
}

/**
 * Every subcommand, by name, loaded only when it runs: `trace-rl solve` never pays for llama.cpp,
 * jax-js or vega. The built CLI answers help and refusals from its command table (../command-table.ts);
 * in a source checkout, or with --plugin, the top-level help (and a mistyped name, for commander's
 * suggestion) loads them all.
 */
export const commands: Record<string, () => Promise<CommandModule>> = {
  advantages: () => import('./advantages.ts'),
  report: () => import('./report.ts'),
  score: () => import('./score.ts'),
  retriever: () => import('./retriever.ts'),
  solve: () => import('./solve.ts'),
  'demo-allocate': () => import('./demo-allocate.ts'),
  train: () => import('./train.ts'),
  compare: () => import('./compare.ts'),
  config: () => import('./config.ts'),
  export: () => import('./export.ts'),
  rollout: () => import('./rollout.ts'),
  serve: () => import('./serve.ts'),
  faults: () => import('./faults.ts'),
  grade: () => import('./grade.ts'),
  bfcl: () => import('./bfcl.ts'),
  eval: () => import('./eval.ts'),
  diagnose: () => import('./diagnose.ts'),
  env: () => import('./env.ts'),
};

/** The bare outputs of the commands that declare one, by command name (for the command table). */
export async function bareOutputs(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, load] of Object.entries(commands)) {
    const module = await load();
    if (module.bareOutput) out[name] = module.bareOutput();
  }
  return out;
}
