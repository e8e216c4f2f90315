/** One non-empty line of JSON Lines text: its 1-based number and its value, or why it is not JSON. */
export type JsonLine = { line: number; value: unknown; error?: undefined } | { line: number; value?: undefined; error: string };

/**
 * The non-empty lines of JSON Lines text, each parsed; a line that is not JSON carries the parser's
 * message instead, so every caller reports it with its own file:line wording and policy.
 */
export function* jsonLines(text: string): Generator<JsonLine> {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line.length === 0) continue;
    try {
      yield { line: i + 1, value: JSON.parse(line) };
    } catch (e) {
      yield { line: i + 1, error: (e as Error).message };
    }
  }
}
