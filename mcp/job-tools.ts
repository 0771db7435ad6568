import * as z from "zod";
import { type AppNames, jobStatuses } from "../client/vocabulary.ts";
import { ReplayRequest } from "../lib/job/replay-schemas.ts";
import type { McpClient, McpTool } from "./tool.ts";

const jobId = z.object({ id: z.string().min(1).max(64).describe("the job's id") }).strict();
const queueName = z.object({ name: z.string().min(1).max(40).describe("the queue's name") }).strict();
const time = z.iso.datetime({ offset: true });

/**
 * GET /jobs's filters (docs/guide/mcp.md), the client's jobs.search options (SearchOptions): the
 * answer is `{ items, cursor? }`, newest first. The API judges their values (a cursor of another
 * search, createdAfter after createdBefore: its 400, passed on as the tool's error).
 */
const searchInput = z
  .object({
    tag: z.string().min(1).max(64).optional().describe("jobs carrying this tag"),
    kind: z.string().min(1).max(64).optional(),
    status: z.enum(jobStatuses).optional(),
    key: z.string().min(1).max(256).optional().describe("a flow key"),
    createdAfter: time.optional(),
    createdBefore: time.optional(),
    error: z.string().min(1).max(200).optional().describe("text in the job's last error"),
    limit: z.number().int().min(1).max(100).optional(),
    cursor: z.string().min(1).optional().describe("the cursor of the previous page of the same search"),
  })
  .strict();


/** The tools that read or change jobs, tokens, events and queues: one API call each. */
export function jobTools(client: McpClient): McpTool[] {
  return [
    {
      name: "get_job",
      title: "Get a job",
      description: "One job by id: kind, queue, status, payload, result, last error, attempts and times.",
      input: jobId,
      writes: false,
      async run(args) {
        const job = await client.get((args as z.infer<typeof jobId>).id);
        return { summary: `${job.kind} job ${job.id}: ${job.status}`, value: job, job };
      },
    },
    {
      name: "search_jobs",
      title: "Search jobs",
      description:
        "Jobs matching every filter given (tag, kind, status, flow key, creation time, error text), newest first, a page at a time: `{ items, cursor? }`.",
      input: searchInput,
      writes: false,
      async run(args) {
        // The input is checked against searchInput before run: its fields are jobs.search's filters.
        const page = await client.jobs.search(args as z.infer<typeof searchInput>);
        const more = page.cursor ? ", more with its cursor" : "";
        const count = page.items.length === 1 ? "1 job" : `${page.items.length} jobs`;
        return { summary: `${count}${more}`, value: page };
      },
    },
    {
      name: "job_steps",
      title: "A durable job's steps",
      description: "A durable job's recorded steps in order, and what it waits for (a sleep, a token, an event).",
      input: jobId,
      writes: false,
      async run(args) {
        const steps = await client.steps((args as z.infer<typeof jobId>).id);
        const waits = steps.waiting ? `, waiting for ${steps.waiting.for}` : "";
        return { summary: `job ${steps.jobId}: ${steps.status}, ${steps.steps.length} steps${waits}`, value: steps };
      },
    },
    {
      name: "list_queues",
      title: "List queues",
      description: "Every queue: its settings in force, whether it is paused, its live counts.",
      input: z.object({}).strict(),
      writes: false,
      async run() {
        const queues = await client.queues.list();
        const paused = queues.filter((q) => q.paused).length;
        return { summary: `${queues.length} queues, ${paused} paused`, value: { items: queues } };
      },
    },
    {
      name: "cancel_job",
      title: "Cancel a job",
      description:
        "Cancels a job: at once if it is queued or scheduled (a durable job's wait too), at its next heartbeat if it is running. An ended job is a conflict.",
      input: jobId,
      writes: true,
      async run(args) {
        const job = await client.cancel((args as z.infer<typeof jobId>).id);
        return { summary: `job ${job.id}: cancel ${job.cancel}`, value: job, job };
      },
    },
    {
      name: "replay_jobs",
      title: "Replay ended jobs",
      description:
        "Runs ended jobs (dead, cancelled or done) matching a filter again, each as a new job. A dry run unless dryRun is false: it lists the matches and enqueues nothing. A real replay needs a requestId (its retry then replays nothing twice).",
      input: ReplayRequest,
      // A dry run unless `dryRun: false` is given (then `requestId` is needed, as the API says).
      defaults: { dryRun: true },
      writes: true,
      async run(args) {
        const request = args as Parameters<McpClient["replay"]>[0];
        const dryRun = request.dryRun === true;
        const answer = await client.replay(request);
        const what = dryRun ? `dry run: ${answer.matched} jobs would be replayed` : `replayed ${answer.replayed} of ${answer.matched} jobs`;
        return { summary: `${what}${answer.cursor ? ", more with its cursor" : ""}`, value: { ...answer, dryRun } };
      },
    },
    {
      name: "complete_token",
      title: "Complete a wait token",
      description:
        "Completes a durable job's wait token with data, resuming the job: give the token's url (it carries its secret), or its id and secret.",
      input: z
        .object({
          token: z.string().min(1).max(2048).describe("the token's url, or its id"),
          secret: z.string().min(1).max(200).optional(),
          data: z.json().optional(),
        })
        .strict(),
      writes: true,
      async run(args) {
        const { token, secret, data } = args as { token: string; secret?: string; data?: unknown };
        const done = await client.completeToken(token, data ?? null, secret !== undefined ? { secret } : {});
        return { summary: `token ${done.id} completed${done.resumed ? `, job ${done.jobId} resumed` : ""}`, value: done };
      },
    },
    {
      name: "send_event",
      title: "Send an event",
      description: "Sends an event: every job waiting for this name and match resumes with its data.",
      input: z
        .object({
          name: z.string().min(1).max(128),
          match: z.string().min(1).max(256),
          data: z.json().optional(),
        })
        .strict(),
      writes: true,
      async run(args) {
        const { name, match, data } = args as { name: string; match: string; data?: unknown };
        const sent = await client.sendEvent(name, match, data);
        return { summary: `event ${name} (${match}) resumed ${sent.resumed} jobs`, value: sent };
      },
    },
    {
      name: "pause_queue",
      title: "Pause a queue",
      description: "Pauses a queue: its jobs wait, none starts, until it is resumed.",
      input: queueName,
      writes: true,
      async run(args) {
        const queue = await client.queues.pause((args as z.infer<typeof queueName>).name);
        return { summary: `queue ${queue.name} paused`, value: queue };
      },
    },
    {
      name: "resume_queue",
      title: "Resume a queue",
      description: "Resumes a paused queue: its jobs start again.",
      input: queueName,
      writes: true,
      async run(args) {
        const queue = await client.queues.resume((args as z.infer<typeof queueName>).name);
        return { summary: `queue ${queue.name} resumed`, value: queue };
      },
    },
  ];
}
