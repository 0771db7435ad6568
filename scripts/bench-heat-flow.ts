import { HEAT_DEBOUNCE_FLOW_KIND } from "../bench/flow-heat-kinds.ts";
import type { App } from "../lib/declarations/define-app.ts";
import type { LocalStack } from "../local/stack.ts";
import { payload } from "./bench-config.ts";
import { type BurstCount, enqueueAll, type HeatOptions, type Run, waitOrHeal } from "./bench-heat-drive.ts";
import { reportJob } from "./bench-limits.ts";

/**
 * The scale model's flow-control scenarios (docs/guide/scale.md, "Flow control"): a tenant's flood,
 * the multi-limit mix of `tenant-report`, and a debounced burst on one key under a flow limit. `app`
 * holds the app's kinds (tenant-echo, tenant-report) and the bench's debounced kind
 * (bench/flow-heat-kinds.ts). Each job sleeps 0 ms: what is metered is the keys' traffic, and a
 * flooded key's drain at 2 runs at once is then bounded by its hand-overs, not by its handler.
 */

export const FLOOD_TENANT = "tenant-a";
/** tenant-echo gives a `gold-` tenant 4 places and any other 2: one of each among the quiet ones. */
export const QUIET_TENANTS = ["tenant-b", "tenant-c", "tenant-d", "tenant-e", "gold-tenant-f"] as const;
/** The one document (and its tenant) the debounced burst revises. */
export const HOT_DOC = "hot-doc";

/**
 * The flood's shape for `jobs`: three tenths of it one tenant's backlog (300 at the bench's 1 000, a
 * few hundred: enough for the meter, and its drain at 2 runs at once is what the scenario's time is),
 * and a fiftieth each for the quiet tenants. So the flooded tenant's are three jobs in four.
 */
export function floodShape(jobs: number) {
  return { flood: Math.max(1, Math.round(jobs * 0.3)), quietEach: Math.max(1, Math.round(jobs / 50)) };
}

/** The mix's jobs: half of `jobs` (500 at the bench's 1 000), 5 a user over the 100 users. */
export const mixJobs = (jobs: number) => Math.max(1, Math.round(jobs / 2));

const tenantJob = (tenant: string, seq: number) => ({
  kind: "tenant-echo",
  payload: { tenant, seq, sleepMs: 0 },
});

/**
 * tenant-report's jobs as the limits bench spreads them (20 tenants, 100 users, each of one tenant),
 * each taking 1 to 5 tokens: `jobs` of them spend far less than the `llm` rate's burst of 20 000, so
 * the rate admits every job at once (its bucket's traffic is metered, not a minute's wait on it).
 */
export const mixJob = (i: number) => {
  const job = reportJob(i, 0);
  return { ...job, payload: { ...job.payload, tokens: 1 + (i % 5) } };
};

export function flowHeatScenarios(app: App, options: HeatOptions): [string, () => Run][] {
  const { jobs, timeoutMs } = options;
  /** A run that enqueues with `enqueue` and waits for `jobs` of what it made, healing a stall. */
  const run = (what: string, enqueue: (stack: LocalStack) => Promise<number | BurstCount>) => (): Run => {
    let reaperRuns = 0;
    return {
      app,
      reaperRuns: () => reaperRuns,
      drive: async (stack) => {
        const count = await enqueue(stack);
        const made = typeof count === "number" ? count : count.jobs;
        reaperRuns = await waitOrHeal(stack, made, what, timeoutMs);
        return count;
      },
    };
  };
  return [
    [
      "tenant flood",
      // The flooded tenant's backlog first, in calls of 100 (parked at its enqueue once its 2 places
      // are taken), then each quiet tenant's, as the flood bench sends them.
      run("tenant flood", (stack) => {
        const { flood, quietEach } = floodShape(jobs);
        return enqueueAll(stack, [
          ...Array.from({ length: flood }, (_, i) => tenantJob(FLOOD_TENANT, i)),
          ...QUIET_TENANTS.flatMap((t) => Array.from({ length: quietEach }, (_, i) => tenantJob(t, i))),
        ]);
      }),
    ],
    [
      "multi-limit mix",
      run("multi-limit mix", (stack) =>
        enqueueAll(
          stack,
          Array.from({ length: mixJobs(jobs) }, (_, i) => mixJob(i)),
        ),
      ),
    ],
    [
      "debounced burst on one key",
      // `jobs` revisions of one document, back to back: each joins the key's waiting job until its
      // maximum delay closes the burst, and the next starts a new job. Its figures are per enqueue:
      // what a key's arrival rate costs, whatever number of runs the bursts come to.
      run("debounced burst", async (stack) => {
        const requests = Array.from({ length: jobs }, (_, i) => ({
          kind: HEAT_DEBOUNCE_FLOW_KIND,
          payload: { ...payload(i, 256), doc: HOT_DOC, tenant: FLOOD_TENANT },
        }));
        return { enqueues: jobs, jobs: await enqueueAll(stack, requests) };
      }),
    ],
  ];
}
