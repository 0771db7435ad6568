import { beforeAll, describe, expect, test } from "vitest";
import {
  BUNDLE_BUDGET_BYTES,
  buildBundles,
  deployedSdkOption,
  type FunctionBundle,
} from "../../scripts/bundle-sizes.ts";
import { lambdaHandlers } from "../../scripts/deploy/lambda-build.ts";

/**
 * Issue 16's size budget and what each deployed bundle loads, read from esbuild's metafile with the
 * settings SST deploys (nothing is written). Import times are measured by `npm run bench`, not here.
 */
const LAMBDA_CLIENT = "@aws-sdk/client-lambda";
const EVENT_SOURCE_CONTROL = "lib/queue-control/event-source-control.ts";
/** A durable job's run (EngineConfig.durableRuns), given only where jobs run. */
const DURABLE_RUN = "lib/durable/durable-run.ts";
/** The functions that pause queues or change their concurrency through the event source mapping. */
const CONTROLS_EVENT_SOURCES = ["api", "reaper"];

let bundles: FunctionBundle[];
beforeAll(async () => {
  bundles = await buildBundles(deployedSdkOption, "", { write: false });
});

const loadsLambdaClient = (b: FunctionBundle) =>
  b.externals.includes(LAMBDA_CLIENT) || b.inputs.some((i) => i.includes(`node_modules/${LAMBDA_CLIENT}/`));

describe("Lambda bundles as deployed", () => {
  test("leave the AWS SDK to the runtime", () => {
    expect(deployedSdkOption).toBe("external");
    for (const b of bundles) expect(b.inputs.filter((i) => i.includes("node_modules/@aws-sdk/"))).toEqual([]);
  });

  test("every function is bundled, each within the size budget", () => {
    expect(bundles.map((b) => b.name).sort()).toEqual(
      lambdaHandlers.map((h) => h.slice(h.lastIndexOf("/") + 1, h.lastIndexOf("."))).sort(),
    );
    for (const b of bundles) {
      expect(b.bytes, `${b.name}: ${b.bytes} bytes`).toBeLessThanOrEqual(BUNDLE_BUDGET_BYTES);
    }
  });

  test("only the functions that control event sources load the Lambda client", () => {
    for (const b of bundles) {
      const controls = CONTROLS_EVENT_SOURCES.includes(b.name);
      expect(loadsLambdaClient(b), b.name).toBe(controls);
      expect(b.inputs.includes(EVENT_SOURCE_CONTROL), b.name).toBe(controls);
    }
  });

  test("every function holds the app's kinds but the realtime authorizer, which uses no app", () => {
    const APP_INDEX = "app/index.ts";
    for (const b of bundles) {
      const holdsApp = b.inputs.includes(APP_INDEX) || b.inputs.some((i) => i.startsWith("app/kinds/"));
      expect(holdsApp, b.name).toBe(b.name !== "realtime-authorizer");
    }
  });

  test("the realtime authorizer holds zod's mini build only: its token claims (lib/job/realtime-wire.ts)", () => {
    const authorizer = bundles.find((b) => b.name === "realtime-authorizer");
    const zod = authorizer?.inputs.filter((i) => i.includes("node_modules/zod/")) ?? [];
    expect(zod.some((i) => i.includes("node_modules/zod/v4/mini/"))).toBe(true);
    expect(zod.filter((i) => i.includes("node_modules/zod/v4/classic/"))).toEqual([]);
  });

  test("only the worker holds a durable job's run: the other functions run no handler", () => {
    const holding = bundles.filter((b) => b.inputs.includes(DURABLE_RUN)).map((b) => b.name);
    expect(holding).toEqual(["worker"]);
  });
});
