/**
 * Each task's first observation (its prompt, and the candidates its reset listed), fetched once when a
 * server kind is built: one session per task, reset, closed, `sessions` at a time per server, the tasks
 * dealt round-robin over the servers of a fleet (env.url a list), each retry on the next server.
 *
 * One bad task does not end the run: a task the server refuses (an HTTP error such as FastAPI's 422,
 * an `{"error": …}` answer, an answer of the wrong shape) is skipped and counted, and stderr names it
 * with the server's own complaint. The build fails, in one line, only when no training task is left,
 * or when the server cannot be reached at all (a refused connection fails every task alike). A full
 * server (CAPACITY_REACHED) is passed for the next one of a fleet and waited out (CapacityWait) once
 * every server was full; a dropped connection is retried with backoff, on the next server.
 */
import type { TurnCandidates } from '../../tree/types.ts';
import { sleep } from '../../util/sleep.ts';
import { replyInfo, RemoteProtocolError, RemoteServerError } from './reply.ts';
import { CapacityWait, isCapacityRefusal, SessionLost, type RemoteServer } from './session.ts';
import type { Task } from './tasks.ts';

export interface FirstObservation {
  observation: string;
  candidates?: TurnCandidates;
}

/** A task the server refused at setup, and why (the message names the server and the task). */
export interface RefusedTask {
  task: Task;
  message: string;
}

/** Attempts at one task's session while the server is full or the connection drops. */
const ATTEMPTS = 4;
const FIRST_DELAY_MS = 250;

/** The first observation of every task the server accepts (in the tasks' order), and the refused ones. */
export async function firstObservations(
  servers: readonly RemoteServer[],
  tasks: readonly Task[],
  sessions: number,
  timeoutMs: number,
): Promise<{ accepted: Array<{ task: Task; first: FirstObservation }>; refused: RefusedTask[] }> {
  const out: Array<FirstObservation | RefusedTask> = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await firstObservation(servers, i, tasks[i]!, timeoutMs);
    }
  };
  await Promise.all(Array.from({ length: Math.min(sessions * servers.length, tasks.length) }, worker));
  const accepted: Array<{ task: Task; first: FirstObservation }> = [];
  const refused: RefusedTask[] = [];
  out.forEach((r, i) => ('task' in r ? refused.push(r) : accepted.push({ task: tasks[i]!, first: r })));
  return { accepted, refused };
}

/**
 * One task's first observation, or its refusal; a server that cannot be reached throws (SessionLost).
 * The i-th task starts on server i mod n; each retry goes to the next server.
 */
async function firstObservation(servers: readonly RemoteServer[], i: number, task: Task, timeoutMs: number): Promise<FirstObservation | RefusedTask> {
  const full = new CapacityWait(timeoutMs, FIRST_DELAY_MS);
  /** Servers found full in a row (all of them: wait). */
  let fullInRow = 0;
  for (let attempt = 1, k = i; ; k++) {
    const server = servers[k % servers.length]!;
    const where = `${server.protocol} server ${server.url} (task "${task.id}")`;
    let session;
    try {
      session = await server.open();
      const reply = await session.reset(task.params);
      const info = replyInfo(reply.info, where);
      return { observation: reply.observation, ...(info.candidates ? { candidates: info.candidates } : {}) };
    } catch (e) {
      // A full server: the next one is tried; when all were full, they are waited out (bounded).
      if (isCapacityRefusal(e)) {
        if (++fullInRow < servers.length) continue;
        fullInRow = 0;
        if (await full.next()) continue;
        throw new RemoteServerError(
          `${where}: the server${servers.length > 1 ? 's' : ''} stayed full for ${full.bound}: ${(e as Error).message}`,
          'CAPACITY_REACHED',
        );
      }
      fullInRow = 0;
      // A dropped connection is retried a few times, each on the next server.
      if (e instanceof SessionLost && attempt < ATTEMPTS) {
        await sleep(FIRST_DELAY_MS * 2 ** (attempt++ - 1));
        continue;
      }
      const message = `${where}: the task's first observation: ${(e as Error).message}`;
      if (e instanceof SessionLost) throw new SessionLost(message);
      if (e instanceof RemoteServerError || e instanceof RemoteProtocolError) return { task, message };
      throw e;
    } finally {
      await session?.close();
    }
  }
}

/** How many refused tasks stderr names one by one (the rest are counted). */
const NAMED = 3;

/** The one line that counts and names the refused tasks (their messages carry the server's complaints). */
export function refusedTasksLine(refused: readonly RefusedTask[], of: number, where: string): string {
  const named = refused
    .slice(0, NAMED)
    .map((r) => r.message)
    .join('; ');
  const more = refused.length > NAMED ? `; and ${refused.length - NAMED} more` : '';
  return `${where}: ${refused.length} of ${of} tasks refused by the server at setup and skipped: ${named}${more}`;
}
