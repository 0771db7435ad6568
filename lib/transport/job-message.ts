import { z } from "zod";
import type { JobSeed } from "../store/job-item.ts";

/**
 * The SQS message body. It carries everything needed to build the job item, because the message is
 * sent before the item is written: if the enqueue dies in between, the worker builds the job from it.
 */
export const JobMessage = z.object({
  v: z.literal(1),
  id: z.string().min(1),
  kind: z.string().min(1),
  queue: z.string().min(1),
  maxAttempts: z.number().int().min(1),
  priority: z.enum(["normal", "critical"]),
  createdAt: z.number(),
  runAt: z.number(),
  timeoutSeconds: z.number().int().optional(),
  uniqueKey: z.string().optional(),
  /** Payload JSON; the source of truth for the handler. */
  payload: z.string(),
  /** The payload was too large to inline and also lives in its own item. */
  payloadRef: z.boolean().optional(),
});
export type JobMessage = z.infer<typeof JobMessage>;

export function parseJobMessage(body: string): JobMessage | undefined {
  try {
    const parsed = JobMessage.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
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
    ...(msg.uniqueKey !== undefined ? { uniqueKey: msg.uniqueKey } : {}),
    ...(msg.payloadRef ? { payloadRef: true } : { payload: msg.payload }),
  };
}
