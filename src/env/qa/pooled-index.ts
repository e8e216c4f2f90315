/**
 * One BM25 index over every distinct paragraph of the chosen datasets, cached on disk under a key that
 * is the SHA-256 of the paragraphs and the index settings: a second run with the same datasets loads
 * the index instead of building it, and any change to the paragraphs gives a new key (a stale cache
 * can never be used). The cache file is written atomically (temporary file, then rename); an
 * unreadable or mismatched cache file is rebuilt and replaced.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { Bm25Index } from '../search/bm25.ts';
import type { Passage } from '../search/search-r1.ts';

/** Bumped whenever the index format or the tokenizer changes, so old cache files are not reused. */
const INDEX_VERSION = 'bm25-minisearch7@1';

/** `$XDG_CACHE_HOME/trace-rl/bm25`, else `~/.cache/trace-rl/bm25`. */
export function defaultIndexCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(base, 'trace-rl', 'bm25');
}

/** The cache key of an index over these passages. */
export function indexKey(passages: readonly Passage[]): string {
  const h = createHash('sha256');
  h.update(INDEX_VERSION);
  for (const p of passages) h.update(`\u0000${p.id}\u0001${p.title}\u0001${p.text}`);
  return h.digest('hex').slice(0, 32);
}

export interface CachedIndex {
  index: Bm25Index;
  /** Whether it came from the cache ('hit') or was built now ('built'; 'built-uncached' when the cache could not be written). */
  source: 'hit' | 'built' | 'built-uncached';
  file: string;
}

/** The BM25 index over `passages`, from `cacheDir` when it holds one for them, else built and stored. */
export function cachedIndex(passages: readonly Passage[], options: { cacheDir?: string } = {}): CachedIndex {
  const dir = options.cacheDir ?? defaultIndexCacheDir();
  const file = path.join(dir, `${indexKey(passages)}.json`);
  try {
    const serialized = readFileSync(file, 'utf8');
    return { index: new Bm25Index(passages, { serialized }), source: 'hit', file };
  } catch {
    // Missing, unreadable or from another build: rebuild below.
  }
  const index = new Bm25Index(passages);
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(tmp, index.serialize());
    renameSync(tmp, file);
    return { index, source: 'built', file };
  } catch {
    rmSync(tmp, { force: true });
    return { index, source: 'built-uncached', file };
  }
}
