/**
 * How trace-rl's HTTP services are built, bounded and run: `createServerApp` (body limit, /health,
 * JSON 404 and errors), `readJson` (400 naming the field), `listen` → `RunningServer`.
 * docs/reliability.md lists every limit.
 */
export { createServerApp, nextTurn, readJson, type ServerAppOptions } from './app.ts';
export { errorBody, HttpError, jsonErrors, tooLarge, zodMessage, type ErrorBody } from './errors.ts';
export { listen, ServerStartError, type ListenOptions, type RunningServer } from './listen.ts';
export { controlGuard, controlToken, ControlTokenError, type ControlAccess } from './control.ts';
