import type { Command } from 'commander';
import { z } from 'zod';
import { DEMO_DEFAULTS, runAllocationDemo, type DemoRow, type Summary } from '../../allocate/index.ts';
import { formatZodError, UsageError, writeJson } from '../io.ts';

const positiveInt = z.coerce.number().int().positive();
const optionsSchema = z
  .object({
    prompts: positiveInt,
    budget: positiveInt,
    trials: positiveInt,
    seed: z.coerce.number().int().min(0),
    betaA: z.coerce.number().positive(),
    betaB: z.coerce.number().positive(),
    noise: z.coerce.number().min(0),
    min: z.coerce.number().int().min(2),
    max: z.coerce.number().int().min(2),
    json: z.boolean().default(false),
  })
  .refine((o) => o.max >= o.min, { message: 'must be ≥ --min', path: ['max'] })
  .refine((o) => o.budget <= o.prompts * o.max, { message: 'more rollouts than prompts × --max can take', path: ['budget'] });

/**
 * `trace-rl demo-allocate`: the allocation demo (src/allocate/demo/demo.ts) on the command line — grpo,
 * trace (noisy predictor) and oracle spend the same M bare rollouts; prints the effective ratio of each.
 */
export function register(program: Command): void {
  const d = DEMO_DEFAULTS;
  program
    .command('demo-allocate')
    .description('simulate root allocation: grpo vs trace (noisy predictor) vs oracle at equal cost; prints effective ratios')
    .option('--prompts <n>', 'prompts drawn per trial (the batch)', String(d.prompts))
    .option('--budget <M>', 'bare rollouts per trial', String(d.budget))
    .option('--trials <n>', 'independent trials', String(d.trials))
    .option('--seed <n>', 'random seed', String(d.seed))
    .option('--beta-a <a>', 'true success probabilities p ~ Beta(a, b)', String(d.a))
    .option('--beta-b <b>', 'see --beta-a', String(d.b))
    .option('--noise <sd>', 'predictor error: v = σ(logit p + sd·ε), ε ~ N(0, 1)', String(d.noise))
    .option('--min <m>', 'm_min for trace and oracle', String(d.min))
    .option('--max <m>', 'm_max for trace and oracle', String(d.max))
    .option('--json', 'print the summary as JSON instead of a table')
    .action((raw: Record<string, unknown>) => {
      const parsed = optionsSchema.safeParse(raw);
      if (!parsed.success)
        throw new UsageError(
          formatZodError(parsed.error, 'option').replace(/option\.(\w+)/g, (_, k: string) => '--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())),
        );
      const o = parsed.data;
      const result = runAllocationDemo({
        prompts: o.prompts,
        budget: o.budget,
        trials: o.trials,
        seed: o.seed,
        a: o.betaA,
        b: o.betaB,
        noise: o.noise,
        min: o.min,
        max: o.max,
      });
      if (o.json) return writeJson(result);
      process.stdout.write(render(result.options, result.rows));
    });
}

const pct = (s: Summary) => `${(100 * s.mean).toFixed(1)}% ± ${(100 * s.sd).toFixed(1)}`;
const num = (s: Summary) => `${s.mean.toFixed(1)} ± ${s.sd.toFixed(1)}`;

function render(o: ReturnType<typeof runAllocationDemo>['options'], rows: DemoRow[]): string {
  const header = ['strategy', `effective ratio (of ${o.prompts})`, 'mixed / selected', 'mixed groups', 'prompts selected', 'rollouts'];
  const body = rows.map((r) => [
    r.strategy,
    pct(r.effectiveRatio),
    pct(r.selectedRatio),
    num(r.mixedGroups),
    num(r.promptsSelected),
    r.rolloutsSpent.mean.toFixed(0),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [
    `${o.prompts} prompts per trial with true success probability p ~ Beta(${o.a}, ${o.b}); M = ${o.budget} bare rollouts (${(o.budget / o.prompts).toFixed(1)} per prompt); ${o.trials} trials, seed ${o.seed}.`,
    `grpo: uniform groups. trace: exact root solver on a noisy predictor v = σ(logit p + ${o.noise}·ε), ε ~ N(0, 1). oracle: the same solver on the true p. m ∈ {0} ∪ [${o.min}, ${o.max}].`,
    '',
    line(header),
    ...body.map(line),
    '',
    `effective ratio = prompts whose outcomes hold both a success and a failure / all ${o.prompts} prompts drawn; mean ± sd over trials.`,
    'mixed / selected divides by the prompts that received rollouts instead. Root phase only (no turns, no prefix expansion).',
    '',
  ].join('\n');
}
