import * as nodeModule from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { missingSlowFiles, SlowFilesFirst } from "./test/support/slow-files-first.ts";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * Node's compile cache for every Node process the suite starts (workers, stacks, the CLI, SST's
 * deploy programs, tsc), through the environment they inherit: the suite starts the same modules
 * hundreds of times (one deploy program loads thousands of @pulumi/aws files). Five files of SST
 * programs, CLI runs, `npm start` and package builds, one run each: 133 CPU-s without it, 98 from an
 * empty cache, 84 warm. It lives in node_modules/.cache, so a fresh install starts it empty. Node
 * checks each entry against the file's content, so an edited file is compiled anew. (Node 20, the
 * system's, has no such cache: skipped there.)
 */
process.env.NODE_COMPILE_CACHE ??= join(root, "node_modules", ".cache", "skyforge-compile-cache");
nodeModule.enableCompileCache?.();

/**
 * Most of the suite waits (on emulators, child processes, leases), not on the CPU: on a 2-core
 * machine vitest's default of one worker ran the files one at a time (15 minutes). The unit,
 * store, integration and e2e files therefore share one pool of more workers than cores (the files
 * that build this repo's packages among them: they take turns at their build-and-pack steps,
 * test/support/packages-dist-lock.ts, not a phase of one worker of their own); and the fault suite
 * runs last and alone, two files at a time (one a core): its scenarios assert bounds of 2 × lease,
 * which the rest of the suite's load would eat into, and each scenario mostly waits (on leases,
 * ticks and restarts), so one file at a time left a core idle for four minutes.
 */
const SHARED_WORKERS = 4;

/** Checked before any file of any project runs: one line per missing thing (test/support/prerequisites.ts). */
const PREREQUISITES = "test/support/prerequisites.ts";

const shared = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: "forks",
  globalSetup: [PREREQUISITES] as string[],
} as const;

/** The files that run on both DynamoDB emulators (test/support/dynamo-backends.ts). */
const STORE_FILES = [
  "test/integration/store-*.test.ts",
  "test/integration/batch-key-store.test.ts",
  "test/integration/cron-store.test.ts",
  "test/integration/fence.test.ts",
  "test/integration/group-transitions.test.ts",
  "test/integration/rate-limit.test.ts",
  "test/integration/resume-waiting.test.ts",
];

const missing = missingSlowFiles(root);
if (missing.length)
  throw new Error(`test/support/slow-files-first.ts names files that are gone: ${missing.join(", ")}`);

export default defineConfig({
  test: {
    ...shared,
    sequence: { sequencer: SlowFilesFirst },
    projects: [
      // Group order 0 and one worker count: these projects' files run beside each other in one pool.
      {
        test: {
          ...shared,
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          maxWorkers: SHARED_WORKERS,
          // As the integration files: a worker runs its files in one process (a second a file less).
          // Each file starts and stops what it runs (stacks, servers, copies) in its own hooks, and
          // none patches a global or changes process.env or the working directory.
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          exclude: STORE_FILES,
          maxWorkers: SHARED_WORKERS,
          // As the unit files (below): a third less CPU a file. Each file starts and stops its own
          // emulators, stacks and pollers in its hooks, and none patches a global.
          isolate: false,
        },
      },
      {
        // One DynamoDB Local for all of them (a JVM per file was seconds of CPU each).
        test: {
          ...shared,
          name: "store",
          include: STORE_FILES,
          globalSetup: [PREREQUISITES, "test/support/dynamodb-local-setup.ts"],
          maxWorkers: SHARED_WORKERS,
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          maxWorkers: SHARED_WORKERS,
          // A worker runs its unit files one after another in one process, importing what they share
          // (typescript, the AWS SDK, zod) once, not once a file: half the CPU of a process a file.
          // So a unit file puts back what it changes (its SDK mocks' restore(), vi.restoreAllMocks(),
          // process.env).
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: "fault",
          include: ["test/fault/**/*.test.ts"],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
