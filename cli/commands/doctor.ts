import { Command } from "commander";
import { action } from "../context.ts";
import { type DoctorJob, type DoctorQueue, type DoctorSchedule, findProblems } from "../doctor-findings.ts";
import { exitCodes } from "../exit-codes.ts";
import { integer } from "../options.ts";
import type { CliClient } from "../target.ts";

interface DoctorOptions {
  stuckAfter: number;
  overdueAfter: number;
}

/** Pages of 100 a listing reads at most: the scans behind GET /jobs are bounded per call, so is doctor. */
const MAX_PAGES = 20;

/** What the HTTP API doesn't show yet, so doctor can't check it (said in the output, not skipped silently). */
const NOT_CHECKED = [
  "CloudWatch alarms in ALARM",
  "keys waiting far longer than their peers (no flow keys yet)",
];

/** `skyforge doctor`: finds what is stuck or off, one line a finding with what to do; exit 1 when any. */
export function doctorCommand(): Command {
  return new Command("doctor")
    .description(
      "find what is stuck or off: runs past their lease, event sources off on queues not paused or without partial batch responses, visibility timeouts below what a run needs, dead letters waiting, overdue queues, failing schedules",
    )
    .option("--stuck-after <seconds>", "a run this long past its lease is stuck (default 60)", integer(0), 60)
    .option(
      "--overdue-after <seconds>",
      "a queued job this long past its due time makes its queue overdue (default 900)",
      integer(0),
      900,
    )
    .addHelpText("after", `\nNot checked yet (the HTTP API doesn't show them): ${NOT_CHECKED.join("; ")}.`)
    .action(
      action<[], DoctorOptions>(async ({ client, output }, options) => {
        const [queues, schedules] = await Promise.all([client.queues.list(), client.schedules.list()]);
        const running = await listAll(client, { status: "running" });
        const oldestQueued: DoctorJob[] = [];
        for (const q of queues) {
          const queued = await listAll(client, { status: "queued", queue: q.name });
          const oldest = queued.reduce<DoctorJob | undefined>(
            (a, j) => (a === undefined || Date.parse(j.runAt) < Date.parse(a.runAt) ? j : a),
            undefined,
          );
          if (oldest) oldestQueued.push(oldest);
        }
        const findings = findProblems({
          queues: queues as unknown as DoctorQueue[],
          schedules: schedules as unknown as DoctorSchedule[],
          running,
          oldestQueued,
          now: Date.now(),
          stuckAfterMs: options.stuckAfter * 1000,
          overdueAfterMs: options.overdueAfter * 1000,
        });
        const checked = { queues: queues.length, schedules: schedules.length, running: running.length };
        output.result({ findings, checked, notChecked: NOT_CHECKED }, () =>
          [
            findings.length === 0
              ? `no problems found (${checked.queues} queues, ${checked.schedules} schedules, ${checked.running} running jobs)`
              : `${findings.length} problem(s) found:`,
            ...findings.map((f) => `- ${f.check}: ${f.message}\n  what to do: ${f.fix}`),
            `not checked: ${NOT_CHECKED.join("; ")}`,
          ].join("\n"),
        );
        return findings.length === 0 ? exitCodes.ok : exitCodes.itemsFailed;
      }),
    );
}

/** Every job of a listing, page by page (summaries: no payloads), up to MAX_PAGES pages. */
async function listAll(
  client: CliClient,
  query: { status: "running" | "queued"; queue?: string },
): Promise<DoctorJob[]> {
  const jobs: DoctorJob[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.list({
      ...query,
      view: "summary",
      limit: 100,
      ...(cursor ? { cursor } : {}),
    } as Parameters<CliClient["list"]>[0]);
    jobs.push(...(answer.items as DoctorJob[]));
    cursor = answer.cursor;
    if (!cursor) break;
  }
  return jobs;
}
