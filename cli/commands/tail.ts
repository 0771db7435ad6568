import { setTimeout as sleep } from "node:timers/promises";
import { Command } from "commander";
import type { JobView } from "../../client/vocabulary.ts";
import { action } from "../context.ts";
import { errorReport, exitCodeFor, exitCodes } from "../exit-codes.ts";
import { positiveNumber } from "../options.ts";
import { ChangeTracker, renderChange } from "../tail-changes.ts";
import type { CliClient } from "../target.ts";

interface TailOptions {
  queue?: string;
  interval: number;
}

/**
 * `skyforge tail`: prints each job's changes of status as they happen, until Ctrl-C (exit 0). Every
 * `--interval` it reads all the jobs (GET /jobs, following the cursor to the end; one walk covers
 * every status, and costs what one walk filtered by status would, since a filtered scan reads the
 * same pages) and prints what changed since the last look. On AWS each look is a scan of the table:
 * a large table wants a longer interval.
 */
export function tailCommand(): Command {
  return new Command("tail")
    .description(
      "follow job state changes as they happen (Ctrl-C stops); --json prints one JSON object per change",
    )
    .option("--queue <name>", "only this queue's jobs")
    .option("--interval <seconds>", "time between two looks at the jobs", positiveNumber, 1)
    .action(
      action<[], TailOptions>(async ({ client, output, stopOnInterrupt }, o) => {
        const stop = stopOnInterrupt();
        const tracker = new ChangeTracker();
        let first = true;
        let outage: string | undefined;
        while (!stop.aborted) {
          let jobs: JobView[] | undefined;
          try {
            jobs = await allJobs(client, o.queue, stop);
          } catch (err) {
            // The first look failing is an answer (a bad --queue, no stack): exit with its code.
            // Later, an API that went away is waited for, said once.
            if (first || exitCodeFor(err) !== exitCodes.unavailable) throw err;
            const report = errorReport(err);
            if (outage === undefined) output.note(`tail: ${report.code}: ${report.message}; trying again`);
            outage = report.code;
          }
          if (jobs !== undefined && outage !== undefined) {
            output.note("tail: the API answers again");
            outage = undefined;
          }
          if (jobs === undefined && stop.aborted) break;
          if (jobs === undefined) {
            await sleep(o.interval * 1000, undefined, { signal: stop }).catch(() => {});
            continue;
          }
          for (const change of tracker.observe(jobs, new Date()))
            output.line(change, () => renderChange(change));
          if (first) {
            first = false;
            output.note(
              `tail: following ${tracker.size} jobs${o.queue ? ` on ${o.queue}` : ""}, every ${o.interval}s (Ctrl-C to stop)`,
            );
          }
          await sleep(o.interval * 1000, undefined, { signal: stop }).catch(() => {});
        }
        output.note("tail: stopped");
        return exitCodes.ok;
      }),
    );
}

/** Every job (of the queue), page after page; undefined when stopped halfway (that look is dropped). */
async function allJobs(
  client: CliClient,
  queue: string | undefined,
  stop: AbortSignal,
): Promise<JobView[] | undefined> {
  const jobs: JobView[] = [];
  let cursor: string | undefined;
  do {
    if (stop.aborted) return undefined;
    const page = await client.list({
      ...(queue ? { queue } : {}),
      limit: 100,
      view: "summary",
      ...(cursor ? { cursor } : {}),
    });
    jobs.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return jobs;
}
