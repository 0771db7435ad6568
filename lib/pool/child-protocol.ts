import * as z from "zod";

/**
 * The line protocol between the pool and a child, in both directions one JSON object per line.
 * Request:  {"id","kind","attempt","payload"}
 * Response: {"id","status":"ok","result"?} | {"id","status":"error","message"}
 *         | {"id","status":"throttled","retry_after_secs"}
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

/** Reads one response line for the request `expectedId`. An unparseable line or a foreign id is a desync. */
export function parseReply(line: string, expectedId: string): ChildReply | Desync {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { desync: `unparseable reply ${quote(line)}` };
  }
  const parsed = ChildReply.safeParse(json);
  if (!parsed.success) return { desync: `reply is not a protocol response: ${quote(line)}` };
  if (parsed.data.id !== expectedId) {
    return { desync: `reply for job ${quote(parsed.data.id)} while job ${quote(expectedId)} was asked` };
  }
  return parsed.data;
}
