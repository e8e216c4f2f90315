import cliProgress from 'cli-progress';
import type { LoopEvent } from '../train/index.ts';

/**
 * Live progress of a run: a bar on a terminal (step, phase, trajectories, reward, effective ratio),
 * one plain line per finished step otherwise (CI logs, pipes).
 */
export function progressReporter(options: { steps: number; label: string; stream?: NodeJS.WriteStream }) {
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
          payload.traj = e.progress.bareDone + e.progress.continuationDone;
          bar?.update(payload);
          break;
        case 'resumed':
          if (bar) bar.update(e.from, payload);
          else stream.write(`${options.label} resuming at step ${e.from}\n`);
          break;
        case 'step': {
          const m = e.metrics;
          payload.reward = fmt(m.reward_mean);
          payload.eff = fmt(m.effective_ratio);
          payload.phase = 'done';
          if (bar) bar.update(e.step + 1, payload);
          else {
            const acc = (m.test_accuracy !== undefined ? ` test_acc ${fmt(m.test_accuracy)}` : '') + (m.test_accuracy_sampled !== undefined ? ` sampled ${fmt(m.test_accuracy_sampled)}` : '');
            stream.write(`${options.label} step ${e.step + 1}/${options.steps} traj ${m.cost_trajectories} reward ${fmt(m.reward_mean)} eff ${fmt(m.effective_ratio)}${acc} (${Math.round(m.time_step_ms ?? 0)} ms)\n`);
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
