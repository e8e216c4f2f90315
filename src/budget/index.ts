/** The budget ledger: trajectories, turns, tokens and tool calls, with hard caps. No I/O. */
export * from './ledger.ts';
export * from './units.ts';
export * from './admission.ts';
