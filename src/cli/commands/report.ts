import { join } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../io.ts';

/** `trace-rl report RUN_DIR [RUN_DIR...] [--out FILE]`: one self-contained HTML report of the runs. */
export function register(program: Command): void {
  program
    .command('report')
    .description('write a self-contained HTML report (learning curves against cost, effective ratio, calibration, budget, rollout trees) of one or more runs')
    .argument('<run_dir...>', 'run folders (made by trace-rl train); runs of the same strategy are averaged over seeds')
    .option('--out <file>', 'HTML file to write (default: <first RUN_DIR>/report.html)')
    .action(async (runDirs: string[], opts: { out?: string }) => {
      // Loaded on use: the plotting libraries cost ~0.4 s at start-up, which every other command would pay.
      const { ReportError, formatHeadline, writeReport } = await import('../../report/index.ts');
      const out = opts.out ?? join(runDirs[0], 'report.html');
      try {
        const result = await writeReport({ runs: runDirs, out });
        process.stdout.write(formatHeadline(result) + '\n');
      } catch (e) {
        if (e instanceof ReportError) throw new UsageError(e.message);
        throw e;
      }
    });
}
