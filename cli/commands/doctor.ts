import { Command } from "commander";
import { action } from "../context.ts";
import {
  DEFAULT_KEY_LAG,
  type DoctorAlarm,
  type DoctorJob,
  type DoctorKey,
  type DoctorQueue,
  type DoctorSchedule,
  findProblems,
} from "../doctor-findings.ts";
import { exitCodes } from "../exit-codes.ts";
import { integer } from "../options.ts";
import { cloudWatchFor, stageAlarmsInAlarm } from "../stage-alarms.ts";
import type { CliClient, Target } from "../target.ts";

interface DoctorOptions {
  stuckAfter: number;
  overdueAfter: number;
  keyLagFactor: number;
  keyLagAfter: number;
}

/** Pages of 100 a listing reads at most: the scans behind GET /jobs are bounded per call, so is doctor. */
const MAX_PAGES = 20;

/** Keys per queue the lag check compares (GET /keys' most): the busiest, by jobs waiting. */
const KEYS_PER_QUEUE = 50;

/** Said in the output when doctor can't run the alarm check, not skipped silently. */
const NO_ALARMS_LOCALLY =
  "CloudWatch alarms in ALARM (a local stack has no alarms: run doctor with --stage to read a stage's)";

/** `skyforge doctor`: finds what is stuck or off, one line a finding with what to do; exit 1 when any. */
export function doctorCommand(): Command {
  return new Command("doctor")
    .description(
      "find what is stuck or off: runs past their lease, paused queues holding jobs, event sources off on queues not paused or without partial batch responses, visibility timeouts below what a run needs, dead letters waiting, overdue queues, failing schedules, flow keys waiting far longer than their peers, durable jobs paused because their handler no longer matches their journal, and on a stage its alarms in ALARM",
    )
    .option("--stuck-after <seconds>", "a run this long past its lease is stuck (default 60)", integer(0), 60)
    .option(
      "--overdue-after <seconds>",
      "a queued job this long past its due time makes its queue overdue (default 900)",
      integer(0),
      900,
    )
    .option(
      "--key-lag-factor <n>",
      "a flow key lags when its oldest job waited this many times the median of its queue's other busy keys (default 5)",
      integer(1),
      DEFAULT_KEY_LAG.factor,
    )
    .option(
      "--key-lag-after <seconds>",
      "… and at least this long (default 300)",
      integer(0),
      DEFAULT_KEY_LAG.minMs / 1000,
    )
    .addHelpText("after", `\nWithout --stage: ${NO_ALARMS_LOCALLY}.`)
    .action(
      action<[], DoctorOptions>(async ({ client, output, target }, options) => {
        const [queues, schedules] = await Promise.all([client.queues.list(), client.schedules.list()]);
        const keys = await busyKeys(client, queues);
        const alarms = await stageAlarms(target);
        const notChecked = alarms ? [] : [NO_ALARMS_LOCALLY];
        const running = await listAll(client, { status: "running" });
        const paused = await listAll(client, { status: "paused" });
        const oldestQueued: DoctorJob[] = [];
        const queuedCounts: Record<string, number> = {};
        for (const q of queues) {
          const queued = await listAll(client, { status: "queued", queue: q.name });
          queuedCounts[q.name] = queued.length;
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
          paused,
          oldestQueued,
          queuedCounts,
          now: Date.now(),
          stuckAfterMs: options.stuckAfter * 1000,
          overdueAfterMs: options.overdueAfter * 1000,
          keys,
          keyLag: { factor: options.keyLagFactor, minMs: options.keyLagAfter * 1000 },
          ...(alarms ? { alarms } : {}),
        });
        const checked = {
          queues: queues.length,
          schedules: schedules.length,
          running: running.length,
          keys: keys.length,
          ...(alarms ? { alarmsInAlarm: alarms.length } : {}),
        };
        output.result({ findings, checked, notChecked }, () =>
          [
            findings.length === 0
              ? `no problems found (${checked.queues} queues, ${checked.schedules} schedules, ${checked.running} running jobs)`
              : `${findings.length} problem(s) found:`,
            ...findings.map((f) => `- ${f.check}: ${f.message}\n  what to do: ${f.fix}`),
            ...(notChecked.length ? [`not checked: ${notChecked.join("; ")}`] : []),
          ].join("\n"),
        );
        return findings.length === 0 ? exitCodes.ok : exitCodes.itemsFailed;
      }),
    );
}

/** Every job of a listing, page by page (summaries: no payloads), up to MAX_PAGES pages. */
async function listAll(
  client: CliClient,
  query: { status: "running" | "queued" | "paused"; queue?: string },
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

/** Each queue's busiest flow keys (GET /keys), with the queue they wait on. */
async function busyKeys(client: CliClient, queues: readonly { name: string }[]): Promise<DoctorKey[]> {
  const perQueue = await Promise.all(
    queues.map(async (q) =>
      (await client.keys.busiest(q.name, KEYS_PER_QUEUE)).items.map((k) => ({ ...k, queue: q.name })),
    ),
  );
  return perQueue.flat();
}

/** A stage's alarms in ALARM; undefined where there are none to read (a local stack). */
async function stageAlarms(target: Target): Promise<DoctorAlarm[] | undefined> {
  if (!target.stage) return undefined;
  const cloudwatch = await cloudWatchFor(target.stage.region);
  try {
    return await stageAlarmsInAlarm(cloudwatch, target.stage.name);
  } finally {
    cloudwatch.destroy();
  }
}
