import type { Command } from 'commander';
import { z } from 'zod';
import { isSuccess, scoreAnswer, type SuccessRule } from '../../env/qa/qa-metrics.ts';
import { parseDecimal, readStdinRows, UsageError } from '../io.ts';

/**
 * `trace-rl score`: JSON lines `{"prediction": "...", "gold": "..." | ["...", ...]}` on stdin, one line
 * `{"em":0|1,"f1":x,"precision":x,"recall":x}` per input line on stdout (official HotpotQA metrics;
 * with several golds each metric is its maximum). `--success` adds `"success":0|1` by the chosen rule.
 * All lines are checked before anything is written: a bad line is one stderr message naming its
 * line number, exit 2, nothing on stdout.
 */
const row = z.object({ prediction: z.string(), gold: z.union([z.string(), z.array(z.string()).min(1)]) });

export function register(program: Command): void {
  program
    .command('score')
    .description('score predictions against gold answers (EM / F1 as the official HotpotQA evaluation), JSON lines in and out')
    .option('--success', 'add "success": 0|1 to each output line')
    .option('--rule <rule>', 'success rule: f1 (F1 ≥ threshold), em, or f1-or-em', 'f1')
    .option('--threshold <x>', 'F1 threshold for the f1 rules', '0.3')
    .action(async (opts: { success?: boolean; rule: string; threshold: string }) => {
      const rule = parseRule(opts.rule, opts.threshold);
      const rows = await readStdinRows(row, '{"prediction": string, "gold": string | string[]}');
      const out = rows.map((r) => {
        const s = scoreAnswer(r.prediction, r.gold);
        const base = { em: s.em, f1: s.f1, precision: s.precision, recall: s.recall };
        return JSON.stringify(opts.success ? { ...base, success: isSuccess(s, rule) ? 1 : 0 } : base);
      });
      if (out.length > 0) process.stdout.write(out.join('\n') + '\n');
    });
}

function parseRule(rule: string, threshold: string): SuccessRule {
  if (rule !== 'f1' && rule !== 'em' && rule !== 'f1-or-em') throw new UsageError(`--rule: "${rule}" is not one of f1, em, f1-or-em`);
  return { rule, threshold: parseDecimal('--threshold', threshold, { min: 0, max: 1 }) };
}
