/** The synthetic math world: generated word problems, its environment and candidates, an in-process arithmetic tool, a scripted noisy policy. */
export * from './problems.ts';
export * from './inline-tool.ts';
export * from './math-world-env.ts';
