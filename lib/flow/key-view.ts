import { ClientError } from "../errors.ts";
import { MAX_BATCH_KEY_CHARS } from "../job/batch.ts";
import { concurrencyFor, type FlowRate, flowLimitNamed, flowLimitsOf, rateView } from "../job/flow.ts";
import type { AdaptedRate } from "../job/flow-adaptive.ts";
import { flowKey } from "../job/flow-key.ts";
import type { FlowKeyView, FlowRateView } from "../job/flow-views.ts";
import { computedKeyWrites, storedKeyProblem } from "../job/key-layout.ts";
import { readFlowKeyState } from "../store/flow-key-ops.ts";
import { countParked } from "../store/parked-line-ops.ts";
import { livePlaces, type PlaceDeps } from "./flow-places.ts";

/**
 * A flow key as the operator sees it (GET /keys/{kind}/{key}[?limit=<name>], docs/guide/flow-control.md):
 * its runs, its waiting jobs, its limits and its cool-down; a key of the kind's first limit unless
 * `limit` names another. 404 for a kind without flow control, a limit it doesn't declare, or a key no
 * job has used; 400 for a key no job could have.
 * reads: the key's state (strong), a COUNT of its line, and the job of each place held.
 */
export async function flowKeyView(
  deps: PlaceDeps,
  kindName: string,
  key: string,
  limitName?: string,
): Promise<FlowKeyView> {
  const kind = deps.registry.get(kindName);
  if (!kind?.flow)
    throw new ClientError(
      "not_found",
      `kind "${kindName}" has no flow control (or is not a kind of this app)`,
    );
  const limits = flowLimitsOf(kind.flow);
  const limit = flowLimitNamed(kind.flow, limitName);
  if (!limit)
    throw new ClientError(
      "not_found",
      `kind "${kindName}" has no flow limit "${limitName}"; its limits: ${limits.map((l) => l.name).join(", ")}`,
    );
  const named = limit.index === 0 ? undefined : limit.name;
  if (key.length === 0 || key.length > MAX_BATCH_KEY_CHARS)
    throw new ClientError("validation_error", `a flow key is 1..${MAX_BATCH_KEY_CHARS} characters`, [
      { path: "key", message: `got ${key.length} characters` },
    ]);
  // A key the enqueue would refuse names no key's state, and its parked line's prefix is no key
  // DynamoDB takes in a query.
  const problem = storedKeyProblem([key], (k) => computedKeyWrites("flow", kind.name, k, named));
  if (problem)
    throw new ClientError("validation_error", "no job can have this flow key", [
      { path: "key", message: `the flow key ${problem}` },
    ]);
  const fk = flowKey(kind.name, key, named);
  const [state, waiting] = await Promise.all([readFlowKeyState(deps.store, fk), countParked(deps.store, fk)]);
  const now = deps.clock.now();
  const running = await livePlaces(deps, fk, state, now);
  if (running === 0 && waiting === 0 && state.coolUntil === undefined && state.adaptedRate === undefined)
    throw new ClientError("not_found", `no job of kind "${kindName}" runs or waits under key "${key}"`);
  const concurrency = concurrencyFor(limit.settings, key);
  const { rate } = limit.settings;
  return {
    kind: kind.name,
    key,
    ...(limits.length > 1 ? { limit: limit.name, limits: limits.map((l) => l.name) } : {}),
    running,
    waiting,
    ...(typeof concurrency === "number" ? { concurrency } : {}),
    ...(rate ? { rate: { ...rateView(rate), ...inForceView(rate, state.adaptedRate) } } : {}),
    ...(state.coolUntil !== undefined && state.coolUntil > now
      ? { coolUntil: new Date(state.coolUntil).toISOString() }
      : {}),
  };
}

/** An adaptive rate's rate in force, while below its limit. */
function inForceView(rate: FlowRate<never>, adapted: AdaptedRate | undefined): Pick<FlowRateView, "inForce"> {
  if (!rate.adaptive || adapted === undefined) return {};
  const since = new Date(adapted.since).toISOString();
  return { inForce: { limit: adapted.current, since, reason: adapted.reason } };
}
