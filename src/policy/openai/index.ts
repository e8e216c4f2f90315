/** The OpenAI-compatible policy: many servers, least-loaded sticky routing, token ids and log-probabilities when returned. */
export { OpenAIPolicy, toPolicyError, type OpenAIPolicyOptions } from './openai-policy.ts';
export { Router } from './router.ts';
export { parseResponse, restoreStopTag, tokenSpan, MalformedResponseError, type ParsedResponse } from './response.ts';
