/**
 * A local Atropos trajectory API, written here from the API's documentation (atroposlib/api/README.md
 * and the docstrings of its batching helpers; docs/atropos.md lists what each rule rests on) and held
 * to the request/response vectors recorded from the real server (test/servers/vectors/atropos-api.json).
 * Tests run `trace-rl rollout --atropos` against it and play the trainer's side over HTTP.
 *
 * What it does, as documented:
 * - `POST /register` (the trainer) sets batch size, max length and the step counter, once; data that
 *   arrived before it leaves that state unset (recorded: /batch then refuses, /info says -1).
 * - `POST /register-env` answers "wait for trainer to start" until the trainer's first `GET /batch`.
 * - `POST /scored_data` / `/scored_data_list` queue groups; a group with an env id whose size differs
 *   from that environment's registered group size waits in a buffer until buffered groups add up to it.
 * - `GET /batch` forms batches of exactly batch_size sequences from whole groups: equal-size groups are
 *   packed until a pack holds as many sequences as the largest queued group, and packs are taken in
 *   queue order; all batches that can be formed are formed at once (each advances the step counter)
 *   and handed out one per call.
 * Not here: minimum batch allocations, `/status-env`'s weights, W&B, gzip request bodies.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AtroposApiOptions {
  /** Refuse requests without `Authorization: Bearer <key>` (401), as an authenticating proxy would. */
  key?: string;
  /** Largest request body (default 64 MiB; 413 past it). */
  maxBodyBytes?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization?: string;
  body?: unknown;
}

type Group = Record<string, unknown> & { tokens: number[][] };

export interface AtroposApi {
  url: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  /** Groups taken into the queue (after buffering), in arrival order. */
  accepted: Group[];
  close(): Promise<void>;
}

const GROUP_FIELDS = [
  'tokens',
  'masks',
  'scores',
  'advantages',
  'ref_logprobs',
  'messages',
  'generation_params',
  'inference_logprobs',
  'overrides',
  'group_overrides',
  'images',
  'env_id',
  'distill_token_ids',
  'distill_logprobs',
] as const;

interface Trainer {
  batchSize: number;
  maxTokenLen: number;
  group: string;
  project: string;
  checkpointDir: string;
  checkpointInterval: number;
  numSteps: number;
}

interface Env {
  name: string;
  groupSize: number;
  connected: boolean;
}

class Invalid extends Error {
  constructor(
    readonly loc: (string | number)[],
    message: string,
    readonly kind: string,
  ) {
    super(message);
  }
}

export async function startAtroposApi(options: AtroposApiOptions = {}): Promise<AtroposApi> {
  const maxBody = options.maxBodyBytes ?? 64 << 20;
  const requests: RecordedRequest[] = [];
  const accepted: Group[] = [];
  // State that exists once data or a trainer arrived; reset_data clears all of it.
  let queue: Group[] | undefined;
  let trainer: Trainer | undefined;
  let started = false;
  let step = 0;
  let formed: Group[][] = [];
  let envs: Env[] = [];
  let buffers = new Map<number, Group[]>();
  let latest: Group | undefined;

  const enqueue = (g: Group) => {
    (queue ??= []).push(g);
    accepted.push(g);
    latest = g;
  };

  const take = (g: Group): Record<string, unknown> => {
    const envId = g.env_id;
    const env = typeof envId === 'number' ? envs[envId] : undefined;
    queue ??= [];
    if (env && g.tokens.length !== env.groupSize) {
      const buffer = buffers.get(envId as number) ?? [];
      buffers.set(envId as number, buffer);
      buffer.push(g);
      const chosen = subsetSumming(
        buffer.map((b) => b.tokens.length),
        env.groupSize,
      );
      for (const i of chosen) enqueue(buffer[i]!);
      const chosenSet = new Set(chosen);
      buffers.set(
        envId as number,
        buffer.filter((_, i) => !chosenSet.has(i)),
      );
      return { status: 'buffered', buffer_size: buffers.get(envId as number)!.reduce((n, b) => n + b.tokens.length, 0) };
    }
    enqueue(g);
    return { status: 'received' };
  };

  const routes: Record<string, (body: unknown) => { status?: number; json?: unknown; text?: string }> = {
    'GET /': () => ({ json: { message: 'AtroposLib API' } }),
    'POST /register': (body) => {
      const r = object(body, [], {
        wandb_group: 'str',
        wandb_project: 'str',
        batch_size: 'int',
        max_token_len: 'int',
        checkpoint_dir: 'str',
        save_checkpoint_interval: 'int',
        starting_step: 'int',
        num_steps: 'int',
      });
      if (queue === undefined) {
        queue = [];
        trainer = {
          batchSize: r.batch_size as number,
          maxTokenLen: r.max_token_len as number,
          group: r.wandb_group as string,
          project: r.wandb_project as string,
          checkpointDir: r.checkpoint_dir as string,
          checkpointInterval: r.save_checkpoint_interval as number,
          numSteps: r.num_steps as number,
        };
        step = r.starting_step as number;
        started = false;
        formed = [];
        envs = [];
        buffers = new Map();
      }
      return { json: { uuid: randomUuidInt() } };
    },
    'GET /info': () => ({ json: trainer ? { batch_size: trainer.batchSize, max_token_len: trainer.maxTokenLen } : { batch_size: -1, max_token_len: -1 } }),
    'GET /wandb_info': () => ({ json: trainer ? { group: trainer.group, project: trainer.project } : { group: null, project: null } }),
    'GET /status': () => ({ json: trainer && queue ? { current_step: step, queue_size: queue.length } : { current_step: 0, queue_size: 0 } }),
    'POST /register-env': (body) => {
      const r = object(body, [], { max_token_length: 'int', desired_name: 'str', weight: 'num', group_size: 'int', min_batch_allocation: 'num?' });
      if (!trainer || !started) return { json: { status: 'wait for trainer to start' } };
      const name = r.desired_name as string;
      const id = envs.length;
      const wandbName = `${name}_${envs.filter((e) => e.name === name).length}`;
      envs.push({ name, groupSize: r.group_size as number, connected: true });
      return {
        json: {
          status: 'success',
          env_id: id,
          wandb_name: wandbName,
          checkpoint_dir: trainer.checkpointDir,
          starting_step: step,
          checkpoint_interval: trainer.checkpointInterval,
          num_steps: trainer.numSteps,
        },
      };
    },
    'POST /disconnect-env': (body) => {
      const r = object(body, [], { env_id: 'int' });
      const env = envs[r.env_id as number];
      if (!env) return { json: { status: 'failure', error: 'list index out of range' } };
      env.connected = false;
      return { json: { status: 'success' } };
    },
    'POST /scored_data': (body) => ({ json: take(scoredData(body, [])) }),
    'POST /scored_data_list': (body) => {
      if (!Array.isArray(body)) throw new Invalid(['body'], 'value is not a valid list', 'type_error.list');
      const groups = body.map((g, i) => scoredData(g, [i]));
      let buffered = 0;
      let lastBufferSize: number | undefined;
      for (const g of groups) {
        const r = take(g);
        if (r.status === 'buffered') {
          buffered++;
          lastBufferSize = r.buffer_size as number;
        }
      }
      return {
        json: {
          status: 'received',
          groups_processed: groups.length,
          ...(buffered ? { buffered, ...(lastBufferSize !== undefined ? { last_buffer_size: lastBufferSize } : {}) } : {}),
        },
      };
    },
    'GET /batch': () => {
      if (!trainer || !queue) return { json: { status: 'error', message: 'Trainer not registered. Call /register first.', batch: [] } };
      started = true;
      if (formed.length > 0) return { json: { batch: formed.shift()! } };
      for (;;) {
        const batch = formBatch(queue, trainer.batchSize);
        if (!batch) break;
        const takenSet = new Set(batch);
        queue = queue.filter((g) => !takenSet.has(g));
        formed.push(batch);
        step++;
      }
      return { json: { batch: formed.shift() ?? null } };
    },
    'GET /latest_example': () => ({
      json: latest ?? {
        tokens: [],
        masks: [],
        scores: [],
        advantages: [],
        ref_logprobs: [],
        generation_params: [],
        inference_logprobs: [],
        messages: [],
        images: [],
      },
    }),
    'GET /reset_data': () => {
      queue = undefined;
      trainer = undefined;
      started = false;
      step = 0;
      formed = [];
      envs = [];
      buffers = new Map();
      return { text: 'Reset successful' };
    },
  };

  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBody) return send(res, 413, { detail: `request body over ${maxBody} bytes` });
      chunks.push(chunk);
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        return send(res, 422, { detail: [{ loc: ['body'], msg: 'value is not a valid dict', type: 'type_error.dict' }] });
      }
    }
    const authorization = req.headers.authorization;
    requests.push({ method: req.method ?? 'GET', path, ...(authorization ? { authorization } : {}), ...(body !== undefined ? { body } : {}) });
    if (options.key !== undefined && authorization !== `Bearer ${options.key}`) return send(res, 401, { detail: 'Unauthorized' });
    const route = routes[`${req.method} ${path}`];
    if (!route) return send(res, 404, { detail: 'Not Found' });
    try {
      const out = route(body);
      if (out.text !== undefined) {
        res.writeHead(out.status ?? 200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(out.text);
        return;
      }
      send(res, out.status ?? 200, out.json);
    } catch (e) {
      if (e instanceof Invalid) return send(res, 422, { detail: [{ loc: ['body', ...e.loc], msg: e.message, type: e.kind }] });
      send(res, 500, { detail: String(e) });
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    accepted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, json: unknown): void {
  // The registration's uuid is a 128-bit integer: written as digits, as Python's JSON does.
  const text = JSON.stringify(json, (_, v: unknown) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(\d+)@@"/g, '$1');
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

function randomUuidInt(): bigint {
  const hex = crypto.randomUUID().replace(/-/g, '');
  return BigInt(`0x${hex}`);
}

type FieldKind = 'str' | 'int' | 'num' | 'num?';

/** A JSON object with the given fields (a `?` kind may be missing or null); 422-style errors otherwise. */
function object(body: unknown, loc: (string | number)[], fields: Record<string, FieldKind>): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Invalid(loc, 'value is not a valid dict', 'type_error.dict');
  const r = body as Record<string, unknown>;
  for (const [name, kind] of Object.entries(fields)) {
    const v = r[name];
    if (kind.endsWith('?') && (v === undefined || v === null)) continue;
    if (v === undefined) throw new Invalid([...loc, name], 'field required', 'value_error.missing');
    const ok = kind === 'str' ? typeof v === 'string' : kind === 'int' ? Number.isInteger(v) : typeof v === 'number';
    if (!ok) throw new Invalid([...loc, name], `value is not a valid ${kind === 'str' ? 'string' : kind === 'int' ? 'integer' : 'float'}`, 'type_error');
  }
  return r;
}

/** A ScoredData body: required tokens, masks, scores; optional per-sequence lists; messages need role and content. */
function scoredData(body: unknown, loc: (string | number)[]): Group {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Invalid(loc, 'value is not a valid dict', 'type_error.dict');
  const r = body as Record<string, unknown>;
  const intLists = (name: string, required: boolean) => {
    const v = r[name];
    if (v === undefined || v === null) {
      if (required) throw new Invalid([...loc, name], 'field required', 'value_error.missing');
      return;
    }
    if (!Array.isArray(v) || !v.every((x) => Array.isArray(x) && x.every((y) => Number.isInteger(y))))
      throw new Invalid([...loc, name], 'value is not a valid list of integer lists', 'type_error.list');
  };
  const numLists = (name: string) => {
    const v = r[name];
    if (v === undefined || v === null) return;
    if (!Array.isArray(v) || !v.every((x) => Array.isArray(x) && x.every((y) => typeof y === 'number')))
      throw new Invalid([...loc, name], 'value is not a valid list of number lists', 'type_error.list');
  };
  intLists('tokens', true);
  intLists('masks', true);
  if (r.scores === undefined || r.scores === null) throw new Invalid([...loc, 'scores'], 'field required', 'value_error.missing');
  if (!Array.isArray(r.scores) || !r.scores.every((s) => typeof s === 'number'))
    throw new Invalid([...loc, 'scores'], 'value is not a valid list of numbers', 'type_error.list');
  for (const name of ['advantages', 'ref_logprobs', 'inference_logprobs']) numLists(name);
  if (r.messages !== undefined && r.messages !== null) {
    const ok =
      Array.isArray(r.messages) &&
      r.messages.every((list) => Array.isArray(list) && list.every((m) => typeof m === 'object' && m !== null && 'role' in m && 'content' in m));
    if (!ok) throw new Invalid([...loc, 'messages'], "Message must have 'role' and 'content' fields", 'value_error');
  }
  if (r.env_id !== undefined && r.env_id !== null && !Number.isInteger(r.env_id))
    throw new Invalid([...loc, 'env_id'], 'value is not a valid integer', 'type_error.integer');
  const group: Record<string, unknown> = {};
  for (const f of GROUP_FIELDS) group[f] = r[f] ?? null;
  return group as Group;
}

/** Indices of groups whose sizes add up to `target`: first in queue order, else any combination (earliest preferred); none when impossible. */
function subsetSumming(sizes: readonly number[], target: number): number[] {
  const fifo: number[] = [];
  let sum = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (sum + sizes[i]! > target) continue;
    fifo.push(i);
    sum += sizes[i]!;
    if (sum === target) return fifo;
  }
  // reach[i][s]: some of the first i groups add up to s.
  const reach: boolean[][] = [new Array<boolean>(target + 1).fill(false)];
  reach[0]![0] = true;
  for (let i = 1; i <= sizes.length; i++) {
    const prev = reach[i - 1]!;
    const row = [...prev];
    for (let s = sizes[i - 1]!; s <= target; s++) row[s] ||= prev[s - sizes[i - 1]!]!;
    reach.push(row);
  }
  if (!reach[sizes.length]![target]) return [];
  const chosen: number[] = [];
  let s = target;
  for (let i = sizes.length; i > 0 && s > 0; i--) {
    if (s >= sizes[i - 1]! && reach[i - 1]![s - sizes[i - 1]!]) {
      chosen.push(i - 1);
      s -= sizes[i - 1]!;
    }
  }
  return chosen.sort((a, b) => a - b);
}

/**
 * One batch of exactly `batchSize` sequences from whole groups, or none: equal-size groups are gathered
 * (in queue order) into packs holding as many sequences as the largest queued group, and packs are
 * taken in the order they completed until the batch is full.
 */
function formBatch(queue: readonly Group[], batchSize: number): Group[] | undefined {
  const total = queue.reduce((n, g) => n + g.tokens.length, 0);
  if (queue.length === 0 || total < batchSize) return undefined;
  const largest = Math.max(...queue.map((g) => g.tokens.length));
  const open = new Map<number, Group[]>();
  const packed: Group[] = [];
  for (const g of queue) {
    const size = g.tokens.length;
    const pack = open.get(size) ?? [];
    pack.push(g);
    open.set(size, pack);
    if (pack.length * size === largest) {
      packed.push(...pack);
      open.set(size, []);
    }
  }
  const batch: Group[] = [];
  let n = 0;
  for (const g of packed) {
    batch.push(g);
    n += g.tokens.length;
    if (n === batchSize) return batch;
    if (n > batchSize) return undefined;
  }
  return undefined;
}
