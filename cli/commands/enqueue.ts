import { Command } from "commander";
import { action } from "../context.ts";
import { UsageError } from "../exit-codes.ts";
import type { JobDefaults } from "../jsonl.ts";
import { integer, isoTime, jsonValue, priority } from "../options.ts";
import { bulkEnqueue } from "./bulk-enqueue.ts";

interface EnqueueOptions {
  payload?: unknown;
  queue?: string;
  delay?: number;
  runAt?: string;
  uniqueKey?: string;
  maxAttempts?: number;
  priority?: number | "normal" | "critical";
  timeout?: number;
  file?: string;
  concurrency: number;
  progress: boolean;
}

/** `skyforge enqueue KIND --payload JSON …` (POST /jobs) or `skyforge enqueue --file jobs.jsonl` (bulk). */
export function enqueueCommand(): Command {
  return new Command("enqueue")
    .description(
      "enqueue one job (POST /jobs), or with --file every line of a JSONL file, 100 per request (POST /jobs/batch)",
    )
    .argument("[kind]", "the job's kind (not with --file: each line names its own)")
    .option("--payload <json>", "the payload, as JSON", jsonValue)
    .option("--queue <name>", "the queue (default: the kind's)")
    .option("--delay <seconds>", "start no sooner than this many seconds from now", integer(0))
    .option("--run-at <time>", "start no sooner than this ISO time (instead of --delay)", isoTime)
    .option("--unique-key <key>", "while a job with this key is not finished, answer it instead (duplicate)")
    .option(
      "--max-attempts <n>",
      "attempts before the job is dead, 1..100 (default: the kind's)",
      integer(1, 100),
    )
    .option(
      "--priority <priority>",
      'the job\'s priority: 1..5 (default 3; higher starts first), "normal" (3) or "critical" (5, and the pool grows for it)',
      priority,
    )
    .option("--timeout <seconds>", "the run's time limit (default: the kind's)", integer(1))
    .option("--file <path>", "a JSONL file of enqueue requests, one per line ('-' reads stdin)")
    .option("--concurrency <n>", "with --file: batch requests in flight at once", integer(1, 32), 4)
    .option("--no-progress", "with --file: no progress on stderr")
    .addHelpText(
      "after",
      `
Each line of a --file is one POST /jobs request: {"kind":"echo","payload":{"n":1},"queue":"default"}.
--queue, --delay, --run-at, --priority, --max-attempts and --timeout apply to lines that don't set them.
Blank lines are skipped. The summary lists every line that was not enqueued, with the API's code
(or invalid_json), and the command exits 1 if there is any.`,
    )
    .action(
      action<[string | undefined], EnqueueOptions>(async (ctx, kind, o) => {
        const defaults: JobDefaults = {
          ...(o.queue !== undefined ? { queue: o.queue } : {}),
          ...(o.delay !== undefined ? { delaySeconds: o.delay } : {}),
          ...(o.runAt !== undefined ? { runAt: o.runAt } : {}),
          ...(o.priority !== undefined ? { priority: o.priority } : {}),
          ...(o.maxAttempts !== undefined ? { maxAttempts: o.maxAttempts } : {}),
          ...(o.timeout !== undefined ? { timeoutSeconds: o.timeout } : {}),
        };
        if (o.file !== undefined) {
          if (kind !== undefined)
            throw new UsageError("give a kind or --file, not both: each line names its kind");
          if (o.payload !== undefined || o.uniqueKey !== undefined) {
            throw new UsageError("--payload and --unique-key are per job: put them in the file's lines");
          }
          return bulkEnqueue(ctx, {
            file: o.file,
            defaults,
            concurrency: o.concurrency,
            progress: o.progress,
          });
        }
        if (kind === undefined)
          throw new UsageError("name the job's kind (skyforge enqueue echo --payload '{}'), or give --file");
        const { job, duplicate, debounced } = await ctx.client.enqueue(kind, o.payload as never, {
          ...defaults,
          ...(o.uniqueKey !== undefined ? { uniqueKey: o.uniqueKey } : {}),
        });
        ctx.output.result({ ...job, duplicate, ...(debounced ? { debounced } : {}) }, () =>
          debounced
            ? `joined job ${job.id} (${job.kind} on ${job.queue}, key ${job.coalesceKey}): it runs for this enqueue at ${job.runAt}`
            : duplicate
              ? `duplicate: job ${job.id} (${job.kind} on ${job.queue}, ${job.status}) already has unique key ${job.uniqueKey}`
              : `enqueued ${job.id} (${job.kind} on ${job.queue}): ${job.status}${job.status === "scheduled" ? ` until ${job.runAt}` : ""}`,
        );
        return undefined;
      }),
    );
}
