import * as z from "zod";
import { isClaimKeyOf } from "../claims/claim-keys.ts";
import type { JobSeed } from "../store/job-item.ts";
import { STORED_FORMATS } from "../store/stored-formats.ts";

/**
 * The SQS message body. It carries everything needed to build the job item, because the message is
 * sent before the item is written: if the enqueue dies in between, the worker builds the job from it.
 */
export const JobMessage = z
  .object({
    /** The message's format version (lib/store/stored-formats.ts). */
    v: z.literal(STORED_FORMATS.message),
    id: z.string().min(1),
    kind: z.string().min(1),
    queue: z.string().min(1),
    maxAttempts: z.number().int().min(1),
    priority: z.enum(["normal", "critical"]),
    createdAt: z.number(),
    runAt: z.number(),
    timeoutSeconds: z.number().int().optional(),
    /** The start deadline (ms): a claim after it ends the job dead without running it. */
    startBy: z.number().optional(),
    uniqueKey: z.string().optional(),
    /** Payload JSON, the source of truth for the handler; absent when it is in the claims bucket. */
    payload: z.string().optional(),
    /** The payload was too large to inline in the item and also lives in its own item. */
    payloadRef: z.boolean().optional(),
    /** The key of the payload's object in the claims bucket (lib/claims/): the message carries only this. */
    payloadObject: z.string().min(1).optional(),
    /** A group's child: where its end is recorded (docs/architecture.md §15). */
    member: z
      .object({
        g: z.string().min(1),
        s: z.number().int().min(0),
        p: z.number().int().min(0),
        n: z.number().int().min(1).optional(),
      })
      .optional(),
    /** A group's completion job: the group it completes. */
    completes: z.string().min(1).optional(),
    /** A debounced or singleton kind's job: its key (§19); its item carries its payload. */
    coalesceKey: z.string().min(1).optional(),
    /** A singleton job: jobs of its key that must end before it starts (§19). */
    after: z.array(z.string().min(1)).max(20).optional(),
    /** A replay's job: the job it runs again (§21). */
    replayOf: z.string().min(1).optional(),
    /** Its producer's W3C trace context, `traceparent[;tracestate]` (lib/observability/tracing.ts). */
    trace: z.string().min(1).max(600).optional(),
    /** A flow-controlled kind's job: its flow key (§20). */
    flowKey: z.string().min(1).optional(),
    /** The start its key's rate reserved for it (ms): it doesn't take from the rate again (§20). */
    rateSlot: z.number().optional(),
    /** A batch kind's job: its key, and whether it is counted in the key's backlog (§18). */
    batchKey: z.string().min(1).max(256).optional(),
    inBacklog: z.boolean().optional(),
    /** The kind's delivery lane when it is not fenced (docs/architecture.md §16). */
    lane: z.enum(["lean", "at-least-once", "fire-and-forget"]).optional(),
  })
  // A message carries its payload or the key of its object, exactly one of the two.
  .refine((m) => (m.payload === undefined) !== (m.payloadObject === undefined), {
    message: "a job message carries payload or payloadObject",
  })
  // Only the job's own payload object: a message naming any other key (another job's payload, a
  // result, anything in the bucket) is not a job message, so nothing reads that key for it.
  .refine((m) => m.payloadObject === undefined || isClaimKeyOf(m.payloadObject, m.id, "payload"), {
    message: "payloadObject is not this job's own payload object (claims/<days>d/<job id>/payload)",
    path: ["payloadObject"],
  });
export type JobMessage = z.infer<typeof JobMessage>;

/** Every UTF-16 code unit outside ASCII, surrogate halves included, one at a time. */
const NON_ASCII = /[\u0080-\uffff]/g;
const escapeUnit = (unit: string) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** JSON text as pure ASCII: each non-ASCII UTF-16 unit becomes a `\uXXXX` escape. Still the same JSON. */
const asciiJson = (json: string) => json.replace(NON_ASCII, escapeUnit);

/**
 * The body of every SQS message skyforge sends: the message's JSON written as pure ASCII, every
 * non-ASCII UTF-16 code unit as a `\uXXXX` escape. SQS refuses some characters JSON allows (real SQS:
 * U+FFFE, U+FFFF and lone surrogates; the local emulator: everything past U+FFFD, so every emoji);
 * as escapes they pass any SQS, and JSON.parse gives the same value back. Outside string literals
 * JSON text is ASCII already, so escaping every non-ASCII unit keeps it valid JSON.
 */
export function encodeMessageBody(message: JobMessage): string {
  return asciiJson(JSON.stringify(message));
}

/** Parses a body sent by encodeMessageBody (plain JSON); undefined when it isn't a job message. */
export function parseJobMessage(body: string): JobMessage | undefined {
  try {
    const parsed = JobMessage.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The version a body claims when it is newer than this code reads (a rollback met a message a later
 * version sent): such a message is refused and kept, not dropped as "not a job". undefined otherwise.
 */
export function newerMessageVersion(body: string): number | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const v = typeof value === "object" && value !== null ? (value as { v?: unknown }).v : undefined;
  return typeof v === "number" && v > STORED_FORMATS.message ? v : undefined;
}

/** Why a body is not a job message (for the log line that drops it): its first issue, or "not JSON". */
export function jobMessageProblem(body: string): string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return "not JSON";
  }
  const issue = JobMessage.safeParse(value).error?.issues[0];
  return issue ? `${issue.path.join(".") || "(body)"}: ${issue.message}` : "none";
}

/** The fields a claim needs to build the job item when the enqueue's own write hasn't landed. */
export function seedFromMessage(msg: JobMessage): JobSeed {
  return {
    id: msg.id,
    kind: msg.kind,
    queue: msg.queue,
    maxAttempts: msg.maxAttempts,
    priority: msg.priority,
    createdAt: msg.createdAt,
    runAt: msg.runAt,
    ...(msg.timeoutSeconds !== undefined ? { timeoutSeconds: msg.timeoutSeconds } : {}),
    ...(msg.startBy !== undefined ? { startBy: msg.startBy } : {}),
    ...(msg.uniqueKey !== undefined ? { uniqueKey: msg.uniqueKey } : {}),
    ...(msg.payloadObject
      ? { payloadObject: msg.payloadObject }
      : msg.payloadRef
        ? { payloadRef: true }
        : { payload: msg.payload }),
    ...(msg.member ? { member: msg.member } : {}),
    ...(msg.completes ? { completes: msg.completes } : {}),
    ...(msg.batchKey !== undefined ? { batchKey: msg.batchKey } : {}),
    ...(msg.inBacklog ? { inBacklog: true } : {}),
    ...(msg.coalesceKey !== undefined ? { coalesceKey: msg.coalesceKey } : {}),
    ...(msg.after?.length ? { after: msg.after } : {}),
    ...(msg.flowKey !== undefined ? { flowKey: msg.flowKey } : {}),
    ...(msg.replayOf !== undefined ? { replayOf: msg.replayOf } : {}),
    ...(msg.trace !== undefined ? { trace: msg.trace } : {}),
  };
}
