import type { Command } from 'commander';
import { register as advantages } from './advantages.ts';
import { register as report } from './report.ts';
import { register as score } from './score.ts';
import { register as retriever } from './retriever.ts';
import { register as solve } from './solve.ts';
import { register as demoAllocate } from './demo-allocate.ts';
import { register as train } from './train.ts';
import { register as compare } from './compare.ts';
import { register as config } from './config.ts';
import { register as exportCommand } from './export.ts';
import { register as rollout } from './rollout.ts';
import { register as serve } from './serve.ts';
import { register as faults } from './faults.ts';
import { register as grade } from './grade.ts';

/** Every subcommand registers itself on the program; one line per command module. */
export const commands: Array<(program: Command) => void> = [
  advantages,
  report,
  score,
  retriever,
  solve,
  demoAllocate,
  train,
  compare,
  config,
  exportCommand,
  rollout,
  serve,
  faults,
  grade,
];
