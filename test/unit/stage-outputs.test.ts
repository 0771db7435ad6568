import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StageOutputsError, stageOutputs, transportForStage } from "../../client/stage-outputs.ts";

/** Where the client finds a deployed stage: the outputs SST wrote, checked to be that stage's. */

const root = mkdtempSync(join(tmpdir(), "skyforge-outputs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const outputs = {
  stage: "prod",
  region: "eu-central-1",
  api: "https://abc123.execute-api.eu-central-1.amazonaws.com",
  apiFunction: "skyforge-prod-ApiHandlerFunction-x1",
  enqueueFunction: "skyforge-prod-EnqueueFunction-y2",
  table: "skyforge-prod-JobsTable",
  dashboard: "https://console.aws.amazon.com/cloudwatch/…",
};
function project(content: unknown): string {
  const dir = mkdtempSync(join(root, "p-"));
  mkdirSync(join(dir, ".sst"));
  writeFileSync(join(dir, ".sst", "outputs.json"), JSON.stringify(content));
  return dir;
}
const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("expected a failure"),
    (e: Error) => e,
  );

describe("stageOutputs", () => {
  it("reads the stage's API URL, function names and region", async () => {
    expect(await stageOutputs("prod", { root: project(outputs) })).toEqual({
      stage: "prod",
      api: outputs.api,
      apiFunction: outputs.apiFunction,
      enqueueFunction: outputs.enqueueFunction,
      region: "eu-central-1",
    });
    const { region: _, ...withoutRegion } = outputs;
    expect((await stageOutputs("prod", { root: project(withoutRegion) })).region).toBe("eu-central-1");
  });

  it("reads a saved file instead", async () => {
    const file = join(root, "outputs.staging.json");
    writeFileSync(file, JSON.stringify({ ...outputs, stage: "staging" }));
    expect((await stageOutputs("staging", { file })).stage).toBe("staging");
  });

  it("refuses another stage's outputs, saying what to run", async () => {
    const err = await failure(stageOutputs("staging", { root: project(outputs) }));
    expect(err).toBeInstanceOf(StageOutputsError);
    expect(err.message).toMatch(/holds the outputs of stage "prod", not "staging"/);
    expect(err.message).toContain("npx sst deploy --stage staging");
  });

  it("says what to run when there are no outputs, or old ones", async () => {
    const none = await failure(stageOutputs("prod", { root: mkdtempSync(join(root, "empty-")) }));
    expect(none).toBeInstanceOf(StageOutputsError);
    expect(none.message).toMatch(/outputs\.json does not exist\. Run `npx sst deploy --stage prod`/);
    const { stage: _s, apiFunction: _f, ...old } = outputs;
    const stale = await failure(stageOutputs("prod", { root: project(old) }));
    expect(stale.message).toMatch(/lacks stage, apiFunction: .*Run `npx sst deploy --stage prod` again/);
  });

  it("builds a transport for the stage, either way", async () => {
    const dir = project(outputs);
    const invoke = await transportForStage("prod", { root: dir, via: "invoke" });
    invoke.close();
    const http = await transportForStage("prod", {
      root: dir,
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    });
    expect(typeof http.send).toBe("function");
  });
});
