/**
 * Tokens as the model sees them: tokenizers (built-in byte/code-point ones, a Hugging Face folder,
 * Qwen3's files, or the server's /tokenize), the model's chat template, and the transcript that turns a
 * multi-turn rollout into one token sequence without re-tokenising earlier turns.
 */
export { byteTokenizer, codepointTokenizer, TokenizerError, BYTE_ID_OFFSET, type Tokenizer } from './tokenizer.ts';
export { loadHfTokenizer, loadQwen3Tokenizer, qwen3TokenizerDir, type ModelTokenizer } from './hf-tokenizer.ts';
export { ServerTokenizer, ServerTokenizerError, serverRoot } from './server-tokenizer.ts';
export { ChatTemplate, type ChatMessage, type ChatTemplateOptions } from './chat-template.ts';
export { Transcript } from './transcript.ts';
export { loadTranscript, readTools, TOKENIZER_SPECS, type TranscriptOptions } from './load.ts';
