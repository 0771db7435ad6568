import * as z from "zod";

/**
 * The line protocol between the pool and a child, in both directions one JSON object per line.
 * Request:  {"id","kind","attempt","payload"}
 * Response: {"id","status":"ok","result"?} | {"id","status":"error","message"}
 *         | {"id","status":"throttled","retry_after_secs"}
 * A batch kind's request carries a call's items; its one reply line has one outcome per item id:
 * Request:  {"id":<call id>,"kind","key","items":[{"id","attempt","payload"}…]}
 * Response: {"id":<call id>,"items":[<a response as above, "id" the item's>…]}
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
  }),
]);
export type ChildReply = z.infer<typeof ChildReply>;

/** A reply that can't belong to the request: the child is out of step with its stream. */
export interface Desync {
  desync: string;
}

export function encodeRequest(r: ChildRequest): string {
  return `${JSON.stringify(r)}\n`;
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
  read(line: string): R | Desync;
}

export const singleExchange = (request: ChildRequest): Exchange<ChildReply> => ({
  id: request.id,
  line: encodeRequest(request),
  read: (line) => parseReply(line, request.id),
});

export const batchExchange = (request: ChildBatchRequest): Exchange<ChildBatchReply> => ({
  id: request.id,
  line: `${JSON.stringify(request)}\n`,
  read: (line) => parseBatchReply(line, request),
});
