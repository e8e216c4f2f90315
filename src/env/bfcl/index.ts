/**
 * BFCL v4 multi-turn function calling with the official semantics: the eight simulated API classes,
 * the executor, the checker, the data loader, and the environment built on them. Its scripted noisy
 * policy is src/policy/bfcl-scripted-policy.ts.
 */
export {
  CATEGORIES,
  type Category,
  type BfclEntry,
  type FunctionDoc,
  loadAll,
  loadCategory,
  loadClassDocs,
  BfclDataError,
  DEFAULT_BFCL_DIR,
  todayUtc,
} from './data.ts';
export { Session, stateText } from './executor.ts';
export { checkAttempt, executeAttempt, type Attempt, type CheckResult, type ErrorType, ERROR_TYPES } from './checker.ts';
export { loadLongContextData, SharedState } from './apis/shared.ts';
export { parseCall, parseJson, LiteralSyntaxError } from './py/literal.ts';
export { BfclEnv, bfclConversation, parseBfclText, MAX_STEPS_PER_TURN, type BfclEnvOptions, type BfclState, type ChatMessage } from './env.ts';
export { toOpenAITools, toolCallToString, readStepText, callString } from './tools.ts';
export { evaluateBfcl, type BfclAccuracy } from './evaluate.ts';
