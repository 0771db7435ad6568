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

/** A logger that stamps `fields` on every line (the caller's own attributes win on a clash). */
export function withFields(log: Log, fields: Record<string, unknown>): Log {
  return {
    debug: (message, attributes) => log.debug(message, { ...fields, ...attributes }),
    info: (message, attributes) => log.info(message, { ...fields, ...attributes }),
    warn: (message, attributes) => log.warn(message, { ...fields, ...attributes }),
    error: (message, attributes) => log.error(message, { ...fields, ...attributes }),
  };
}

/**
 * A caught value as log attributes that keep its stack: an Error goes in whole (the Powertools
 * Logger writes its name, message, stack and cause), anything else as its string.
 */
export function errorFields(err: unknown): { error: Error | string } {
  return { error: err instanceof Error ? err : String(err) };
}
