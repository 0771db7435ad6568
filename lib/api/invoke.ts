import * as z from "zod";
import { ClientError, type ErrorBody, issuesOf } from "../errors.ts";
import type { GroupView } from "../job/group-schemas.ts";
import type { BatchResultItem, JobView } from "../job/schemas.ts";
import { MAX_BATCH } from "../job/schemas.ts";
import type { Engine } from "../services/engine-services.ts";
import { asClientError } from "./client-errors.ts";
import { namedGroup } from "./group-routes.ts";
import { invokeTrace } from "./trace-header.ts";

export type InvokeAnswer =
  | (JobView & { duplicate: boolean; debounced?: boolean })
  | { results: BatchResultItem[] }
  | (GroupView & { duplicate?: boolean })
  | ErrorBody;

// A groupId stands where the HTTP routes have a path segment: any string is a well-formed request,
// and one no group can have is a not_found (namedGroup), as the routes answer it.
const GroupInvoke = z.union([
  z.object({ group: z.unknown() }).strict(),
  z
    .object({
      groupChildren: z
        .object({ groupId: z.string(), children: z.unknown(), seal: z.unknown() })
        .partial({ seal: true })
        .strict(),
    })
    .strict(),
  z.object({ sealGroup: z.object({ groupId: z.string() }).strict() }).strict(),
]);

/** An id this API could have handed out; anything else names no group (not_found without a read). */

/** The group requests over Invoke, under the same contract as POST /groups, …/children and …/seal. */
async function handleGroupInvoke(
  engine: Engine,
  event: z.infer<typeof GroupInvoke>,
  trace: string | undefined,
): Promise<InvokeAnswer> {
  if ("group" in event) {
    const { group, created } = await engine.groups.create(event.group, trace);
    return { ...group, duplicate: !created };
  }
  if ("groupChildren" in event) {
    const { groupId, ...body } = event.groupChildren;
    return engine.groups.addChildren(namedGroup(groupId), body);
  }
  return engine.groups.seal(namedGroup(event.sealGroup.groupId));
}

const isGroupRequest = (event: unknown) =>
  !!event && typeof event === "object" && ["group", "groupChildren", "sealGroup"].some((k) => k in event);

/**
 * The enqueue function's contract: an EnqueueRequest, `{ jobs: [...] }` (≤ 100), or a group request
 * (`{ group }`, `{ groupChildren: { groupId, children, seal? } }`, `{ sealGroup: { groupId } }`),
 * answered like the HTTP routes. A caller's mistake comes back as `{ error }`, not as a function error.
 * A `traceparent` (and `tracestate`) field beside any of them is the producer's W3C trace context,
 * as the HTTP header is; a malformed one is ignored.
 */
export async function handleEnqueueInvoke(engine: Engine, raw: unknown): Promise<InvokeAnswer> {
  const { request: event, trace } = invokeTrace(raw);
  try {
    if (isGroupRequest(event)) {
      const parsed = GroupInvoke.safeParse(event);
      if (!parsed.success) {
        throw new ClientError("validation_error", "invalid group request", issuesOf(parsed.error));
      }
      return await handleGroupInvoke(engine, parsed.data, trace);
    }
    if (event && typeof event === "object" && "jobs" in event) {
      const jobs = (event as { jobs: unknown }).jobs;
      if (!Array.isArray(jobs) || jobs.length === 0 || jobs.length > MAX_BATCH) {
        throw new ClientError("validation_error", `jobs must be an array of 1..${MAX_BATCH} requests`);
      }
      return { results: await engine.producer.enqueueBatch(jobs, trace) };
    }
    const { job, duplicate, debounced } = await engine.producer.enqueue(
      event,
      trace === undefined ? {} : { job: { trace } },
    );
    return { ...job, duplicate, ...(debounced ? { debounced } : {}) };
  } catch (err) {
    const client = asClientError(err);
    if (client) return client.toBody();
    throw err;
  }
}
