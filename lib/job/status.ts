/** The job lifecycle as a string-literal state machine (DESIGN §3). */
export const jobStatuses = ["queued", "scheduled", "running", "done", "dead", "cancelled"] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const terminalStatuses = ["done", "dead", "cancelled"] as const satisfies readonly JobStatus[];
export type TerminalStatus = (typeof terminalStatuses)[number];

export function isTerminal(status: JobStatus): status is TerminalStatus {
  return (terminalStatuses as readonly string[]).includes(status);
}

/** Every legal edge. The store's conditions enforce these; tests check the store never leaves the map. */
export const transitions: Record<JobStatus, readonly JobStatus[]> = {
  queued: ["running", "cancelled"],
  scheduled: ["queued", "running", "cancelled"],
  running: ["queued", "scheduled", "running", "done", "dead", "cancelled"],
  done: [],
  dead: ["scheduled"],
  cancelled: ["scheduled"],
};

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return transitions[from].includes(to);
}

/** Statuses kept in the sparse index: rare, and must be found without a scan. */
export const indexedStatuses = ["scheduled", "dead"] as const satisfies readonly JobStatus[];
export type IndexedStatus = (typeof indexedStatuses)[number];
export function isIndexed(status: JobStatus): status is IndexedStatus {
  return (indexedStatuses as readonly string[]).includes(status);
}
