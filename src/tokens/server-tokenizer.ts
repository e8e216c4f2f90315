import { TokenizerError, type Tokenizer } from './tokenizer.ts';

/** The server root for a base URL such as http://host:8000/v1 (`/tokenize` lives at the root on vLLM, SGLang and llama.cpp). */
export function serverRoot(baseURL: string): string {
  return baseURL.replace(/\/+$/, '').replace(/\/v1$/, '');
}

type Json = Record<string, unknown>;

/**
 * The server's /tokenize or /detokenize could not be had (unreachable, an HTTP error, an answer
 * without ids): the server's failure, not the user's, which a long-running command reports as such.
 */
export class ServerTokenizerError extends TokenizerError {
  override name = 'ServerTokenizerError';
}
const numbers = (x: unknown): number[] | undefined => (Array.isArray(x) && x.every((v) => Number.isInteger(v)) ? (x as number[]) : undefined);

/**
 * The serving model's own tokenizer, asked over HTTP: `POST /tokenize` and `POST /detokenize` as vLLM
 * (`prompt`/`tokens` → `tokens`/`prompt`), SGLang and llama.cpp (`content`/`tokens` → `tokens`/`content`)
 * expose them; both field spellings are sent and read. Answers are cached, so synchronous `encode` and
 * `decode` work for any text or ids seen by `prepare` (or by an earlier async call).
 */
export class ServerTokenizer implements Tokenizer {
  readonly name: string;
  bos?: number;
  private readonly root: string;
  private readonly encoded = new Map<string, number[]>();
  private readonly decoded = new Map<string, string>();

  private readonly headers: Record<string, string>;

  /** `apiKey`, when the server needs one, is sent as a Bearer token (the policy's own key). */
  constructor(baseURL: string, options: { apiKey?: string } = {}) {
    this.root = serverRoot(baseURL);
    this.headers = { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) };
    this.name = `server:${this.root}`;
  }

  private async post(path: string, body: Json): Promise<Json> {
    let res: Response | undefined;
    // A server that has just started (or is busy) may refuse a connection: three tries, 0.2 s then 0.8 s apart.
    for (let attempt = 0; !res; attempt++) {
      try {
        res = await fetch(`${this.root}${path}`, { method: 'POST', headers: this.headers, body: JSON.stringify(body) });
      } catch (e) {
        const cause = (e as { cause?: { code?: string; message?: string } }).cause;
        if (attempt === 2)
          throw new ServerTokenizerError(
            `${this.root}${path}: cannot reach the server (${(e as Error).message}${cause ? `: ${cause.code ?? cause.message}` : ''})`,
          );
        await new Promise((r) => setTimeout(r, 200 * 4 ** attempt));
      }
    }
    if (!res.ok)
      throw new ServerTokenizerError(
        `${this.root}${path}: HTTP ${res.status}; the server must expose /tokenize and /detokenize (vLLM, SGLang, llama.cpp, trace-rl serve), or use --tokenizer hf:DIR`,
      );
    try {
      return (await res.json()) as Json;
    } catch (e) {
      throw new ServerTokenizerError(`${this.root}${path}: the answer is not JSON (${(e as Error).message})`);
    }
  }

  /** Reads the model's BOS (the id `/tokenize` adds before an empty prompt with special tokens on). */
  async init(): Promise<this> {
    const r = await this.post('/tokenize', { prompt: '', content: '', add_special_tokens: true, add_special: true });
    const ids = numbers(r.tokens);
    if (!ids) throw new ServerTokenizerError(`${this.root}/tokenize: answer has no "tokens" id list`);
    this.bos = ids[0];
    return this;
  }

  /** Every answer is a fresh copy: callers append to the ids they get, and the cached list must not grow with them. */
  async encodeAsync(text: string): Promise<number[]> {
    const hit = this.encoded.get(text);
    if (hit) return [...hit];
    const r = await this.post('/tokenize', { prompt: text, content: text, add_special_tokens: false, add_special: false });
    const ids = numbers(r.tokens);
    if (!ids) throw new ServerTokenizerError(`${this.root}/tokenize: answer has no "tokens" id list`);
    this.encoded.set(text, ids);
    return [...ids];
  }

  async decodeAsync(ids: readonly number[]): Promise<string> {
    const key = ids.join(',');
    const hit = this.decoded.get(key);
    if (hit !== undefined) return hit;
    const r = await this.post('/detokenize', { tokens: ids });
    const text = typeof r.prompt === 'string' ? r.prompt : typeof r.content === 'string' ? r.content : undefined;
    if (text === undefined) throw new ServerTokenizerError(`${this.root}/detokenize: answer has no "prompt" or "content" string`);
    this.decoded.set(key, text);
    return text;
  }

  async prepare(texts: readonly string[], idLists: readonly (readonly number[])[] = []): Promise<void> {
    for (const t of texts) await this.encodeAsync(t);
    for (const ids of idLists) await this.decodeAsync(ids);
  }

  encode(text: string): number[] {
    const hit = this.encoded.get(text);
    if (!hit) throw new TokenizerError(`${this.name}: text was not prepared (call prepare() with it first)`);
    return [...hit];
  }

  decode(ids: readonly number[]): string {
    const hit = this.decoded.get(ids.join(','));
    if (hit === undefined) throw new TokenizerError(`${this.name}: ids were not prepared (call prepare() with them first)`);
    return hit;
  }
}
