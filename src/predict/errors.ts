/** A predictor setting out of range (the mlp's or the posterior's), refused when the predictor is built. */
export class PredictorConfigError extends Error {
  override name = 'PredictorConfigError';
}
