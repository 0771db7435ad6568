import { prices } from "../bench/prices.ts";
import type { ClassStats } from "../bench/write-ledger.ts";
import { DEFAULT_KIND, DEFAULT_PAYLOAD_BYTES } from "./bench-args.ts";
import {
  ASSUMED_ENQUEUE_CALL_MS,
  ASSUMED_GROUP_CREATE_EXTRA_MS,
  ASSUMED_WORKER_BATCH_MS,
  DURATION_MODE,
  mean,
  percentile,
  round,
} from "./bench-config.ts";
// Type-only: erased at run time, so loading the report never runs a scenario.
import type { GroupAnalysis } from "./bench-group.ts";

/** The group scenario's part of `npm run bench`: its table, and its field of the JSON line. */

const usd = (x: number) => `$${x.toFixed(4)}`;

/** Status-index writes dynalite does not bill, at the on-demand write price, per million children. */
const indexUsdPerMillion = (a: GroupAnalysis) =>
  (a.writes.indexWriteUnits / a.n) * prices.dynamodb.usdPerMillionWriteRequestUnits;

export function printGroupTable(
  a: GroupAnalysis,
  logCounts: ReadonlyMap<string, number>,
  extraNotes: readonly string[] = [],
): void {
  const { groups, children, concurrency } = a.scenario;
  const w = a.writes;
  const perChild = (x: number) => (x / a.n).toFixed(4);
  const cls = (s: ClassStats) =>
    `${perChild(s.requests)} writes, ${perChild(s.writeUnits)} WCU (${s.requests} requests, ${s.errors} lost conditions)`;
  const rows: [string, string][] = [
    [
      "children (measured window)",
      `${a.n}: ${groups} groups of ${children} ${a.scenario.kind ?? DEFAULT_KIND}, ${a.scenario.payloadBytes ?? DEFAULT_PAYLOAD_BYTES}-byte payloads, one engine.groups.create each, ${concurrency} in flight at a time`,
    ],
    ["childrenPerSecond", `${a.childrenPerSecond.toFixed(1)}  (first create → last completion start)`],
    [
      "completion lag p50 / p99",
      `${a.lagMs.p50} / ${a.lagMs.p99} ms over ${a.lagMs.samples} groups (max ${a.lagMs.max}; last child's finishedAt → completion job's startedAt)`,
    ],
    [
      "  to its handler p50 / p99",
      `${a.handlerLagMs.p50} / ${a.handlerLagMs.p99} ms  (as the bench's completion kind noted it)`,
    ],
    [
      "requestsPerChild sqs",
      `${perChild(a.sqsRequests)}  (billed in 64 KB chunks: ${perChild(a.sqsBilled)}; idle polls excluded)`,
    ],
    [
      "requestsPerChild dynamodbWrite",
      `${w.perChild.toFixed(4)}  (plain job: ${w.plain.writesPerJob.toFixed(4)})`,
    ],
    ["requestsPerChild dynamodbRead", perChild(a.ddbRead.requests)],
    [
      "requestsPerChild lambda",
      `${perChild(a.workerInvocations + a.enqueueInvocations)}  (worker ${a.workerInvocations} + create ${a.enqueueInvocations} invocations)`,
    ],
    ["wcuPerChild", `${w.wcuPerChild.toFixed(4)}  (plain job: ${w.plain.wcuPerJob.toFixed(4)})`],
    ["rcuPerChild", perChild(a.rcu)],
    [
      "extra writes per child",
      `${w.extraPerChild.toFixed(4)} requests, ${w.extraWcuPerChild.toFixed(4)} WCU over a plain job (design: 1 + 2/25 = 1.08 + the group index)`,
    ],
    ["  child job items", cls(w.byClass.childJob)],
    ["  slices", cls(w.byClass.slice)],
    ["  group items", cls(w.byClass.group)],
    ["  completion jobs", cls(w.byClass.completionJob)],
    ["  other items", cls(w.byClass.other)],
    [
      "  status index (estimate)",
      `${perChild(w.indexWriteUnits)} WCU, ${usd(indexUsdPerMillion(a))}/M children — not billed by dynalite, not in usdPerMillionChildren`,
    ],
    [
      "usdPerMillionChildren",
      `${usd(a.cost.usdPerMillionJobs)}  (${DURATION_MODE} durations; with the index estimate ${usd(a.cost.usdPerMillionJobs + indexUsdPerMillion(a))})`,
    ],
    ["  sqs", usd(a.cost.breakdown.sqs)],
    ["  dynamodb writes", usd(a.cost.breakdown.dynamodbWrite)],
    ["  dynamodb reads", usd(a.cost.breakdown.dynamodbRead)],
    ["  lambda requests", usd(a.cost.breakdown.lambdaRequests)],
    ["  lambda duration", usd(a.cost.breakdown.lambdaDuration)],
    [
      "  by assumption",
      `assumed ${usd(a.variants.assumed.asCounted.usdPerMillionJobs)}, measured ${usd(a.variants.measured.asCounted.usdPerMillionJobs)}; w/o emulator re-reads ${usd(a.variants.assumed.awsLike.usdPerMillionJobs)} / ${usd(a.variants.measured.awsLike.usdPerMillionJobs)}`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: group scenario (engine.groups.create, same stack and workers)");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);

  console.log("\n  requests in the group window");
  const header = ["operation", "requests", "per child", "errors", "WCU", "RCU", "unmetered"];
  console.log(
    `  ${header[0]?.padEnd(34)} ${header
      .slice(1)
      .map((h) => h.padStart(9))
      .join(" ")}`,
  );
  for (const [op, s] of Object.entries(a.operations)) {
    const cells = [
      s.requests,
      perChild(s.requests),
      s.errors,
      round(s.writeUnits, 2),
      round(s.readUnits, 2),
      s.unmetered,
    ];
    console.log(`  ${op.padEnd(34)} ${cells.map((c) => String(c).padStart(9)).join(" ")}`);
  }

  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const notes = [
    `the window runs from the first create until every group has finished and every message is deleted; it holds every SDK request of the scenario: the creates, the workers (children, their slice and group records, the completion jobs), ${a.emptyReceives} idle long polls left out as in the single-kind figure (${a.windowSeconds.toFixed(1)} s window).`,
    `extra writes are measured two ways: this window's write requests per child minus the single-kind window's per job, and by the item each write landed on (slices, group items, completion jobs), from the keys the SDK sent.`,
    `status index: a group item stays in the byStatus index until it finishes; each write of it is priced as DynamoDB would (ALL projection, ~100 B index overhead, 1 WCU per started KB; a write that sets an index key moves the entry: 2 writes). Job items of this path are never indexed.`,
    `lambda duration (${DURATION_MODE} in the headline): assumed ${ASSUMED_WORKER_BATCH_MS} ms per worker batch as for plain jobs (a child's batch also records it in its slice, one more round trip); a create is one enqueue invocation, assumed ${ASSUMED_ENQUEUE_CALL_MS} ms per 100 children + ${ASSUMED_GROUP_CREATE_EXTRA_MS} ms. Measured locally: worker batch p50 ${ms(percentile(a.batchMs, 50))}, mean ${ms(mean(a.batchMs))}; create p50 ${ms(percentile(a.enqueueCallMs, 50))}, mean ${ms(mean(a.enqueueCallMs))}.`,
    `completion lag: one sample per group, ${a.lagMs.samples} samples (p99 of so few is their maximum). ${
      a.scenario.concurrency === 1
        ? "One group at a time: each completion job is enqueued on a drained queue, so the lag is the group machinery's own (the last child's slice record, its slice done, the completion begun, its job enqueued, received and claimed)."
        : `${a.scenario.concurrency} groups in flight: a completion job also waits behind the other groups' queued children, as on a busy queue.`
    }`,
    "scheduled functions (reaper, cleanup, cron) are stopped for the group window: their cost is per minute, not per child (npm run bench:ops), and no group here needs them.",
  ];
  notes.push(...extraNotes);
  for (const [message, count] of logCounts)
    notes.push(`stack log in the group window: ${count} × ${message}`);
  console.log("\n  notes");
  for (const note of notes) console.log(`  - ${note}`);
}

const r4 = (x: number) => round(x, 4);
const classJson = (s: ClassStats, n: number) => ({
  writes: r4(s.requests / n),
  wcu: r4(s.writeUnits / n),
});

/** The `group` field of the JSON line. */
export function groupJson(a: GroupAnalysis) {
  const n = a.n;
  const w = a.writes;
  return {
    groups: a.scenario.groups,
    childrenPerGroup: a.scenario.children,
    groupsInFlight: a.scenario.concurrency,
    childrenPerSecond: round(a.childrenPerSecond, 1),
    completionLagMs: { p50: a.lagMs.p50, p99: a.lagMs.p99, samples: a.lagMs.samples },
    requestsPerChild: {
      sqs: r4(a.sqsRequests / n),
      dynamodbWrite: r4(w.perChild),
      dynamodbRead: r4(a.ddbRead.requests / n),
      lambda: r4((a.workerInvocations + a.enqueueInvocations) / n),
    },
    wcuPerChild: r4(w.wcuPerChild),
    rcuPerChild: r4(a.rcu / n),
    extraWritesPerChild: r4(w.extraPerChild),
    extraWcuPerChild: r4(w.extraWcuPerChild),
    writesPerChildByItem: {
      childJob: classJson(w.byClass.childJob, n),
      slice: classJson(w.byClass.slice, n),
      group: classJson(w.byClass.group, n),
      completionJob: classJson(w.byClass.completionJob, n),
      other: classJson(w.byClass.other, n),
    },
    indexWcuPerChildEstimate: r4(w.indexWriteUnits / n),
    usdPerMillionChildren: r4(a.cost.usdPerMillionJobs),
    usdPerMillionChildrenWithIndexEstimate: r4(a.cost.usdPerMillionJobs + indexUsdPerMillion(a)),
  };
}
