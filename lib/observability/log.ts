/** The logging surface lib/ needs; Powertools Logger satisfies it. Payloads are never passed in. */
export interface Log {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

/** Structured attributes every job log line carries. */
export function jobFields(job: { id: string; kind: string; queue: string }, attempt?: number) {
  return { jobId: job.id, kind: job.kind, queue: job.queue, ...(attempt !== undefined ? { attempt } : {}) };
}
