import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The queues' lease in the copy: short, so takeovers happen within seconds. */
export const LEASE_SECONDS = 3;
export const LEASE_MS = LEASE_SECONDS * 1000;
/** The observer's Lambda-tier kind (queue "default") and its pool kind (queue "heavy"). */
export const LAMBDA_KIND = "observe";
export const POOL_KIND = "observe-child";
/** Warm children of the pool kind: a pool scenario keeps its running jobs at or under this. */
export const POOL_CHILDREN = 6;

const root = fileURLToPath(new URL("../..", import.meta.url));
const copied = [
  "app",
  "lib",
  "functions",
  "local",
  "bench",
  "scripts",
  "children",
  "package.json",
  "tsconfig.json",
];

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

export interface ProjectCopy {
  dir: string;
  /** The SKYFORGE_POOL_CONFIG file that declares the observer pool kind. */
  poolConfig: string;
  remove(): void;
}

function replaceExactly(text: string, from: string, to: string, times: number, what: string): string {
  const count = text.split(from).length - 1;
  if (count !== times)
    throw new Error(`${what}: expected ${times} × ${JSON.stringify(from)}, found ${count}`);
  return text.split(from).join(to);
}

/**
 * A temporary copy of the project, made the way test/e2e/add-kind.test.ts makes one, with the
 * observer kind added (one file and one line in app/index.ts), the queues' lease shortened to
 * LEASE_SECONDS, and a pool config that declares the observer child.
 */
export function makeProjectCopy(): ProjectCopy {
  const dir = mkdtempSync(join(tmpdir(), "skyforge-fault-"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    return { dir, poolConfig: fillCopy(dir), remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/** Copies the project into `dir` and makes the suite's edits; the pool config's path. */
function fillCopy(dir: string): string {
  for (const entry of copied) cpSync(join(root, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");

  writeFileSync(join(dir, "app/kinds/observe.ts"), observerKind);
  const indexPath = join(dir, "app/index.ts");
  const echoLine = '  (await import("./kinds/echo.ts")).echo,\n';
  const index = readFileSync(indexPath, "utf8");
  writeFileSync(
    indexPath,
    replaceExactly(
      index,
      echoLine,
      `${echoLine}  (await import("./kinds/observe.ts")).observe,\n`,
      1,
      indexPath,
    ),
  );
  const queuesPath = join(dir, "app/queues.ts");
  const queues = readFileSync(queuesPath, "utf8");
  writeFileSync(
    queuesPath,
    replaceExactly(queues, "leaseSeconds: 30,", `leaseSeconds: ${LEASE_SECONDS},`, 2, queuesPath),
  );

  const poolConfig = join(dir, "fault-pool.json");
  const child = join(root, "test/fixtures/children/observer.mjs");
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
