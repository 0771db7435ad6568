import { stageFailures } from "./deploy-assertions.ts";
import { ensurePlatform, runStage, type StageRun } from "./sst-program.ts";

/**
 * The deploy, proven offline, for a project (this repository, or a user's: check-deploy-command.ts
 * runs it as `skyforge check-deploy`). For a dev-mode stage, a normal stage and production, SST's
 * own component code (.sst/platform, from `sst install`) builds the project's sst.config.ts under
 * Pulumi's mocks, with this process answering the CLI's RPC (and bundling each function as SST
 * does); then what SST registered is checked against each Skyforge component's app declarations.
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
