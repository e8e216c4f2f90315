/**
 * Whether a refused request's message says the prompt does not fit the model's context. Servers
 * signal it only in words (vLLM and SGLang give no code), so each server's wording is listed:
 *  - vLLM, OpenAI: "This model's maximum context length is 4096 tokens. However, you requested …";
 *    newer vLLM: "The decoder prompt (length 5000) is longer than the maximum model length of 4096";
 *  - SGLang: "The input (5000 tokens) is longer than the model's context length (4096 tokens)";
 *  - llama.cpp's server: "the request exceeds the available context size, try increasing it";
 *  - TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5000 `inputs` tokens …";
 *  - trace-rl serve: "a prompt of 5,000 tokens exceeds the limit of 4,096 tokens (the context length, --context)"
 *    (or `--max-prompt-tokens`), and a tiny-LM policy's own "… fill the model's context of N".
 * A match is not a server failure: the trajectory outgrew the model, and no retry can help.
 */
const CONTEXT_OVERFLOW =
  /maximum context length|context length|context size|context window|maximum model length|max_model_len|context_length_exceeded|exceed_context_size|max-prompt-tokens|model's context|`inputs` tokens \+ `max_new_tokens` must be/i;

export function isContextOverflow(message: string): boolean {
  return CONTEXT_OVERFLOW.test(message);
}
