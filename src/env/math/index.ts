/**
 * Math with a code interpreter: the code tool (pyodide workers or a SandboxFusion server),
 * the answer grader, the tool-integrated reasoning protocols, the multi-turn environment, the math
 * datasets, and the synthetic trainable math world.
 */
export * from './code-tool.ts';
export * from './pyodide-tool.ts';
export * from './sandbox-fusion.ts';
export * from './grader.ts';
export * from './protocol.ts';
export * from './math-env.ts';
export * from './datasets.ts';
export * from './create-tool.ts';
export * from './world/index.ts';
