/**
 * Datum provenance (Tinker SDK 0.26+, `Datum.with_provenance`): where each token of a forward_backward
 * Datum came from, as runs that tile a field. `model_input_spans` tile the input tokens and
 * `loss_fn_input_spans` tile `target_tokens`; a run is `length` positions that are positions
 * `offset…` either of a sampled sequence's request prompt (`prompt_tokens`) or of its sampled tokens
 * (`sampled_tokens`), the sequence named by the id the engine gave it (`sample_sequence_ids`). Both
 * lists come together or not at all. The client writes them (datumProvenance), `serve --tinker` checks
 * them (provenanceProblem); an engine may use them to tell the model's tokens from the prompt's.
 */
import type { Datum, ProvenanceSpan } from './wire.ts';

/**
 * The provenance of a sequence of tokens built from samples: `turnOf[t]` is the turn whose sampled
 * sequence produced token t, −1 for a token the model did not sample (the prompt, an observation), and
 * `sequenceIds[k]` the engine's id of turn k's sample. A token not sampled was in the prompt of the
 * next turn's request at the same position (each turn's prompt is the sequence so far, token for token),
 * so it names that turn's sequence; a sampled run names its own, from the start of its tokens. Answers
 * runs tiling the whole sequence, or undefined when a turn has no id (an engine before 0.26, a turn
 * not sampled through the engine) or a token follows the last sample.
 */
export function sequenceProvenance(turnOf: readonly number[], sequenceIds: ReadonlyArray<string | undefined>): ProvenanceSpan[] | undefined {
  const spans: ProvenanceSpan[] = [];
  let t = 0;
  while (t < turnOf.length) {
    const start = t;
    const turn = turnOf[t]!;
    if (turn >= 0) {
      while (t < turnOf.length && turnOf[t] === turn) t++;
      const id = sequenceIds[turn];
      if (!id) return undefined;
      spans.push({ type: 'sampled_tokens', sequence_id: id, offset: 0, length: t - start });
    } else {
      while (t < turnOf.length && turnOf[t]! < 0) t++;
      const id = t < turnOf.length ? sequenceIds[turnOf[t]!] : undefined;
      if (!id) return undefined;
      spans.push({ type: 'prompt_tokens', sequence_id: id, offset: start, length: t - start });
    }
  }
  return spans;
}

/** The runs of `spans` (tiling positions 0…) that cover positions [from, to), cut at both ends. */
export function sliceSpans(spans: readonly ProvenanceSpan[], from: number, to: number): ProvenanceSpan[] {
  const out: ProvenanceSpan[] = [];
  let at = 0;
  for (const s of spans) {
    const [a, b] = [Math.max(at, from), Math.min(at + s.length, to)];
    if (a < b) out.push({ ...s, offset: s.offset + (a - at), length: b - a });
    at += s.length;
  }
  return out;
}

/** A Datum's two span lists for a sequence of `tokens` (input = all but the last, targets = all but the first). */
export function datumProvenance(spans: readonly ProvenanceSpan[] | undefined, tokens: number): Pick<Datum, 'model_input_spans' | 'loss_fn_input_spans'> {
  if (!spans || tokens < 2) return {};
  return { model_input_spans: sliceSpans(spans, 0, tokens - 1), loss_fn_input_spans: sliceSpans(spans, 1, tokens) };
}

/**
 * What is wrong with a Datum's provenance (undefined: nothing, or none sent): the lists come as a pair and
 * each tiles its field exactly (`inputs` input tokens, `targets` target tokens). The schema has already
 * bounded the lists and checked each run (length ≥ 1, offset ≥ 0, an id of at most 256 characters).
 */
export function provenanceProblem(d: Datum, inputs: number, targets: number): string | undefined {
  const [a, b] = [d.model_input_spans, d.loss_fn_input_spans];
  if (a == null && b == null) return undefined;
  if (a == null || b == null) return 'model_input_spans and loss_fn_input_spans come as a pair: send both or neither';
  const cover = (spans: readonly ProvenanceSpan[]) => spans.reduce((n, s) => n + s.length, 0);
  if (cover(a) !== inputs) return `model_input_spans cover ${cover(a)} positions but model_input has ${inputs} tokens; the runs must tile it exactly`;
  if (cover(b) !== targets) return `loss_fn_input_spans cover ${cover(b)} positions but target_tokens has ${targets}; the runs must tile it exactly`;
  return undefined;
}
