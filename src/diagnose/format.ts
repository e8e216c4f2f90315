import { promptCacheLine } from '../record/prompt-cache.ts';
import type { DepthRow } from './measure.ts';
import type { Diagnosis } from './run.ts';

/** What was diagnosed, for the table's header, the JSON object and the page. */
export interface DiagnosisAbout {
  env: string;
  policy: string;
  prompts: number;
  /** Sampled prompts left out because they do not fit the policy's context (the sample took others in their place); absent when none was. */
  skipped?: number;
  k: number;
  rollouts: number;
  maxTurns: number;
  seed: number;
}

/**
 * V(1 − V) bought per generated token by one continuation at depth t, relative to a fresh rollout at
 * the root: (contrast_t / tokens_t) / (contrast_0 / tokens_0). Above 1, a continuation there buys
 * more open contrast per token than a new bare rollout. Null where a term is missing or zero.
 */
export function perTokenVsRoot(row: DepthRow, rootRow: DepthRow | undefined): number | null {
  if (!rootRow || row.contrast === null || rootRow.contrast === null || !rootRow.contrast) return null;
  const t = row.cost.tokens;
  const t0 = rootRow.cost.tokens;
  if (!t || !t0) return null;
  return row.contrast / t / (rootRow.contrast / t0);
}

/** The one JSON object `--json` prints. */
export function diagnosisJson(d: Diagnosis, about: DiagnosisAbout) {
  const rootRow = d.rows.find((r) => r.depth === 0);
  return {
    ...about,
    estimator: 'unbiased: k/(k-1) * V(1-V) per prefix',
    depths: d.rows.map((r) => ({ ...r, perTokenVsRoot: perTokenVsRoot(r, rootRow) })),
    spend: {
      trajectories: d.spend.bare + d.spend.continuation,
      bare: d.spend.bare,
      continuations: d.spend.continuation,
      turns: d.spend.turns,
      tokens: d.spend.tokens,
      toolCalls: d.spend.toolCalls,
    },
    failed: d.failed,
    ...(d.replay ? { replay: d.replay } : {}),
    ...(d.engine ? { engine: d.engine } : {}),
    notes: shareNote(d, about),
  };
}

const fixed = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? 'n/a' : x.toFixed(digits));

/**
 * Why an open share above 1 is possible, when one is: the true share cannot exceed 1 (V is a
 * martingale, so E[V_t(1 − V_t)] = E[V_0(1 − V_0)] − E[(V_t − V_0)²]), but each V_t is estimated from k
 * trajectories and the share is a ratio of two noisy means, so noise alone can push it past 1.
 */
export function shareNote(d: Diagnosis, about: Pick<DiagnosisAbout, 'k' | 'prompts'>): string[] {
  const above = d.rows.filter((r) => r.share !== null && r.share > 1);
  if (above.length === 0) return [];
  const where = above.map((r) => `t = ${r.depth}: ${fixed(r.share)}`).join(', ');
  return [
    `open share above 1 (${where}) is sampling noise: the true share is at most 1 (E[V_t(1-V_t)] = E[V_0(1-V_0)] - E[(V_t - V_0)^2]), but each V_t is estimated from k = ${about.k} trajectories over ${about.prompts} prompts; read it as about 1 (this turn settles little), or raise --k / --prompts for a tighter estimate`,
  ];
}

/** The plain-text table: one row per depth, a header saying what was sampled and how V(1 − V) is estimated. */
export function formatDiagnosis(d: Diagnosis, about: DiagnosisAbout): string {
  const rootRow = d.rows.find((r) => r.depth === 0);
  const truth = d.rows.some((r) => r.trueContrast !== undefined);
  const head = [
    'depth',
    'prefixes',
    'ended',
    'mean V',
    'V(1-V)',
    ...(truth ? ['true V(1-V)'] : []),
    'open share',
    'entropy',
    'cont. traj',
    'turns',
    'tokens',
    'V(1-V)/token vs root',
  ];
  const rows = d.rows.map((r) => [
    String(r.depth),
    String(r.prefixes),
    String(r.ended),
    fixed(r.meanV),
    fixed(r.contrast),
    ...(truth ? [fixed(r.trueContrast)] : []),
    fixed(r.share),
    fixed(r.entropy),
    r.prefixes ? '1' : 'n/a',
    fixed(r.cost.turns, 2),
    fixed(r.cost.tokens, 1),
    fixed(perTokenVsRoot(r, rootRow), 2),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const s = d.spend;
  return [
    `diagnose: env ${about.env}, policy ${about.policy}: ${about.prompts} prompts${about.skipped ? ` (${about.skipped} skipped: too long for the policy's context)` : ''}, k = ${about.k} trajectories per prefix, ${about.rollouts} expanded rollout(s) per prompt, turn limit ${about.maxTurns}, seed ${about.seed}`,
    'V(1-V): mean over prefixes of the unbiased k/(k-1)·V̂(1-V̂); open share: E[V_t(1-V_t)] over every expanded rollout (ended ones count 0) / E[V_0(1-V_0)]; costs: mean per continuation from that depth (depth 0: a full rollout)',
    line(head),
    ...rows.map(line),
    ...shareNote(d, about),
    `spent: ${s.bare + s.continuation} trajectories (${s.bare} bare, ${s.continuation} continuations), ${s.turns} policy calls, ${s.tokens} generated tokens, ${s.toolCalls} tool calls${d.failed ? `; ${d.failed} trajectories failed after their retries (left out of every estimate)` : ''}`,
    ...(d.replay ? [replayLine(d.replay)] : []),
    ...(d.engine?.tinker_prompt_tokens !== undefined ? [promptCacheLine(d.engine)] : []),
  ].join('\n');
}

/** What restoring prefixes by replay (or fork) cost a server environment (outside the budget). */
export function replayLine(r: NonNullable<Diagnosis['replay']>): string {
  return `replay (outside the budget): ${r.restores} prefixes restored by replaying ${r.steps} environment steps${
    r.forks ? ` (${r.forks} of them by fork, no step replayed)` : ''
  } in ${(r.ms / 1000).toFixed(1)} s${
    r.mismatches ? `; ${r.mismatches} continuations skipped: their prefix replayed differently (the environment is not replay-deterministic)` : ''
  }`;
}
