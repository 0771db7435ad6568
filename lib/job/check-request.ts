import type * as z from "zod";
import { type QueueDeclaration, tierOf } from "../declarations/queue-declaration.ts";
import { ClientError, InvariantError, issuesOf } from "../errors.ts";
import { MAX_BATCH_KEY_CHARS } from "./batch.ts";
import { MAX_COALESCE_PAYLOAD_BYTES } from "./coalesce.ts";
import { concurrencyFor, costFor, type FlowDeclaration, flowLimitsOf } from "./flow.ts";
import { tooDeepAt } from "./json-depth.ts";
import { type ComputedKey, computedKeyWrites, storedKeyProblem } from "./key-layout.ts";
import { EnqueueRequest, MAX_PAYLOAD_BYTES } from "./schemas.ts";

/**
 * What checking a request needs to know of a kind: its home queue, and the schema of its payload
 * (none for a pool kind as the client sees it: any JSON, which the request schema already checks).
 */
export interface RequestKind {
  name: string;
  queue: string;
  payload?: z.ZodType;
  /** A batch kind's key, computed from the payload at enqueue (docs/architecture.md §18). */
  batch?: { key(payload: unknown): string };
  /** A debounced or singleton kind's key, computed the same way (docs/architecture.md §19). */
  debounce?: { key(payload: never): string };
  singleton?: { key(payload: never): string };
  /** A flow-controlled kind's limits, each with its key (docs/architecture.md §20). */
  flow?: FlowDeclaration<never>;
  /** A kind whose schema loads on first use (lib/job/kind-loading.ts): the producer loads it before checking. */
  load?: unknown;
}

export interface CheckedRequest<K extends RequestKind> {
  request: EnqueueRequest;
  kind: K;
  queue: QueueDeclaration;
  payloadJson: string;
  /** A batch kind's job: its key. */
  batchKey?: string;
  /** A debounced or singleton kind's job: its key. */
  coalesceKey?: string;
  /** A flow-controlled kind's job: its key for the kind's first limit. */
  flowKey?: string;
  /** Its keys for the kind's other limits, by limit name. */
  flowKeys?: Record<string, string>;
  /** The units it takes from each rate with a cost, by limit name. */
  flowCosts?: Record<string, number>;
}

/**
 * The checks an enqueue request gets from the app alone, in this order: the payload's size (when its
 * nesting is within bounds), the request schema (which bounds the payload's nesting before anything
 * recurses into it), a known kind, the payload's size again (as the schema left it),
 * the kind's payload schema, a declared queue, the kind's tier. Pure: the
 * producer (lib/producer/validate.ts) and the client (client/validate.ts) both answer with it, so a
 * client given the app refuses exactly what the API would, with the same code and message.
 * Returns the refusal as a ClientError rather than throwing it, so a caller can carry it as a value.
 */
export function checkEnqueueRequest<K extends RequestKind>(
  raw: unknown,
  kinds: ReadonlyMap<string, K>,
  queues: readonly QueueDeclaration[],
): CheckedRequest<K> | ClientError {
  const oversized = payloadOverLimit(raw);
  if (oversized) return oversized;
  const parsed = EnqueueRequest.safeParse(raw);
  if (!parsed.success)
    return new ClientError("validation_error", "the enqueue request is invalid", issuesOf(parsed.error));
  const request = parsed.data;
  const kind = kinds.get(request.kind);
  if (!kind) {
    return new ClientError(
      "unknown_kind",
      `unknown kind "${request.kind}"; known kinds: ${[...kinds.keys()].join(", ")}`,
    );
  }
  const payloadJson = JSON.stringify(request.payload ?? null);
  if (Buffer.byteLength(payloadJson) > MAX_PAYLOAD_BYTES) return payloadTooLarge();
  // Unchecked would let any payload through: a caller that skipped the load is a bug, not a pass.
  if (kind.load !== undefined && kind.payload === undefined)
    throw new InvariantError(`kind "${kind.name}" was checked before its module loaded`);
  const payload = kind.payload?.safeParse(request.payload ?? null);
  if (payload && !payload.success) {
    return new ClientError(
      "validation_error",
      `payload does not match kind "${kind.name}"`,
      issuesOf(payload.error, ["payload"]),
    );
  }
  const queueName = request.queue ?? kind.queue;
  const queue = queues.find((q) => q.name === queueName);
  if (!queue)
    return new ClientError("validation_error", `unknown queue "${queueName}"`, [
      { path: "queue", message: "not declared" },
    ]);
  const home = queues.find((q) => q.name === kind.queue);
  if (home && tierOf(home) !== tierOf(queue)) {
    return new ClientError(
      "validation_error",
      `kind "${kind.name}" runs on the ${tierOf(home)} tier, but queue "${queue.name}" is served by the ${tierOf(queue)} tier`,
      [{ path: "queue", message: `use a ${tierOf(home)}-tier queue such as "${home.name}"` }],
    );
  }
  const parsedPayload = payload?.success ? payload.data : request.payload;
  const batchKey = kind.batch ? keyOf(kind, "batch", kind.batch.key, parsedPayload) : undefined;
  if (batchKey instanceof ClientError) return batchKey;
  const rule = kind.debounce ? ("debounce" as const) : kind.singleton ? ("singleton" as const) : undefined;
  const coalesceKey = rule
    ? checkCoalesceRequest(kind, rule, request, payloadJson, parsedPayload)
    : undefined;
  if (coalesceKey instanceof ClientError) return coalesceKey;
  const flow = kind.flow ? flowKeysOf(kind, kind.flow, parsedPayload) : undefined;
  if (flow instanceof ClientError) return flow;
  return {
    request,
    kind,
    queue,
    payloadJson,
    ...(batchKey !== undefined ? { batchKey } : {}),
    ...(coalesceKey !== undefined ? { coalesceKey } : {}),
    ...flow,
  };
}

/**
 * A flow-controlled job's key for each of its kind's limits, each key's concurrency checked and each
 * rate's cost computed (a function of the key or of the payload may misbehave). The refusal names the
 * kind and the limit's field (`flow[1].rate.cost`; `flow.…` for a lone limit).
 */
function flowKeysOf(
  kind: RequestKind,
  flow: FlowDeclaration<never>,
  payload: unknown,
): Pick<CheckedRequest<RequestKind>, "flowKey" | "flowKeys" | "flowCosts"> | ClientError {
  const listed = Array.isArray(flow);
  const keys: Record<string, string> = {};
  const costs: Record<string, number> = {};
  let first: string | undefined;
  for (const limit of flowLimitsOf(flow)) {
    const at = listed ? `flow[${limit.index}]` : "flow";
    const named = limit.index === 0 ? undefined : limit.name;
    const key = keyOf(kind, "flow", limit.settings.key as (p: unknown) => string, payload, {
      limit: named,
      field: listed ? `${at}.key` : undefined,
    });
    if (key instanceof ClientError) return key;
    const concurrency = concurrencyFor(limit.settings, key);
    if (typeof concurrency === "string")
      return new ClientError(
        "validation_error",
        `kind "${kind.name}" gave flow key "${key}" no usable concurrency (${at}.concurrency)`,
        [{ path: "payload", message: concurrency }],
      );
    const { rate } = limit.settings;
    const cost = rate ? costFor(rate, payload) : 1;
    if (typeof cost === "string")
      return new ClientError(
        "validation_error",
        `kind "${kind.name}" gave the job no usable cost on its rate (${at}.rate.cost)`,
        [{ path: "payload", message: cost }],
      );
    if (rate?.cost !== undefined) costs[limit.name] = cost;
    if (limit.index === 0) first = key;
    else keys[limit.name] = key;
  }
  return {
    ...(first !== undefined ? { flowKey: first } : {}),
    ...(Object.keys(keys).length > 0 ? { flowKeys: keys } : {}),
    ...(Object.keys(costs).length > 0 ? { flowCosts: costs } : {}),
  };
}

/**
 * A debounced or singleton kind's request: its key, or the refusal. Such a job's time comes from
 * its burst or its key's running job, and its key is the dedupe, so a delay, runAt or uniqueKey is
 * refused; its payload lives in its item, so it stays under the claim check's threshold.
 */
function checkCoalesceRequest(
  kind: RequestKind,
  rule: "debounce" | "singleton",
  request: EnqueueRequest,
  payloadJson: string,
  payload: unknown,
): string | ClientError {
  for (const field of ["delaySeconds", "runAt", "uniqueKey"] as const) {
    if (request[field] !== undefined)
      return new ClientError(
        "validation_error",
        `kind "${kind.name}" is a ${rule} kind: ${field} is not taken`,
        [{ path: field, message: `a ${rule} kind's job runs when its key's rule says; leave ${field} out` }],
      );
  }
  const bytes = Buffer.byteLength(payloadJson);
  if (bytes > MAX_COALESCE_PAYLOAD_BYTES)
    return new ClientError(
      "payload_too_large",
      `kind "${kind.name}" is a ${rule} kind: its payload is kept in the job's item, at most ${MAX_COALESCE_PAYLOAD_BYTES} bytes (got ${bytes})`,
    );
  const settings = kind[rule];
  return settings ? keyOf(kind, rule, settings.key as (p: unknown) => string, payload) : "";
}

/**
 * A payload over MAX_PAYLOAD_BYTES, refused before the request schema walks it element by element
 * (z.json() costs far more per element than serializing does): one bounded walk for its depth, so
 * JSON.stringify can't overflow, then its size. A too-deep payload is left for the schema to name.
 */
function payloadOverLimit(raw: unknown): ClientError | undefined {
  if (typeof raw !== "object" || raw === null || !Object.hasOwn(raw, "payload")) return undefined;
  const payload = (raw as { payload: unknown }).payload;
  if (tooDeepAt(payload) !== undefined) return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch {
    return undefined; // not JSON at all (a BigInt, a throwing toJSON): the schema says so
  }
  if (json !== undefined && Buffer.byteLength(json) > MAX_PAYLOAD_BYTES) return payloadTooLarge();
  return undefined;
}

const payloadTooLarge = () =>
  new ClientError("payload_too_large", `payload is over ${MAX_PAYLOAD_BYTES} bytes once serialized`);

/**
 * The key a kind's own function (batch, debounce, singleton or flow) gives the payload: a non-empty
 * string of at most 256 characters that the store can hold wherever it writes it (well-formed, and
 * within DynamoDB's key limits in bytes: storedKeyProblem), or a 400 naming the kind and what went
 * wrong.
 */
function keyOf(
  kind: RequestKind,
  what: ComputedKey,
  fn: (payload: unknown) => string,
  payload: unknown,
  flowLimit: { limit?: string | undefined; field?: string | undefined } = {},
): string | ClientError {
  const named = flowLimit.field === undefined ? `${what} key` : `${what} key (${flowLimit.field})`;
  const max = MAX_BATCH_KEY_CHARS;
  let key: unknown;
  try {
    key = fn(payload);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return new ClientError("validation_error", `kind "${kind.name}" could not compute the job's ${named}`, [
      { path: "payload", message: `its key function threw: ${why.slice(0, 200)}` },
    ]);
  }
  const unusable = (message: string) =>
    new ClientError("validation_error", `kind "${kind.name}" gave the job an unusable ${named}`, [
      { path: "payload", message },
    ]);
  if (typeof key !== "string" || key.length === 0 || key.length > max) {
    const got = typeof key === "string" ? `${key.length} characters` : typeof key;
    return unusable(`the ${what} key must be a string of 1..${max} characters, got ${got}`);
  }
  const problem = storedKeyProblem([key], (k) => computedKeyWrites(what, kind.name, k, flowLimit.limit));
  return problem ? unusable(`the ${what} key ${problem}`) : key;
}
