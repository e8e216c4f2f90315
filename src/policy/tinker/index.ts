/** The Tinker training API: its wire format, a client, the `tinker` policy kind's policy and settings. */
export { TinkerClient, type TinkerClientOptions } from './client.ts';
export { TinkerPolicy, TinkerSnapshotError, type TinkerPolicyOptions, type TinkerSequence } from './tinker-policy.ts';
export { tinkerSettings, TINKER_API_KEY_VARIABLES, type TinkerSettings } from './settings.ts';
export { defaultEndOfTurn } from './end-of-turn.ts';
export * as tinkerWire from './wire.ts';
