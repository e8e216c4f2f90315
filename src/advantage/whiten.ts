/**
 * Token-weighted whitening, as verl's masked_whiten applies it to a batch: each value x_j stands for
 * w_j tokens (its trajectory's generated tokens), N = Σ w_j,
 *   mean = Σ w_j x_j / N,   var = (Σ w_j (x_j − mean)² / N) · N / (N − 1),
 *   x̂_j = (x_j − mean) / √(var + ε),  ε = 1e-8 inside the square root.
 * With fewer than two tokens there is nothing to compare against (verl raises); we return zeros.
 */
export function tokenWhiten(values: readonly number[], weights: readonly number[], epsilon = 1e-8): number[] {
  let N = 0;
  let sum = 0;
  for (let j = 0; j < values.length; j++) {
    N += weights[j];
    sum += weights[j] * values[j];
  }
  if (N < 2) return values.map(() => 0);
  const mean = sum / N;
  let sq = 0;
  for (let j = 0; j < values.length; j++) sq += weights[j] * (values[j] - mean) ** 2;
  const variance = (sq / N) * (N / (N - 1));
  const scale = 1 / Math.sqrt(variance + epsilon);
  return values.map((x) => (x - mean) * scale);
}
