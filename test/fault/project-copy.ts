import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addKind, copyProject, type ProjectCopy, projectRoot } from "../support/project-copy.ts";

/** The queues' lease in the copy: short, so takeovers happen within seconds. */
export const LEASE_SECONDS = 3;
export const LEASE_MS = LEASE_SECONDS * 1000;
/**
 * The batch queue's lease in the copy. After a kill a gathering batch comes back within its
 * 2 s window plus one hold (lease + 1 s), then gathers for another window and waits for the kind's
 * 1 s: 2 × lease must cover 2 + (lease + 1) + 2 + 1, so the lease is at least 6 s. A call killed
 * mid-run holds its items and its key's slot for a lease, and a delivery that finds the key's slots
 * taken tries again 2 s later (and gathers again): 12 s leaves those their room.
 */
export const BATCH_LEASE_SECONDS = 12;
export const BATCH_LEASE_MS = BATCH_LEASE_SECONDS * 1000;
/** The observer's Lambda-tier kind (queue "default"), its batch kind (queue "batch") and its pool kind (queue "heavy"). */
export const LAMBDA_KIND = "observe";
export const BATCH_KIND = "observe-batch";
export const POOL_KIND = "observe-child";
/** Warm children of the pool kind: a pool scenario keeps its running jobs at or under this. */
export const POOL_CHILDREN = 6;

/**
 * The observer as a Lambda-tier kind: one line when a run starts, one when it ends, and it sleeps
 * `ms` in between unless ctx.signal aborts it (cancel, lost lease, timeout). The log path is read
 * from the environment because this file belongs to the test's copy only.
 */
const observerKind = `import { appendFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineKind } from "../define.ts";

const logPath = process.env.FAULT_OBSERVER_LOG as string;
const note = (event: string, jobId: string, attempt: number, outcome?: string) =>
  appendFileSync(
    logPath,
    \`\${JSON.stringify({ event, jobId, attempt, pid: process.pid, at: Date.now(), tier: "lambda", outcome })}\\n\`,
  );

export const observe = defineKind({
  name: "${LAMBDA_KIND}",
  payload: z.object({ ms: z.number().int().min(0).max(600_000) }),
  queue: "default",
  maxAttempts: 5,
  timeoutSeconds: 120,
  handler: async ({ ms }, ctx) => {
    note("start", ctx.job.id, ctx.attempt);
    try {
      await delay(ms, undefined, { signal: ctx.signal });
    } catch (err) {
      note("end", ctx.job.id, ctx.attempt, \`aborted:\${String(ctx.signal.reason)}\`);
      throw err;
    }
    note("end", ctx.job.id, ctx.attempt, "ok");
    return { pid: process.pid, attempt: ctx.attempt };
  },
});
`;

/**
 * The observer as a batch kind: a key's items run as one call, each item noted as a run of its own
 * job (start and end lines under the item's id and attempt), after `ms` of the call.
 */
const batchObserverKind = `import { appendFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineBatchKind } from "../define.ts";

const logPath = process.env.FAULT_OBSERVER_LOG as string;
const note = (event: string, jobId: string, attempt: number, outcome?: string) =>
  appendFileSync(
    logPath,
    \`\${JSON.stringify({ event, jobId, attempt, pid: process.pid, at: Date.now(), tier: "lambda", outcome })}\\n\`,
  );

export const observeBatch = defineBatchKind({
  name: "${BATCH_KIND}",
  payload: z.object({ key: z.string().min(1), ms: z.number().int().min(0).max(600_000) }),
  queue: "batch",
  maxAttempts: 5,
  timeoutSeconds: 120,
  key: (payload) => payload.key,
  batch: { maxSize: 50, maxWaitSeconds: 1, policy: "duration", maxKeyConcurrency: 4 },
  handler: async (items, ctx) => {
    for (const item of items) note("start", item.id, item.attempt);
    const ms = Math.max(...items.map((item) => item.payload.ms));
    try {
      await delay(ms, undefined, { signal: ctx.signal });
    } catch (err) {
      for (const item of items) note("end", item.id, item.attempt, \`aborted:\${String(ctx.signal.reason)}\`);
      throw err;
    }
    for (const item of items) note("end", item.id, item.attempt, "ok");
    return items.map((item) => ({ attempt: item.attempt }));
  },
});
`;

export type FaultProjectCopy = ProjectCopy;

function replaceExactly(text: string, from: string, to: string, times: number, what: string): string {
  const count = text.split(from).length - 1;
  if (count !== times)
    throw new Error(`${what}: expected ${times} × ${JSON.stringify(from)}, found ${count}`);
  return text.split(from).join(to);
}

/**
 * A temporary copy of the project (test/support/project-copy.ts) with the observer kind added the
 * README's way (one file and one line in app/index.ts), the queues' lease shortened to
 * LEASE_SECONDS (BATCH_LEASE_SECONDS on the batch queue). Each scenario writes its own pool config
 * (writePoolConfig).
 */
export function makeProjectCopy(): FaultProjectCopy {
  const copy = copyProject("skyforge-fault-");
  try {
    fillCopy(copy);
    return copy;
  } catch (err) {
    copy.remove();
    throw err;
  }
}

/** Makes the suite's edits in the copy. */
function fillCopy(copy: ProjectCopy): void {
  const { dir } = copy;
  addKind(copy, "observe.ts", "observe", observerKind);
  addKind(copy, "observe-batch.ts", "observeBatch", batchObserverKind);
  const queuesPath = join(dir, "app/queues.ts");
  const queues = readFileSync(queuesPath, "utf8");
  const [before, batchAndAfter] = queues.split('name: "batch",') as [string, string];
  const batchEnd = batchAndAfter.indexOf("},");
  const shortened = [
    replaceExactly(before, "leaseSeconds: 30,", `leaseSeconds: ${LEASE_SECONDS},`, 1, queuesPath),
    replaceExactly(
      batchAndAfter.slice(0, batchEnd),
      "leaseSeconds: 30,",
      `leaseSeconds: ${BATCH_LEASE_SECONDS},`,
      1,
      `${queuesPath} (batch queue)`,
    ),
    replaceExactly(
      batchAndAfter.slice(batchEnd),
      "leaseSeconds: 30,",
      `leaseSeconds: ${LEASE_SECONDS},`,
      1,
      queuesPath,
    ),
  ];
  writeFileSync(queuesPath, `${shortened[0]}name: "batch",${shortened[1]}${shortened[2]}`);
}

/**
 * The observer log's path as a pool kind declared in the app reads it, in the pool process: its
 * environment is an allowlist (local/pool-process.ts) without FAULT_OBSERVER_LOG, but with
 * SKYFORGE_POOL_CONFIG, the scenario's pool config, which lies beside the log (writePoolConfig).
 */
export const POOL_OBSERVER_LOG = `process.env.FAULT_OBSERVER_LOG ?? String(process.env.SKYFORGE_POOL_CONFIG).replace(/pool\\.json$/, "observer.log")`;

/**
 * A scenario's pool config, beside its observer log: the observer child kind, with the log's path in
 * the kind's own `env` (a child's environment is an allowlist, the pool's own variables withheld).
 */
export function writePoolConfig(path: string, logPath: string): void {
  const child = join(projectRoot, "test/fixtures/children/observer.mjs");
  writeFileSync(
    path,
    JSON.stringify({
      kinds: {
        [POOL_KIND]: {
          argv: [process.execPath, child],
          soft: POOL_CHILDREN,
          hard: POOL_CHILDREN,
          timeoutSeconds: 120,
          maxAttempts: 5,
          env: { FAULT_OBSERVER_LOG: logPath },
        },
      },
    }),
  );
}
