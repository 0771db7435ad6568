import * as z from "zod";
import { UsageError } from "../errors.ts";
import { MAX_PAYLOAD_BYTES } from "../job/schemas.ts";

/**
 * The line protocol between the pool and a child, in both directions one JSON object per line.
 * Request:  {"id","kind","attempt","payload"}
 * Response: {"id","status":"ok","result"?} | {"id","status":"error","message"}
 *         | {"id","status":"throttled","retry_after_secs","limit"?}
 *           (`limit`: the job's flow limit the partner answered for, as ThrottledError's)
 * A batch kind's request carries a call's items; its one reply line has one outcome per item id:
 * Request:  {"id":<call id>,"kind","key","items":[{"id","attempt","payload"}…]}
 * Response: {"id":<call id>,"items":[<a response as above, "id" the item's>…]}
 * Lines end at "\n" only (line-splitter.ts); U+2028 and U+2029 may appear raw or escaped inside
 * a JSON string, and the pool escapes them in what it writes.
 */
export interface ChildRequest {
  id: string;
  kind: string;
  attempt: number;
  payload: unknown;
}

const ChildReply = z.discriminatedUnion("status", [
  z.object({ id: z.string(), status: z.literal("ok"), result: z.json().optional() }),
  z.object({
    id: z.string(),
    status: z.literal("error"),
    message: z.string().default("the child reported an error"),
  }),
  z.object({
    id: z.string(),
    status: z.literal("throttled"),
    retry_after_secs: z.number().nonnegative().default(60),
    limit: z.string().min(1).max(32).optional(),
  }),
]);
export type ChildReply = z.infer<typeof ChildReply>;

/** A reply that can't belong to the request: the child is out of step with its stream. */
export interface Desync {
  desync: string;
}

/**
 * The longest line one job may take, a request or a reply: 4 MiB. A payload or result is at most
 * 1 MiB as JSON.stringify writes it; on a line it may grow up to threefold (an encoder that escapes
 * every non-ASCII character, Python's default, writes "é" as 6 bytes), and the last MiB holds the
 * envelope (ids, kind, status, an error's message).
 */
export const MAX_JOB_LINE_BYTES = 4 * MAX_PAYLOAD_BYTES;

/**
 * The longest line of all, a batch call's included (its items × MAX_JOB_LINE_BYTES, capped here):
 * 256 MiB, under the longest string V8 can hold (2^29 − 24 UTF-16 units), so a line that fits
 * always decodes. A child must read request lines this long; the demo children refuse longer ones.
 */
export const MAX_LINE_BYTES = 64 * MAX_JOB_LINE_BYTES;

/** The longest reply the pool reads for a request carrying `jobs` jobs (1 for a single job). */
export const replyLineLimit = (jobs: number): number =>
  Math.min(MAX_LINE_BYTES, Math.max(1, jobs) * MAX_JOB_LINE_BYTES);

/**
 * One request as a line: JSON with U+2028 and U+2029 escaped (JSON.stringify leaves them raw, and a
 * child reading lines with a splitter that ends lines at them, Node's readline among them, would
 * tear the request in two). They can only appear inside strings, where the escape means the same.
 * A line too long for any child to read is refused here, before anything is written.
 */
function encodeLine(request: ChildRequest | ChildBatchRequest): string {
  const json = JSON.stringify(request).replace(/[\u2028\u2029]/g, (c) =>
    c === "\u2028" ? "\\u2028" : "\\u2029",
  );
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_LINE_BYTES)
    throw new UsageError(
      `request ${request.id} is ${bytes} bytes as a line, over the ${MAX_LINE_BYTES} a child reads`,
    );
  return `${json}\n`;
}

export function encodeRequest(r: ChildRequest): string {
  return encodeLine(r);
}

const quote = (line: string) => JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line);

/**
 * Parses a reply line against its schema and checks it answers `expectedId` (a job's or a call's
 * id): an unparseable line, another shape or another id is a desync.
 */
function readLine<T extends { id: string }>(
  line: string,
  schema: z.ZodType<T>,
  shape: string,
  noun: "job" | "call",
  expectedId: string,
): T | Desync {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { desync: `unparseable reply ${quote(line)}` };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { desync: `reply is not a ${shape}: ${quote(line)}` };
  if (parsed.data.id !== expectedId) {
    return {
      desync: `reply for ${noun} ${quote(parsed.data.id)} while ${noun} ${quote(expectedId)} was asked`,
    };
  }
  return parsed.data;
}

/** Reads one response line for the request `expectedId`. An unparseable line or a foreign id is a desync. */
export function parseReply(line: string, expectedId: string): ChildReply | Desync {
  return readLine(line, ChildReply, "protocol response", "job", expectedId);
}

/** One item of a batch request: a job of the call's key. */
export interface ChildBatchItem {
  id: string;
  attempt: number;
  payload: unknown;
}

export interface ChildBatchRequest {
  /** The call's id (its batchId), not a job's. */
  id: string;
  kind: string;
  key: string;
  items: ChildBatchItem[];
}

/** A batch reply, its outcomes in the request's item order. */
export interface ChildBatchReply {
  id: string;
  items: ChildReply[];
}

const BatchReplyLine = z.object({ id: z.string(), items: z.array(ChildReply) });

/**
 * Reads the reply to a batch request: one outcome for each item id asked, no other. A missing,
 * foreign or repeated item id means the child has lost track of which answer is whose: a desync.
 */
export function parseBatchReply(line: string, request: ChildBatchRequest): ChildBatchReply | Desync {
  const parsed = readLine(line, BatchReplyLine, "batch response", "call", request.id);
  if ("desync" in parsed) return parsed;
  const byId = new Map<string, ChildReply>();
  for (const outcome of parsed.items) {
    if (byId.has(outcome.id)) return { desync: `item ${quote(outcome.id)} answered twice` };
    byId.set(outcome.id, outcome);
  }
  const asked = new Set(request.items.map((i) => i.id));
  const foreign = [...byId.keys()].filter((id) => !asked.has(id));
  if (foreign.length > 0) return { desync: `reply names items not asked: ${foreign.map(quote).join(", ")}` };
  const missing = request.items.filter((i) => !byId.has(i.id)).map((i) => quote(i.id));
  if (missing.length > 0) return { desync: `reply has no outcome for ${missing.join(", ")}` };
  return { id: request.id, items: request.items.map((i) => byId.get(i.id) as ChildReply) };
}

/** One request as written on a child's stdin, and how to read the line that answers it. */
export interface Exchange<R> {
  id: string;
  line: string;
  /** The longest reply line read for it; a longer one is a desync. */
  maxReplyBytes: number;
  read(line: string): R | Desync;
}

export const singleExchange = (request: ChildRequest): Exchange<ChildReply> => ({
  id: request.id,
  line: encodeRequest(request),
  maxReplyBytes: replyLineLimit(1),
  read: (line) => parseReply(line, request.id),
});

export const batchExchange = (request: ChildBatchRequest): Exchange<ChildBatchReply> => ({
  id: request.id,
  line: encodeLine(request),
  maxReplyBytes: replyLineLimit(request.items.length),
  read: (line) => parseBatchReply(line, request),
});
