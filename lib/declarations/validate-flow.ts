import {
  FLOW_LIMIT_NAME,
  type FlowDeclaration,
  type FlowSettings,
  MAX_FLOW_LIMITS,
  MAX_KEY_CONCURRENCY,
} from "../job/flow.ts";

/** What the validator reads of a kind's flow control (docs/architecture.md §20). */
export interface FlowKindDeclaration {
  name: string;
  flow?: FlowDeclaration<never>;
  lane?: string;
  batch?: unknown;
}

/** Lanes whose jobs are claimed, so a permit has an owner whose lease ends (docs/architecture.md §16). */
export const FLOW_LANES = ["fenced", "lean"] as const;

const positive = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;

/**
 * A flow declaration's problems, each naming the kind and the field: one limit or a list of 1 to 4,
 * with names (given, or their positions) that differ and key functions that differ; for each limit,
 * a key function, a concurrency that is a whole number from 1 (or a function of the key, checked at
 * enqueue), a rate with a positive limit, period and burst and a cost that is a function (checked
 * at enqueue); a claimed lane; not a batch kind (its key already bounds its calls); a kind's name
 * without `#` or `!` (they delimit a flow key's text). A debounced or singleton kind may declare
 * flow: the job its burst or key makes is what takes the places (docs/guide/flow-control.md).
 */
export function flowKindProblems(label: string, k: FlowKindDeclaration): string[] {
  const { flow } = k;
  if (!flow) return [];
  const problems: string[] = [];
  const list: readonly FlowSettings<never>[] = Array.isArray(flow) ? flow : [flow as FlowSettings<never>];
  if (list.length === 0 || list.length > MAX_FLOW_LIMITS)
    problems.push(`${label}: flow takes 1 to ${MAX_FLOW_LIMITS} limits, got ${list.length}`);
  const names = new Map<string, number>();
  const keys = new Map<unknown, number>();
  list.forEach((limit, i) => {
    const at = Array.isArray(flow) ? `flow[${i}]` : "flow";
    const name = limit.name ?? String(i + 1);
    if (limit.name !== undefined && !(typeof limit.name === "string" && FLOW_LIMIT_NAME.test(limit.name)))
      problems.push(
        `${label}: ${at}.name must be 1 to 32 lowercase letters, digits and dashes, got ${JSON.stringify(limit.name)}`,
      );
    const sameName = names.get(name);
    if (sameName !== undefined)
      problems.push(
        `${label}: ${at}.name "${name}" is also flow[${sameName}]'s: each limit needs its own name`,
      );
    else names.set(name, i);
    const sameKey = keys.get(limit.key);
    if (sameKey !== undefined)
      problems.push(
        `${label}: ${at}.key is the same function as flow[${sameKey}].key: two limits of one key are one limit`,
      );
    else keys.set(limit.key, i);
    problems.push(...limitProblems(`${label}: ${at}`, limit));
  });
  if (/[#!]/.test(k.name))
    problems.push(
      `${label}: a flow-controlled kind's name can't hold "#" or "!" (they delimit its keys' text)`,
    );
  if (k.lane !== undefined && !(FLOW_LANES as readonly string[]).includes(k.lane))
    problems.push(
      `${label}: flow control needs a claimed lane (${FLOW_LANES.join(" or ")}), not "${k.lane}": a run without a claim can't hold its key's place`,
    );
  if (k.batch !== undefined)
    problems.push(
      `${label}: a batch kind can't declare flow (its batch key's maxKeyConcurrency bounds its calls)`,
    );
  return problems;
}

/** One limit's problems; `at` names it (`kind "x": flow[1]`). */
function limitProblems(at: string, flow: FlowSettings<never>): string[] {
  const problems: string[] = [];
  if (typeof flow.key !== "function")
    problems.push(`${at}.key must be a function of the payload that returns the key`);
  if (flow.concurrency === undefined && flow.rate === undefined)
    problems.push(`${at} needs a concurrency, a rate or both`);
  const c = flow.concurrency;
  if (
    c !== undefined &&
    typeof c !== "function" &&
    !(Number.isInteger(c) && c >= 1 && c <= MAX_KEY_CONCURRENCY)
  )
    problems.push(`${at}.concurrency must be a whole number from 1 to ${MAX_KEY_CONCURRENCY}, got ${c}`);
  if (flow.rate !== undefined) {
    const { limit, periodSeconds, burst, cost } = flow.rate;
    if (!positive(limit)) problems.push(`${at}.rate.limit must be over 0, got ${limit}`);
    if (!positive(periodSeconds))
      problems.push(`${at}.rate.periodSeconds must be over 0, got ${periodSeconds}`);
    if (burst !== undefined && !(Number.isInteger(burst) && burst >= 1))
      problems.push(`${at}.rate.burst must be a whole number from 1, got ${burst}`);
    if (cost !== undefined && typeof cost !== "function")
      problems.push(`${at}.rate.cost must be a function of the payload that returns the units it takes`);
    const { adaptive } = flow.rate;
    if (adaptive !== undefined && typeof adaptive !== "boolean")
      problems.push(`${at}.rate.adaptive must be true or false, got ${String(adaptive)}`);
  }
  return problems;
}
