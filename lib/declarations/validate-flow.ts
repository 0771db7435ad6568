import { type FlowSettings, MAX_KEY_CONCURRENCY } from "../job/flow.ts";

/** What the validator reads of a kind's flow control (docs/architecture.md §20). */
export interface FlowDeclaration {
  flow?: FlowSettings<never>;
  lane?: string;
  batch?: unknown;
  debounce?: unknown;
  singleton?: unknown;
}

/** Lanes whose jobs are claimed, so a permit has an owner whose lease ends (docs/architecture.md §16). */
export const FLOW_LANES = ["fenced", "lean"] as const;

const positive = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;

/**
 * A flow declaration's problems, each naming the kind and the field: a key function; a concurrency
 * that is a whole number from 1 (or a function of the key, checked at enqueue); a rate with a
 * positive limit, period and burst; a claimed lane; not a batch kind (its key already bounds its
 * calls), nor a debounce or singleton kind.
 */
export function flowKindProblems(label: string, k: FlowDeclaration): string[] {
  const { flow } = k;
  if (!flow) return [];
  const problems: string[] = [];
  if (typeof flow.key !== "function")
    problems.push(`${label}: flow.key must be a function of the payload that returns the key`);
  if (flow.concurrency === undefined && flow.rate === undefined)
    problems.push(`${label}: flow needs a concurrency, a rate or both`);
  const c = flow.concurrency;
  if (
    c !== undefined &&
    typeof c !== "function" &&
    !(Number.isInteger(c) && c >= 1 && c <= MAX_KEY_CONCURRENCY)
  )
    problems.push(
      `${label}: flow.concurrency must be a whole number from 1 to ${MAX_KEY_CONCURRENCY}, got ${c}`,
    );
  if (flow.rate !== undefined) {
    const { limit, periodSeconds, burst } = flow.rate;
    if (!positive(limit)) problems.push(`${label}: flow.rate.limit must be over 0, got ${limit}`);
    if (!positive(periodSeconds))
      problems.push(`${label}: flow.rate.periodSeconds must be over 0, got ${periodSeconds}`);
    if (burst !== undefined && !(Number.isInteger(burst) && burst >= 1))
      problems.push(`${label}: flow.rate.burst must be a whole number from 1, got ${burst}`);
  }
  if (k.lane !== undefined && !(FLOW_LANES as readonly string[]).includes(k.lane))
    problems.push(
      `${label}: flow control needs a claimed lane (${FLOW_LANES.join(" or ")}), not "${k.lane}": a run without a claim can't hold its key's place`,
    );
  if (k.batch !== undefined)
    problems.push(
      `${label}: a batch kind can't declare flow (its batch key's maxKeyConcurrency bounds its calls)`,
    );
  if (k.debounce !== undefined || k.singleton !== undefined)
    problems.push(`${label}: flow with debounce or singleton on one kind is not supported`);
  return problems;
}
