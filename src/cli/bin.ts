/** The command's entry module: bin/trace-rl.js loads this (compiled in dist/, or the source in a checkout). */
import { main } from './main.ts';

await main(process.argv);
