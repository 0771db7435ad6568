import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addKind, copyProject, type ProjectCopy, projectRoot } from "../support/project-copy.ts";

/** The queues' lease in the copy: short, so takeovers happen within seconds. */
export const LEASE_SECONDS = 3;
export const LEASE_MS = LEASE_SECONDS * 1000;
/** The observer's Lambda-tier kind (queue "default") and its pool kind (queue "heavy"). */
export const LAMBDA_KIND = "observe";
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

export interface FaultProjectCopy extends ProjectCopy {
  /** The SKYFORGE_POOL_CONFIG file that declares the observer pool kind. */
  poolConfig: string;
}

function replaceExactly(text: string, from: string, to: string, times: number, what: string): string {
  const count = text.split(from).length - 1;
  if (count !== times)
    throw new Error(`${what}: expected ${times} × ${JSON.stringify(from)}, found ${count}`);
  return text.split(from).join(to);
}

/**
 * A temporary copy of the project (test/support/project-copy.ts) with the observer kind added the
 * README's way (one file and one line in app/index.ts), the queues' lease shortened to
 * LEASE_SECONDS, and a pool config that declares the observer child.
 */
export function makeProjectCopy(): FaultProjectCopy {
  const copy = copyProject("skyforge-fault-");
  try {
    return { ...copy, poolConfig: fillCopy(copy) };
  } catch (err) {
    copy.remove();
    throw err;
  }
}

/** Makes the suite's edits in the copy; the pool config's path. */
function fillCopy(copy: ProjectCopy): string {
  const { dir } = copy;
  addKind(copy, "observe.ts", "observe", observerKind);
  const queuesPath = join(dir, "app/queues.ts");
  const queues = readFileSync(queuesPath, "utf8");
  writeFileSync(
    queuesPath,
    replaceExactly(queues, "leaseSeconds: 30,", `leaseSeconds: ${LEASE_SECONDS},`, 3, queuesPath),
  );

  const poolConfig = join(dir, "fault-pool.json");
  const child = join(projectRoot, "test/fixtures/children/observer.mjs");
  writeFileSync(
    poolConfig,
    JSON.stringify({
      kinds: {
        [POOL_KIND]: {
          argv: [process.execPath, child],
          soft: POOL_CHILDREN,
          hard: POOL_CHILDREN,
          timeoutSeconds: 120,
          maxAttempts: 5,
        },
      },
    }),
  );
  return poolConfig;
}
