import { round } from "./bench-config.ts";
import type { DebounceRun, DebounceWindow } from "./bench-debounce.ts";
import { costPerUnit } from "./bench-usage.ts";

/**
 * The debounce scenario's figures (scripts/bench-debounce.ts): per enqueue, beside a plain job's,
 * for the table and the JSON line.
 */

/** One window's figures per unit (an enqueue, or a plain job). */
function perUnit(w: DebounceWindow, n: number) {
  const priced = costPerUnit(w.whole, n);
  return {
    wcu: w.whole.wcu / n,
    writes: w.whole.ddbWrite.requests / n,
    reads: w.whole.ddbRead.requests / n,
    rcu: w.whole.rcu / n,
    sqs: w.whole.sqsBilled / n,
    lambda: (w.whole.workerInvocations + w.whole.enqueueInvocations) / n,
    enqueueWcu: w.enqueue.wcu / n,
    enqueueWrites: w.enqueue.ddbWrite.requests / n,
    enqueueReads: w.enqueue.ddbRead.requests / n,
    enqueueSqs: w.enqueue.sqsBilled / n,
    usdPerMillion: priced.cost.usdPerMillionJobs,
    usdPerMillionMeasured: priced.variants.measured.asCounted.usdPerMillionJobs,
  };
}

export function analyseDebounce(r: DebounceRun) {
  const d = perUnit(r.debounced, r.enqueues);
  const plain = perUnit(r.plain, r.plain.ids.length);
  return {
    ...r,
    d,
    plainPerJob: plain,
    runsPerEnqueue: r.runs / r.enqueues,
    /** The enqueue's own writes beyond a plain enqueue's: the coalesce lock, the burst's job revised. */
    extraWcuPerEnqueue: d.enqueueWcu - plain.enqueueWcu,
    /** Its reads beyond a plain enqueue's (none): the lock's strongly consistent read, each time. */
    extraReadsPerEnqueue: d.enqueueReads - plain.enqueueReads,
    /** Everything an enqueue causes (its share of the run too), less a plain job's whole life. */
    wholeWcuVsPlainJob: d.wcu - plain.wcu,
  };
}

export type DebounceAnalysis = ReturnType<typeof analyseDebounce>;

export const debounceJson = (a: DebounceAnalysis) => ({
  enqueues: a.enqueues,
  keys: a.keys,
  jobs: a.debounced.created,
  runs: a.runs,
  runsPerEnqueue: round(a.runsPerEnqueue, 4),
  wcuPerEnqueue: round(a.d.wcu, 4),
  dynamodbWritesPerEnqueue: round(a.d.writes, 4),
  dynamodbReadsPerEnqueue: round(a.d.reads, 4),
  sqsPerEnqueue: round(a.d.sqs, 4),
  enqueueWcuPerEnqueue: round(a.d.enqueueWcu, 4),
  plainEnqueueWcuPerJob: round(a.plainPerJob.enqueueWcu, 4),
  extraWcuPerEnqueue: round(a.extraWcuPerEnqueue, 4),
  extraReadsPerEnqueue: round(a.extraReadsPerEnqueue, 4),
  plainWcuPerJob: round(a.plainPerJob.wcu, 4),
  usdPerMillionEnqueues: round(a.d.usdPerMillion, 4),
  usdPerMillionPlainJobs: round(a.plainPerJob.usdPerMillion, 4),
});

export function printDebounceTable(a: DebounceAnalysis): void {
  const { d, plainPerJob: p } = a;
  const f = (x: number) => round(x, 4);
  const rows: [string, string][] = [
    [
      "enqueues",
      `${a.enqueues} over ${a.keys} keys in bursts (trailing, period ${a.periodSeconds} s, max delay ${a.maxDelaySeconds} s)`,
    ],
    [
      "jobs / runs",
      `${a.debounced.created} jobs made, ${a.debounced.joined} enqueues joined one; ${a.runs} runs`,
    ],
    ["runs per enqueue", `${f(a.runsPerEnqueue)}`],
    [
      "per enqueue, all told",
      `wcu ${f(d.wcu)} (${f(d.writes)} writes)  reads ${f(d.reads)} (rcu ${f(d.rcu)})  sqs ${f(d.sqs)}  lambda ${f(d.lambda)}`,
    ],
    [
      "per enqueue, the enqueue",
      `wcu ${f(d.enqueueWcu)} (${f(d.enqueueWrites)} writes)  reads ${f(d.enqueueReads)}  sqs ${f(d.enqueueSqs)}`,
    ],
    [
      "plain job (bench-noop)",
      `wcu ${f(p.wcu)} (${f(p.writes)} writes)  reads ${f(p.reads)}  sqs ${f(p.sqs)}; its enqueue: wcu ${f(p.enqueueWcu)}  reads ${f(p.enqueueReads)}`,
    ],
    [
      "extra wcu per enqueue",
      `${f(a.extraWcuPerEnqueue)} over a plain enqueue's (reads ${f(a.extraReadsPerEnqueue)} more); all told ${f(a.wholeWcuVsPlainJob)} beside a plain job`,
    ],
    [
      "usdPerMillionEnqueues",
      `$${d.usdPerMillion.toFixed(4)}  (plain job: $${p.usdPerMillion.toFixed(4)}/M; measured durations: $${d.usdPerMillionMeasured.toFixed(4)})`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: debounce scenario, local stack");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}
