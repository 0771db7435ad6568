import { fileURLToPath } from "node:url";
import { stageFailures } from "./deploy-assertions.ts";
import { ensurePlatform, runStage, type StageRun } from "./sst-program.ts";

/**
 * `npm run check:deploy`: the deploy, proven offline. For a dev-mode stage, a normal stage and
 * production, SST's own component code (.sst/platform, from `sst install`) builds the whole app under
 * Pulumi's mocks, with this process answering the CLI's RPC (and bundling each function as SST does);
 * then what SST registered is checked against the app's declarations. Exits 1 on any failure.
 */

export interface CheckedStage {
  stage: string;
  dev: boolean;
}

export const checkedStages: readonly CheckedStage[] = [
  { stage: "dev", dev: true },
  { stage: "ci", dev: false },
  { stage: "production", dev: false },
];

export interface StageReport {
  run: StageRun;
  failures: string[];
}

export async function checkDeploy(
  root: string,
  stages: readonly CheckedStage[] = checkedStages,
): Promise<StageReport[]> {
  ensurePlatform(root);
  const reports: StageReport[] = [];
  for (const { stage, dev } of stages) {
    const run = await runStage(root, stage, dev);
    reports.push({ run, failures: stageFailures(run) });
  }
  return reports;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const reports = await checkDeploy(root);
  let failed = false;
  for (const { run, failures } of reports) {
    const kib = run.builds.map(
      (b) => `${b.handler.split("/")[1]?.split(".")[0]} ${(b.bytes / 1024).toFixed(0)} KiB`,
    );
    console.log(
      `${run.stage}${run.dev ? " (sst dev)" : ""}: ${run.resources.length} resources, ${run.calls.length} data-source calls, ` +
        `RPC ${[...new Set(run.rpcMethods)].join(", ")}${kib.length ? `; built ${kib.join(", ")}` : ""}`,
    );
    for (const f of failures) console.log(`  FAIL ${f}`);
    failed ||= failures.length > 0;
  }
  if (failed) process.exit(1);
  console.log("check:deploy: every stage is as declared");
}
