/** The simulator as code outside src/env sees it: the tree of known success probabilities and its players' types (kind.ts registers the kind). */
export * from './simulator.ts';
