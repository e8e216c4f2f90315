/**
 * Fault injection, for tests and for users rehearsing a run's failure handling: an OpenAI-compatible
 * server (or proxy in front of a real one) that fails a fraction of requests with 5xx, hangs, closed
 * connections, malformed or truncated JSON, or broken tool calls in the text; and an environment
 * wrapper whose tool calls throw or hang. Every draw is seeded. See docs/reliability.md.
 */
export { SERVER_FAULT_KINDS, faultPlanSchema, faultFor, type ServerFaultKind, type FaultPlan, type FaultPlanInput } from './fault-plan.ts';
export { DEFAULT_FAULT_BODY_BYTES, startFaultServer, upstreamBase, type FaultServer, type FaultServerOptions } from './fault-server.ts';
export { scriptedReply, BROKEN_TOOL_CALLS } from './scripted-reply.ts';
export { withToolFaults, InjectedToolError, TOOL_FAULT_KINDS, type ToolFaultKind, type ToolFaultOptions, type FaultyEnvironment } from './faulty-env.ts';
