/**
 * The tasks of a server environment (`env.tasks`, `env.testTasks`): what a session is reset with. A
 * task is a prompt id and the reset's parameters; `env.tasks` lists them (numbers: seeds for OpenEnv,
 * data indices for AgentGym; or {id, params}), gives a range of numbers, or names a JSON Lines file of
 * the same items. Bounded: at most MAX_TASKS in all. Each task's first observation becomes its prompt,
 * fetched once when the kind is built and kept on the prompt (`meta.remote`).
 */
import path from 'node:path';
import { z } from 'zod';
import type { Prompt, TurnCandidates } from '../../tree/types.ts';
import { readJsonLinesFile } from '../../util/bounded-read.ts';
import { UserError } from '../../util/user-error.ts';
import { EnvError } from '../errors.ts';

/** Most tasks a run may name (each costs one reset when the kind is built). */
export const MAX_TASKS = 100_000;

/** A prompt id: no `/` (node ids are paths) and no spaces. */
const taskId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^/\s]+$/, 'a task id has no "/" or spaces');

const taskItem = z.union([z.number().int().min(0), z.object({ id: taskId.optional(), params: z.record(z.string(), z.unknown()).default({}) }).strict()]);
export type TaskItem = z.output<typeof taskItem>;

export const tasksSchema = z
  .union([
    z.array(taskItem).min(1).max(MAX_TASKS),
    z
      .object({
        from: z
          .number()
          .int()
          .min(0)
          .describe('openenv, agentgym: tasks from ≤ n < to (OpenEnv seeds, AgentGym data indices); or give a list of numbers / {id, params}.'),
        to: z.number().int().min(1).describe('openenv, agentgym: the end of the range (excluded).'),
      })
      .strict()
      .refine((r) => r.to > r.from && r.to - r.from <= MAX_TASKS, { message: `from < to, at most ${MAX_TASKS} tasks` }),
    z
      .object({
        file: z
          .string()
          .min(1)
          .describe('openenv, agentgym: a JSON Lines file of tasks, one a line: a number or {"id": "...", "params": {...reset parameters}}.'),
      })
      .strict(),
  ])
  .describe(
    'Tasks (what each session is reset with): a list of numbers (OpenEnv seeds, AgentGym data indices) or {id, params} objects; {from, to} (numbers from ≤ n < to); or {file: tasks.jsonl} with one such item a line.',
  );
export type TasksSetting = z.output<typeof tasksSchema>;

/** A task as a session is reset with it. */
export interface Task {
  id: string;
  params: Record<string, unknown>;
}

/** What a server environment's prompt carries in `meta.remote`. */
export interface RemotePromptMeta {
  params: Record<string, unknown>;
  /** The first observation, exactly as the server sent it (what `render` shows the policy). */
  observation: string;
  /** Candidate actions the reset listed, if any. */
  candidates?: TurnCandidates;
}

/** The reset parameter a plain task's number goes into (`seed`, `data_idx`, or a server's own: env.taskField). */
export type NumberParam = string;

/** The tasks a setting names (a file is read relative to `baseDir`), ids checked unique. */
export function resolveTasks(setting: TasksSetting, numberParam: NumberParam, where: string, baseDir = process.cwd()): Task[] {
  let items: TaskItem[];
  if (Array.isArray(setting)) items = setting;
  else if ('from' in setting) items = Array.from({ length: setting.to - setting.from }, (_, i) => setting.from + i);
  else items = readTaskFile(path.resolve(baseDir, setting.file));
  const prefix = numberParam === 'seed' ? 'seed' : 'idx';
  const tasks = items.map((item): Task =>
    typeof item === 'number' ? { id: `${prefix}-${item}`, params: { [numberParam]: item } } : { id: item.id ?? taskIdOf(item.params), params: item.params },
  );
  const seen = new Set<string>();
  for (const t of tasks) {
    if (seen.has(t.id)) throw new UserError(`${where}: task id "${t.id}" appears twice; give each task its own id`);
    seen.add(t.id);
  }
  return tasks;
}

/** An id for a task given without one: its parameters, compact (must still be a valid id). */
function taskIdOf(params: Record<string, unknown>): string {
  const id = Object.entries(params)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(',');
  const ok = taskId.safeParse(id);
  if (!ok.success) throw new UserError(`a task without an id has parameters ${JSON.stringify(params).slice(0, 120)} that make no id; give it "id"`);
  return id;
}

function readTaskFile(file: string): TaskItem[] {
  const items: TaskItem[] = [];
  for (const line of readJsonLinesFile(file)) {
    if (line.error !== undefined) throw new UserError(`${file}:${line.line}: not JSON (${line.error})`);
    const item = taskItem.safeParse(line.value);
    if (!item.success)
      throw new UserError(`${file}:${line.line}: a task is a number or {"id": "...", "params": {...}} (${item.error.issues[0]?.message ?? 'bad shape'})`);
    items.push(item.data);
    if (items.length > MAX_TASKS) throw new UserError(`${file}: more than ${MAX_TASKS} tasks; split the run or give a range`);
  }
  if (items.length === 0) throw new UserError(`${file}: no tasks`);
  return items;
}

/**
 * The prompt of a task: its id, the question (the first observation, or the part after the last
 * `questionAfter` marker in it: what the predictor reads and the tree keeps), no gold answers (the
 * server's reward decides), and `meta.remote` (what render and reset need).
 */
export function taskPrompt(task: Task, first: { observation: string; candidates?: TurnCandidates }, dataset: string, questionAfter?: string): Prompt {
  let question = first.observation;
  if (questionAfter !== undefined) {
    const at = first.observation.lastIndexOf(questionAfter);
    if (at >= 0) question = first.observation.slice(at + questionAfter.length).trim();
  }
  const remote: RemotePromptMeta = { params: task.params, observation: first.observation, ...(first.candidates ? { candidates: first.candidates } : {}) };
  return { id: task.id, question, answers: [], meta: { remote, dataset } };
}

/** A server environment's prompt's task (its reset parameters and first observation). */
export function taskOf(prompt: Prompt): RemotePromptMeta {
  const m = prompt.meta?.remote as RemotePromptMeta | undefined;
  if (!m || typeof m.observation !== 'string') throw new EnvError(`prompt ${prompt.id} is not a server environment's task (no meta.remote)`);
  return m;
}
