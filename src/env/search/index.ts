/**
 * The search folder as code outside src/env sees it: the Search-R1 protocol (tags, the question's
 * rendering, the titles a result names). Only the protocol: BM25, the corpora and the retriever's
 * client and server stay behind it, loaded by the environments and commands that use them.
 */
export * from './search-r1.ts';
