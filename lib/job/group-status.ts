/**
 * A group's lifecycle (docs/architecture.md §15) as a string-literal state machine. The store's
 * conditions enforce it: each group write declares its edges, and a test checks them against this map.
 *
 * open ──seal / expiry / a terminate failure──▶ sealed ──every child terminal──▶ completing
 * completing ──its completion job ends──▶ succeeded | failed;  open | sealed | completing ──cancel──▶ cancelled
 */
export const groupStatuses = ["open", "sealed", "completing", "succeeded", "failed", "cancelled"] as const;
export type GroupStatus = (typeof groupStatuses)[number];

export const groupTransitions: Record<GroupStatus, readonly GroupStatus[]> = {
  open: ["sealed", "cancelled"],
  sealed: ["completing", "cancelled"],
  completing: ["succeeded", "failed", "cancelled"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export type GroupTransition = readonly [from: GroupStatus | "missing", to: GroupStatus];

export function isGroupTransitionLegal([from, to]: GroupTransition): boolean {
  return from === "missing" ? to === "open" || to === "sealed" : groupTransitions[from].includes(to);
}

export const finishedGroupStatuses = ["succeeded", "failed", "cancelled"] as const;
export function isGroupFinished(status: GroupStatus): boolean {
  return (finishedGroupStatuses as readonly string[]).includes(status);
}
