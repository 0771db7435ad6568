import * as z from "zod";
import type { ErrorBody } from "../errors.ts";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";
import { jobStatuses } from "./status.ts";

/** Serialized payload cap: SQS message limit minus headroom for the envelope. */
export const MAX_PAYLOAD_BYTES = 200 * 1024;
export const MAX_BATCH = 100;

const jsonValue: z.ZodType<unknown> = z.json();

/** A job's run time limit, from an enqueue or a pool kind: up to SQS's 12 h visibility ceiling. */
export const TimeoutSeconds = z.number().int().min(1).max(MAX_VISIBILITY_SECONDS);
/** Attempts a job may take, from an enqueue or a kind declaration. */
export const MaxAttempts = z.number().int().min(1).max(100);

export const EnqueueRequest = z
  .object({
    kind: z.string().min(1).max(64),
    payload: jsonValue.optional(),
    queue: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,39}$/, "queue names are lowercase letters, digits and dashes")
      .optional(),
    delaySeconds: z
      .number()
      .int()
      .min(0)
      .max(365 * 24 * 3600)
      .optional(),
    runAt: z.iso.datetime({ offset: true }).optional(),
    uniqueKey: z.string().min(1).max(200).optional(),
    maxAttempts: MaxAttempts.optional(),
    priority: z.enum(["normal", "critical"]).optional(),
    timeoutSeconds: TimeoutSeconds.optional(),
  })
  .strict()
  .refine((r) => r.delaySeconds === undefined || r.runAt === undefined, {
    message: "give delaySeconds or runAt, not both",
    path: ["runAt"],
  });
export type EnqueueRequest = z.infer<typeof EnqueueRequest>;

/** The batch envelope is checked loosely so that one bad item doesn't fail the others. */
export const EnqueueBatchRequest = z.object({ jobs: z.array(z.unknown()).min(1).max(MAX_BATCH) }).strict();

export const JobStatusSchema = z.enum(jobStatuses);

export const JobView = z.object({
  id: z.string(),
  kind: z.string(),
  queue: z.string(),
  status: JobStatusSchema,
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  payload: jsonValue,
  createdAt: z.iso.datetime(),
  runAt: z.iso.datetime(),
  priority: z.enum(["normal", "critical"]).optional(),
  result: jsonValue.optional(),
  lastError: z.string().optional(),
  startedAt: z.iso.datetime().optional(),
  finishedAt: z.iso.datetime().optional(),
  uniqueKey: z.string().optional(),
  cancelRequested: z.boolean().optional(),
});
export type JobView = z.infer<typeof JobView>;

export interface EnqueueResult {
  job: JobView;
  duplicate: boolean;
}

export interface BatchResultItem {
  index: number;
  id?: string;
  duplicate?: boolean;
  error?: ErrorBody["error"];
}

export const ListJobsQuery = z
  .object({
    queue: z.string().min(1).optional(),
    status: JobStatusSchema.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(25),
    cursor: z.string().optional(),
  })
  .strict();
export type ListJobsQuery = z.infer<typeof ListJobsQuery>;
