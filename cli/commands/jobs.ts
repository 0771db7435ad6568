import { Command, Option } from "commander";
import { type JobStatus, type JobView, jobStatuses } from "../../client/vocabulary.ts";
import { action } from "../context.ts";
import { integer, jsonValue, timeOrAgo } from "../options.ts";
import { inlineJson, keyValues, shortTime, table } from "../output.ts";
import { stepsCommand, waitingText } from "./durable.ts";
import { jobsReplayCommand } from "./jobs-replay.ts";

interface ListOptions {
  queue?: string;
  status?: JobStatus;
  tag?: string;
  kind?: string;
  key?: string;
  since?: string;
  until?: string;
  error?: string;
  limit: number;
  cursor?: string;
  all?: boolean;
}

/**
 * `skyforge jobs ls|get|cancel|retry|resume|replay|steps`: GET /jobs, GET /jobs/{id}, POST /jobs/{id}/cancel|retry|resume,
 * POST /jobs/replay (cli/commands/jobs-replay.ts), GET /jobs/{id}/steps (cli/commands/durable.ts).
 */
export function jobsCommand(): Command {
  const jobs = new Command("jobs").description("list jobs, show one, cancel or retry it, replay ended jobs");

  jobs
    .command("ls")
    .description(
      "find jobs (GET /jobs), newest first; every filter given must hold. With --tag it reads the tag index; with --queue and --status scheduled|dead|paused the status index; otherwise it scans the table (docs/guide/finding-runs.md)",
    )
    .option("--tag <tag>", "only jobs carrying this tag")
    .option("--kind <kind>", "only jobs of this kind")
    .addOption(new Option("--status <status>", "only jobs in this status").choices(jobStatuses))
    .option("--key <key>", "only jobs of this flow key")
    .option(
      "--since <time>",
      "created at or after: an ISO time, or a duration ago (90s, 30m, 1h, 2d)",
      timeOrAgo(),
    )
    .option("--until <time>", "created before: an ISO time, or a duration ago", timeOrAgo())
    .option("--error <text>", "only jobs whose last error contains this text")
    .option("--queue <name>", "only this queue's jobs")
    .option("--limit <n>", "jobs per page, 1..100", integer(1, 100), 25)
    .option("--cursor <cursor>", "the page after the one that printed this cursor")
    .option("--all", "follow the cursor to the end instead of printing one page")
    .action(
      action<[], ListOptions>(async ({ client, output }, o) => {
        const query = {
          ...(o.queue ? { queue: o.queue } : {}),
          ...(o.status ? { status: o.status } : {}),
          ...(o.tag ? { tag: o.tag } : {}),
          ...(o.kind ? { kind: o.kind } : {}),
          ...(o.key ? { key: o.key } : {}),
          ...(o.since ? { createdAfter: o.since } : {}),
          ...(o.until ? { createdBefore: o.until } : {}),
          ...(o.error ? { error: o.error } : {}),
          limit: o.limit,
        };
        let page = await client.jobs.search({ ...query, ...(o.cursor ? { cursor: o.cursor } : {}) });
        const items = [...page.items];
        while (o.all && page.cursor) {
          page = await client.jobs.search({ ...query, cursor: page.cursor });
          items.push(...page.items);
        }
        const cursor = page.cursor;
        output.result({ items, ...(cursor ? { cursor } : {}) }, () => {
          // A tag search stops after a bounded read and may hand a cursor back with no match yet.
          const listed =
            items.length > 0 ? jobTable(items) : cursor ? "no matching jobs in this part" : "no jobs";
          return cursor ? `${listed}\nmore: add --cursor ${cursor} (or --all)` : listed;
        });
        return undefined;
      }),
    );

  jobs
    .command("get")
    .description("show one job: payload, result, error, attempts and times (GET /jobs/{id})")
    .argument("<id>", "the job's id")
    .action(
      action<[string], object>(async ({ client, output }, id) => {
        const job = await client.get(id);
        output.result(job, () => jobDetail(job));
        return undefined;
      }),
    );

  jobs
    .command("cancel")
    .description(
      "cancel a job: at once if it is queued or scheduled, at its next heartbeat if it is running; a finished job answers 409",
    )
    .argument("<id>", "the job's id")
    .action(
      action<[string], object>(async ({ client, output }, id) => {
        const job = await client.cancel(id);
        output.result(job, () => {
          if (job.cancel === "cancelled") return `cancelled ${job.id}`;
          if (job.cancel === "requested") {
            return `cancel requested for ${job.id}: it is running and stops at its next heartbeat, unless it finishes first`;
          }
          return `${job.id} was already cancelled`;
        });
        return undefined;
      }),
    );

  jobs
    .command("retry")
    .description("queue a dead or cancelled job again, its attempts reset; any other status answers 409")
    .argument("<id>", "the job's id")
    .action(
      action<[string], object>(async ({ client, output }, id) => {
        const job = await client.retry(id);
        output.result(job, () => `retried ${job.id}: ${job.status} again, attempts reset`);
        return undefined;
      }),
    );

  jobs
    .command("resume")
    .description(
      "run a paused job again (its attempts ran out on a kind with onExhausted pause), attempts reset; any other status answers 409",
    )
    .argument("<id>", "the job's id")
    .option(
      "--payload <json>",
      "a new payload for its next runs, checked against its kind's schema",
      jsonValue,
    )
    .action(
      action<[string, { payload?: unknown }], object>(async ({ client, output }, id, options) => {
        const job = await client.resume(
          id,
          options.payload === undefined ? {} : { payload: options.payload },
        );
        output.result(job, () => `resumed ${job.id}: ${job.status} again, attempts reset`);
        return undefined;
      }),
    );

  jobs.addCommand(jobsReplayCommand());
  jobs.addCommand(stepsCommand());

  return jobs;
}

function jobTable(items: readonly JobView[]): string {
  return table(
    ["ID", "KIND", "QUEUE", "STATUS", "ATTEMPTS", "CREATED", "FINISHED", "ERROR"],
    items.map((j) => [
      j.id,
      j.kind,
      j.queue,
      j.status,
      `${j.attempts}/${j.maxAttempts}`,
      shortTime(j.createdAt),
      shortTime(j.finishedAt),
      j.lastError && j.lastError.length > 50 ? `${j.lastError.slice(0, 49)}…` : j.lastError,
    ]),
  );
}

export function jobDetail(j: JobView): string {
  return keyValues([
    ["id", j.id],
    ["kind", j.kind],
    ["queue", j.queue],
    ["status", j.cancelRequested && j.status === "running" ? "running (cancel requested)" : j.status],
    ["attempts", `${j.attempts}/${j.maxAttempts}`],
    ["priority", j.priority],
    ["unique key", j.uniqueKey],
    ["created", shortTime(j.createdAt)],
    ["run at", shortTime(j.runAt)],
    ["started", shortTime(j.startedAt)],
    ["finished", shortTime(j.finishedAt)],
    ["last error", j.lastError],
    ["waiting", waitingText(j.waiting)],
    ["history", historyText(j)],
    ["payload", inlineJson(j.payload, Number.POSITIVE_INFINITY)],
    ["result", inlineJson(j.result, Number.POSITIVE_INFINITY)],
  ]);
}

/** Each attempt on a line of its own: number, start, outcome, why, who ran it. */
function historyText(j: JobView): string | undefined {
  if (!j.history?.length) return undefined;
  const dropped = j.historyDropped ? [`(${j.historyDropped} earlier attempts not kept)`] : [];
  const lines = j.history.map((a) =>
    [`#${a.attempt}`, shortTime(a.startedAt), a.outcome, a.error, a.runner].filter(Boolean).join("  "),
  );
  return [...dropped, ...lines].join("\n");
}
