/** The job lifecycle as a string-literal state machine (docs/architecture.md §4). */
export const jobStatuses = ["queued", "scheduled", "running", "done", "dead", "cancelled", "paused"] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const terminalStatuses = ["done", "dead", "cancelled"] as const satisfies readonly JobStatus[];
export type TerminalStatus = (typeof terminalStatuses)[number];

export function isTerminal(status: JobStatus): status is TerminalStatus {
  return (terminalStatuses as readonly string[]).includes(status);
}

/**
 * Every legal edge (docs/architecture.md §4). The store's conditions enforce these: each store
 * operation declares the edges it takes (`StoreTransitions`), and tests check both that the
 * declarations stay inside this map and that the operations stay inside their declarations.
 * The DLQ drain takes queued and scheduled jobs to dead: their message exceeded its receive count.
 */
export const transitions: Record<JobStatus, readonly JobStatus[]> = {
  // queued → done: a fire-and-forget job whose failure was recorded succeeds on a later attempt.
  queued: ["running", "cancelled", "dead", "done"],
  scheduled: ["queued", "running", "cancelled", "dead"],
  // running → paused: a kind with onExhausted "pause" used its last attempt (§21).
  running: ["queued", "scheduled", "running", "done", "dead", "cancelled", "paused"],
  done: [],
  dead: ["scheduled"],
  cancelled: ["scheduled"],
  // Not terminal: an operator resumes it (a fresh set of attempts) or ends it.
  paused: ["scheduled", "cancelled"],
};

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return transitions[from].includes(to);
}

/** Statuses kept in the sparse index: rare, and must be found without a scan. */
export const indexedStatuses = ["scheduled", "dead", "paused"] as const satisfies readonly JobStatus[];
export type IndexedStatus = (typeof indexedStatuses)[number];
export function isIndexed(status: JobStatus): status is IndexedStatus {
  return (indexedStatuses as readonly string[]).includes(status);
}

/** Where an edge starts: a status, or no item yet (the first write of a job). */
export type TransitionStart = JobStatus | "missing";
export type Transition = readonly [from: TransitionStart, to: JobStatus];

/** The edges one store operation may take; an operation that never changes status declares none. */
export type StoreTransitions = readonly Transition[];

/**
 * A first write may create a job in any status: the enqueue (queued, scheduled), a claim (running),
 * the DLQ drain (dead), the one write of an unclaimed lane (done, dead, queued), a cancel before a
 * lean job started (cancelled: its tombstone). docs/architecture.md §4 and §16.
 */
export function isLegal([from, to]: Transition): boolean {
  return from === "missing" ? true : canTransition(from, to);
}
