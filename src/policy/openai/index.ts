/** The OpenAI-compatible policy: many servers, least-loaded sticky routing, token ids and log-probabilities when returned. */
export { OpenAIPolicy, toPolicyError, type OpenAIPolicyOptions } from './openai-policy.ts';
export { Router } from './router.ts';
export { parseResponse, restoreStopTag, tokenSpan, MalformedResponseError, type ParsedResponse } from './response.ts';
export { resolveApiKey, ApiKeyError, API_KEY_VARIABLES } from './api-key.ts';
export { boundedFetch, ResponseTooLargeError, MAX_RESPONSE_BYTES } from './bounded-fetch.ts';
