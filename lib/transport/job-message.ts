import * as z from "zod";
import { isClaimKeyOf } from "../claims/claim-keys.ts";
import { MESSAGE_FIELDS, seedFields } from "../store/job-field-copies.ts";
import { type FieldShape, JOB_FIELDS, type MessageFieldName } from "../store/job-fields.ts";
import type { JobSeed } from "../store/job-item.ts";
import { STORED_FORMATS } from "../store/stored-formats.ts";

/** The fields a message carries, each checked by its schema in the map of a job's fields. */
const MESSAGE_SHAPE = Object.fromEntries(
  MESSAGE_FIELDS.map((name) => [name, JOB_FIELDS[name].schema]),
) as FieldShape<MessageFieldName>;

/**
 * The SQS message body. It carries everything needed to build the job item, because the message is
 * sent before the item is written: if the enqueue dies in between, the worker builds the job from it.
 */
export const JobMessage = z
  .object({
    /** The message's format version (lib/store/stored-formats.ts): each this code reads, 1 up to its own. */
    v: z.number().int().min(1).max(STORED_FORMATS.message),
    ...MESSAGE_SHAPE,
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
export const seedFromMessage = (msg: JobMessage): JobSeed => seedFields(msg);
