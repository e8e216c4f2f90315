import cliProgress from 'cli-progress';
import type { LoopEvent } from '../train/index.ts';
import type { EngineEvent } from '../rollout/index.ts';

/**
 * Live progress of a run: a bar on a terminal (step, phase, trajectories, reward, effective ratio),
 * one plain line per finished step otherwise (CI logs, pipes).
 */
export function progressReporter(options: { steps: number; label: string; stream?: NodeJS.WriteStream; now?: () => number; linesEveryMs?: number }) {
  const stream = options.stream ?? process.stderr;
  // Runs started by `compare` share one terminal, so they print plain lines instead of fighting over a bar.
  const tty = Boolean(stream.isTTY) && !process.env.TRACE_RL_PLAIN_PROGRESS;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream,
          format: `${options.label} [{bar}] step {value}/{total} | {phase} | traj {traj} | reward {reward} | eff {eff}`,
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  // Without a bar, a long step (a remote server) also says how far it is, at most every linesEveryMs.
  let lastLine = options.now?.() ?? 0;
  let step = 0;
  const payload = { phase: 'starting', traj: 0, reward: '-', eff: '-' };
  const fmt = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(3));
  return {
    onEvent(e: LoopEvent) {
      if (bar && !started) {
        bar.start(options.steps, 0, payload);
        started = true;
      }
      switch (e.kind) {
        case 'phase':
          payload.phase = e.phase;
          bar?.update(payload);
          break;
        case 'trajectory':
        case 'workers':
          payload.traj = e.progress.bareDone + e.progress.continuationDone;
          bar?.update(payload);
          if (!bar && options.linesEveryMs !== undefined && options.now && options.now() - lastLine >= options.linesEveryMs) {
            lastLine = options.now();
            const p = e.progress;
            stream.write(
              `${options.label} step ${step + 1}/${options.steps}: ${payload.traj}/${p.barePlanned + p.continuationPlanned} trajectories, ${p.turns} policy calls, ${p.failed} failed\n`,
            );
          }
          break;
        case 'resumed':
          step = e.from;
          if (bar) bar.update(e.from, payload);
          else stream.write(`${options.label} resuming at step ${e.from}\n`);
          break;
        case 'step': {
          step = e.step + 1;
          const m = e.metrics;
          payload.reward = fmt(m.reward_mean);
          payload.eff = fmt(m.effective_ratio);
          payload.phase = 'done';
          if (bar) bar.update(e.step + 1, payload);
          else {
            const acc =
              (m.test_accuracy !== undefined ? ` test_acc ${fmt(m.test_accuracy)}` : '') +
              (m.test_accuracy_sampled !== undefined ? ` sampled ${fmt(m.test_accuracy_sampled)}` : '');
            stream.write(
              `${options.label} step ${e.step + 1}/${options.steps} traj ${m.cost_trajectories} reward ${fmt(m.reward_mean)} eff ${fmt(m.effective_ratio)}${acc} (${Math.round(m.time_step_ms ?? 0)} ms)\n`,
            );
          }
          break;
        }
        default:
          break;
      }
    },
    stop() {
      if (started) bar?.stop();
    },
  };
}

/**
 * Live progress of one engine step outside training (`trace-rl diagnose`): trajectories finished of
 * those planned so far (continuations are planned as each prompt's bare rollouts finish, so the total
 * grows), and policy calls. A bar on a terminal, a plain line every 5 s otherwise.
 */
export function engineProgress(options: { label: string; stream?: NodeJS.WriteStream; now: () => number }) {
  const stream = options.stream ?? process.stderr;
  const tty = Boolean(stream.isTTY) && !process.env.TRACE_RL_PLAIN_PROGRESS;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream,
          format: `${options.label} [{bar}] {value}/{total} trajectories | {turns} policy calls | {failed} failed`,
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  let last = options.now();
  let said = '';
  return {
    onEvent(e: EngineEvent) {
      const p = e.progress;
      const done = p.bareDone + p.continuationDone;
      const planned = p.barePlanned + p.continuationPlanned;
      const payload = { turns: p.turns, failed: p.failed };
      if (bar) {
        if (!started) {
          bar.start(Math.max(1, planned), done, payload);
          started = true;
        }
        bar.setTotal(Math.max(1, planned));
        bar.update(done, payload);
      } else if (e.kind === 'done' || options.now() - last > 5000) {
        const line = `${options.label}: ${done}/${planned} trajectories, ${p.turns} policy calls, ${p.failed} failed\n`;
        // The last trajectory and the step's end carry the same counts: say them once.
        if (line !== said) stream.write(line);
        said = line;
        last = options.now();
      }
    },
    stop() {
      if (started) bar?.stop();
    },
  };
}
