import { app } from "../app/index.ts";
import { prices } from "../bench/prices.ts";
import { type MeterSnapshot, RequestMeter } from "../bench/request-meter.ts";
import type { Engine } from "../lib/services/engine-services.ts";
import type { SearchFilter } from "../lib/store/search-filter.ts";
import { searchJobs } from "../lib/store/search-ops.ts";
import { startLocalStack } from "../local/stack.ts";
import type { ScenarioOutcome } from "./bench-all.ts";
import { BATCH, intEnv, payload } from "./bench-config.ts";
import { type Clients, engineBeside } from "./bench-debounce.ts";

/**
 * The search scenario of `npm run bench` (docs/guide/finding-runs.md; `--scenario search`, run only
 * when named): JOBS plain echo jobs without tags, then JOBS with one tag and JOBS with three, each
 * set enqueued in calls of 100 through a producer on metered clients of its own (the queue paused, so
 * no run's writes mix in); the write units each set costs per job, and the difference a tag makes.
 * Then pages of 25 read through the store on a metered client: a tag's, a tag's with a kind and a
 * status (the job items read to test them), and a page of the table scan (no tag): read units per
 * page, beside the table's size. Sizes: BENCH_SEARCH_JOBS (default 1000) per set.
 */
const JOBS = Math.max(BATCH, Math.round(intEnv("BENCH_SEARCH_JOBS", 1000, BATCH) / BATCH) * BATCH);
const TAGS = 50;
const PAGE = 25;

const sum = (s: MeterSnapshot, pick: (op: string) => boolean, field: "writeUnits" | "readUnits") =>
  Object.entries(s.operations)
    .filter(([op]) => op.startsWith("dynamodb:") && pick(op))
    .reduce(
      (n, [, stats]) =>
        n + stats[field] + (field === "writeUnits" ? stats.assumedWriteUnits : stats.assumedReadUnits),
      0,
    );
const writeUnits = (s: MeterSnapshot) => sum(s, () => true, "writeUnits");
const readUnits = (s: MeterSnapshot) => sum(s, () => true, "readUnits");
const requests = (s: MeterSnapshot) =>
  Object.entries(s.operations)
    .filter(([op]) => op.startsWith("dynamodb:"))
    .reduce((n, [, stats]) => n + stats.requests, 0);
const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

async function enqueueSet(producer: Engine, meter: RequestMeter, tags: (i: number) => string[]) {
  meter.reset();
  for (let start = 0; start < JOBS; start += BATCH) {
    const requests = Array.from({ length: BATCH }, (_, k) => {
      const i = start + k;
      const own = tags(i);
      return { kind: "echo", payload: payload(i, 256), ...(own.length ? { tags: own } : {}) };
    });
    const results = await producer.producer.enqueueBatch(requests);
    const refused = results.find((r) => !r.id);
    if (refused) throw new Error(`search scenario: enqueue refused: ${JSON.stringify(refused.error)}`);
  }
  const snap = meter.snapshot();
  return { wcuPerJob: writeUnits(snap) / JOBS, dynamodbRequestsPerJob: requests(snap) / JOBS };
}

async function page(reader: Engine, meter: RequestMeter, filter: SearchFilter) {
  meter.reset();
  const answer = await searchJobs(reader.store, filter, { limit: PAGE });
  const snap = meter.snapshot();
  return { items: answer.items.length, readUnits: round(readUnits(snap), 2), requests: requests(snap) };
}

export async function searchScenario(): Promise<ScenarioOutcome> {
  const stack = await startLocalStack({ app, port: 0, autoTick: false });
  const clients: Clients[] = [];
  try {
    const paused = await fetch(`${stack.url}/queues/default/pause`, { method: "POST" });
    if (!paused.ok) throw new Error(`search scenario: pausing the default queue answered ${paused.status}`);
    const enqueueMeter = new RequestMeter();
    const producer = engineBeside(stack, app, clients, enqueueMeter);
    const untagged = await enqueueSet(producer, enqueueMeter, () => []);
    const oneTag = await enqueueSet(producer, enqueueMeter, (i) => [`tag-${i % TAGS}`]);
    const threeTags = await enqueueSet(producer, enqueueMeter, (i) => [
      `tag-${i % TAGS}`,
      `tenant-${i % 7}`,
      `order-${i}`,
    ]);
    const readMeter = new RequestMeter();
    const reader = engineBeside(stack, app, clients, readMeter);
    const tablePage = await page(reader, readMeter, { status: "queued" });
    const tagPage = await page(reader, readMeter, { tag: "tenant-3" });
    const tagKindStatusPage = await page(reader, readMeter, {
      tag: "tenant-3",
      kind: "echo",
      status: "queued",
    });
    const extraOne = oneTag.wcuPerJob - untagged.wcuPerJob;
    const extraThree = threeTags.wcuPerJob - untagged.wcuPerJob;
    const usdPerMillion = (wcu: number) => round(wcu * prices.dynamodb.usdPerMillionWriteRequestUnits, 3);
    const json = {
      searchJobsPerSet: JOBS,
      searchTableJobs: JOBS * 3,
      wcuPerUntaggedJob: round(untagged.wcuPerJob),
      wcuPerJobOneTag: round(oneTag.wcuPerJob),
      wcuPerJobThreeTags: round(threeTags.wcuPerJob),
      extraWcuPerTaggedJob: round(extraOne),
      extraWcuPerJobThreeTags: round(extraThree),
      extraWcuPerTaggedJobGoal: 0.5,
      extraUsdPerMillionTaggedJobs: usdPerMillion(extraOne),
      dynamodbRequestsPerUntaggedJob: round(untagged.dynamodbRequestsPerJob),
      dynamodbRequestsPerJobOneTag: round(oneTag.dynamodbRequestsPerJob),
      readUnitsPerTagPage: tagPage.readUnits,
      readUnitsPerTagKindStatusPage: tagKindStatusPage.readUnits,
      readUnitsPerScanPage: tablePage.readUnits,
      searchPageSize: PAGE,
    };
    const failures =
      extraOne > json.extraWcuPerTaggedJobGoal
        ? { search: `a tagged job costs ${round(extraOne)} WCU more than an untagged one (goal ≤ 0.5)` }
        : undefined;
    return {
      json,
      print: () => {
        console.log(
          `search: ${JOBS} echo jobs untagged, ${JOBS} with 1 tag, ${JOBS} with 3 (of ${TAGS}+ tags)`,
        );
        console.log(
          `  enqueue WCU/job: untagged ${json.wcuPerUntaggedJob}, 1 tag ${json.wcuPerJobOneTag}, 3 tags ${json.wcuPerJobThreeTags}`,
        );
        console.log(
          `  extra per tagged job: ${json.extraWcuPerTaggedJob} WCU (goal ≤ 0.5), 3 tags ${json.extraWcuPerJobThreeTags}; $${json.extraUsdPerMillionTaggedJobs}/M tagged jobs`,
        );
        console.log(
          `  read units per page of ${PAGE}: tag ${tagPage.readUnits} (${tagPage.requests} requests), tag+kind+status ${tagKindStatusPage.readUnits}, scan of ${JOBS * 3} jobs ${tablePage.readUnits} (${tablePage.requests} requests)`,
        );
      },
      ...(failures ? { failures } : {}),
    };
  } finally {
    for (const c of clients) {
      c.dynamodb.destroy();
      c.sqs.destroy();
      c.s3.destroy();
    }
    await stack.stop();
  }
}
