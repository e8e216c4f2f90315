/**
 * One benchmark run in its own process: `train()` from src/train on a run folder (new with a config
 * file, or resumed). Driving the library directly keeps the bench independent of the CLI's flags.
 * Usage: node --import tsx bench/compare/worker.ts <run-dir> [config.json]
 */
import { readFileSync } from 'node:fs';
import { train } from '../../src/train/index.ts';
// The lab's strategies (plugins) register before the configuration is parsed, so their names parse here.
import '../../lab/index.ts';

const [dir, configFile] = process.argv.slice(2);
if (!dir) throw new Error('usage: worker.ts <run-dir> [config.json]');
const outcome = await train({
  out: dir,
  ...(configFile ? { config: JSON.parse(readFileSync(configFile, 'utf8')) as unknown } : { resume: true }),
  clock: () => performance.now(),
});
if (outcome.status === 'stopped') process.exitCode = 1;
