import * as z from "zod";
import { clip, SkyforgeTransportError } from "./errors.ts";

/**
 * The shape of each success the client hands on: the fields its types promise, checked before a
 * caller reads them. A 2xx in another shape (a proxy's or a captive portal's JSON, a stub on the
 * wrong port, a different service) is not the API's answer: a SkyforgeTransportError naming what
 * is wrong, never a TypeError deep in a caller (the CLI's tables) or a job of `undefined` fields.
 * Loose: the API may add fields; only what is promised is checked, and payloads are not walked.
 */

const job = z.looseObject({
  id: z.string(),
  kind: z.string(),
  queue: z.string(),
  status: z.string(),
  attempts: z.number(),
  maxAttempts: z.number(),
  createdAt: z.string(),
  runAt: z.string(),
  lastError: z.string().optional(),
  uniqueKey: z.string().optional(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
});

const queue = z.looseObject({ name: z.string(), paused: z.boolean() });

const schedule = z.looseObject({
  name: z.string(),
  cron: z.string().optional(),
  timezone: z.string().optional(),
  kind: z.string().optional(),
  queue: z.string().optional(),
  enabled: z.boolean().optional(),
  nextRunAt: z.string().optional(),
  source: z.string().optional(),
  lastError: z.string().optional(),
});

const busyKey = z.looseObject({
  kind: z.string(),
  key: z.string(),
  limit: z.string().optional(),
  running: z.number(),
  waiting: z.number(),
  concurrency: z.number().optional(),
});
const busiestKey = busyKey.extend({ oldestWaitingSince: z.string().optional() });
const flowKey = busyKey.extend({
  rate: z
    .looseObject({ limit: z.number(), periodSeconds: z.number(), burst: z.number().optional() })
    .optional(),
  coolUntil: z.string().optional(),
});

const count = z.number();
const group = z.looseObject({
  id: z.string(),
  status: z.string(),
  failure: z.string(),
  counts: z.looseObject({ total: count, pending: count, done: count, dead: count, cancelled: count }),
  completionJobId: z.string().optional(),
});

const waiting = z.looseObject({
  for: z.string(),
  until: z.string().optional(),
  token: z.string().optional(),
  event: z.string().optional(),
  match: z.string().optional(),
});
const step = z.looseObject({
  name: z.string(),
  type: z.string(),
  status: z.string(),
  attempt: z.number(),
  at: z.string(),
  until: z.string().optional(),
});

const page = <T extends z.ZodType>(item: T) =>
  z.looseObject({ items: z.array(item), cursor: z.string().optional() });

export const answerShapes = {
  job,
  enqueued: job.extend({ duplicate: z.boolean(), debounced: z.boolean().optional() }),
  cancelled: job.extend({ cancel: z.string() }),
  jobPage: page(job),
  batch: z.looseObject({
    results: z.array(
      z.looseObject({
        index: z.number(),
        id: z.string().optional(),
        duplicate: z.boolean().optional(),
        debounced: z.boolean().optional(),
      }),
    ),
  }),
  queue,
  queueList: z.looseObject({ items: z.array(queue) }),
  flowKey,
  busiestKeys: z.looseObject({ items: z.array(busiestKey), truncated: z.literal(true).optional() }),
  schedule,
  scheduleList: z.looseObject({ items: z.array(schedule) }),
  group,
  createdGroup: group.extend({ duplicate: z.boolean() }),
  replay: z.looseObject({
    matched: z.number(),
    replayed: z.number(),
    jobs: z.array(z.looseObject({ from: z.string(), id: z.string().optional() })),
  }),
  jobSteps: z.looseObject({
    jobId: z.string(),
    status: z.string(),
    waiting: waiting.optional(),
    steps: z.array(step),
  }),
  token: z.looseObject({
    id: z.string(),
    jobId: z.string(),
    step: z.string(),
    status: z.string(),
    createdAt: z.string(),
    timeoutAt: z.string(),
    completedAt: z.string().optional(),
  }),
  tokenCompleted: z.looseObject({
    id: z.string(),
    jobId: z.string(),
    status: z.literal("completed"),
    resumed: z.boolean(),
  }),
  subscription: z.looseObject({ url: z.string(), token: z.string(), expiresAt: z.string() }),
  eventSent: z.looseObject({ resumed: z.number(), continuation: z.string().optional() }),
  waitingCounts: z.looseObject({
    waiting: z.array(
      z.looseObject({
        queue: z.string(),
        kind: z.string(),
        version: z.string().optional(),
        jobs: z.number(),
      }),
    ),
    complete: z.boolean(),
  }),
  childrenPage: page(z.looseObject({ id: z.string(), status: z.string(), lastError: z.string().optional() })),
} as const;

export type AnswerShape = (typeof answerShapes)[keyof typeof answerShapes];

/**
 * `body` when it has the answer's shape; else a transport error naming the request, the first field
 * that is wrong, and (clipped) what came back.
 */
export function checkAnswer(
  request: { method: string; path: string },
  status: number,
  body: unknown,
  shape: AnswerShape,
): unknown {
  const checked = shape.safeParse(body);
  if (checked.success) return body;
  const issue = checked.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "the answer";
  throw new SkyforgeTransportError(
    `${request.method} ${request.path} answered something that is not the skyforge API's answer (${where}: ${issue?.message ?? "unexpected"}): ${clip(JSON.stringify(body) ?? "nothing")}`,
    { status, body },
  );
}
