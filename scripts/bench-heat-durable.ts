import {
  HEAT_EVENT,
  HEAT_EVENT_KIND,
  HEAT_INVOKE_KIND,
  HEAT_TOKEN_KIND,
  madeTokens,
} from "../bench/durable-heat-kinds.ts";
import { BENCH_STEPS_KIND, STEPS_PER_JOB } from "../bench/durable-kind.ts";
import type { App } from "../lib/declarations/define-app.ts";
import type { LocalStack } from "../local/stack.ts";
import { payload } from "./bench-config.ts";
import {
  enqueueAll,
  type HeatOptions,
  type Run,
  waitForSucceeded,
  waitForTotal,
} from "./bench-heat-drive.ts";

/**
 * The scale model's durable scenarios (docs/guide/scale.md, "Durable jobs"): steps, token waits,
 * event waits and kept events on one event pair, and child jobs. `app` has the durable heat kinds
 * (bench/durable-heat-kinds.ts). The one-pair scenarios put every job on one event name and match,
 * the hottest case there is: `options.jobs` waiters (1 000 in the bench) on one pair.
 */
export function durableHeatScenarios(app: App, options: HeatOptions): [string, () => Run][] {
  const { jobs, timeoutMs } = options;
  const seqs = Array.from({ length: jobs }, (_, i) => i);
  return [
    [
      `durable, ${STEPS_PER_JOB} steps a job`,
      () => ({
        app,
        drive: async (stack) => {
          const n = await enqueueAll(
            stack,
            seqs.map((i) => ({ kind: BENCH_STEPS_KIND, payload: payload(i, 256) })),
          );
          await waitForSucceeded(stack, n, "durable steps", timeoutMs);
          return n;
        },
      }),
    ],
    [
      "durable, token waits",
      () => ({
        app,
        drive: async (stack) => {
          madeTokens.clear();
          const n = await enqueueAll(
            stack,
            seqs.map((seq) => ({ kind: HEAT_TOKEN_KIND, payload: { seq } })),
          );
          await waitForTotal(stack, "suspended", n, "token waits", timeoutMs);
          for (const token of madeTokens.values()) {
            const secret = new URL(token.url, "http://x").searchParams.get("secret") ?? "";
            await stack.engine.durable.completeToken(token.id, secret, { ok: true });
          }
          await waitForSucceeded(stack, n, "token waits", timeoutMs);
          return n;
        },
      }),
    ],
    [
      `durable, ${jobs} event waiters on one pair`,
      () => ({
        app,
        // Every job waits first; then one event resumes them all (a page of 100 waiters at a time).
        drive: async (stack) => {
          const n = await enqueueAll(stack, waitingJobs(jobs));
          await waitForTotal(stack, "suspended", n, "event waiters", timeoutMs);
          await deliverToAll(stack);
          await waitForSucceeded(stack, n, "event waiters", timeoutMs);
          return n;
        },
      }),
    ],
    [
      `durable, ${jobs} kept events on one pair`,
      () => ({
        app,
        // An event a job, all kept before any wait begins: each wait takes the oldest from the
        // pair's buffer within its lookback (no event finds a waiter).
        drive: async (stack) => {
          for (const i of seqs) await stack.engine.durable.deliverEvent(event(i));
          const n = await enqueueAll(stack, waitingJobs(jobs));
          await waitForSucceeded(stack, n, "kept events", timeoutMs);
          return n;
        },
      }),
    ],
    [
      "durable, child jobs (ctx.invoke)",
      () => ({
        app,
        // Each parent and its echo child are two jobs.
        drive: async (stack) => {
          const parents = await enqueueAll(
            stack,
            seqs.map((seq) => ({ kind: HEAT_INVOKE_KIND, payload: { seq } })),
          );
          await waitForSucceeded(stack, 2 * parents, "child jobs", timeoutMs);
          return 2 * parents;
        },
      }),
    ],
  ];
}

/** The one pair every event scenario's jobs wait on. */
const HOT_MATCH = "hot";
const waitingJobs = (jobs: number) =>
  Array.from({ length: jobs }, () => ({ kind: HEAT_EVENT_KIND, payload: { match: HOT_MATCH } }));
const event = (seq: number) => ({ name: HEAT_EVENT, match: HOT_MATCH, data: { seq } });

/** One event to the hot pair, followed through its continuations until every waiter is met. */
async function deliverToAll(stack: LocalStack): Promise<void> {
  let answer = await stack.engine.durable.deliverEvent(event(0));
  while (answer.continuation !== undefined)
    answer = await stack.engine.durable.deliverEvent({ ...event(0), continuation: answer.continuation });
}
