/** Raised when a report cannot be built from what it was given (a folder that is not a run, no runs, a bad output path). */
export class ReportError extends Error {
  override name = 'ReportError';
}
