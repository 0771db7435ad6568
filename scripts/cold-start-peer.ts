import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { buildSettings, type SdkOption } from "./bundle-sizes.ts";
import { sstNodeBuildOptions } from "./deploy/lambda-build.ts";

/**
 * The cold-start scenario's peer (issue 44): a minimal handler of AWS's own durable functions SDK,
 * @aws/durable-execution-sdk-js (one step, one wait), bundled with the same settings as skyforge's
 * functions, the AWS SDK left to the runtime. It loads @aws-sdk/client-lambda on first use (its
 * checkpoint client), so its cold path is its import plus that load.
 */

const PEER_HANDLER = `import { withDurableExecution } from "@aws/durable-execution-sdk-js";

export const handler = withDurableExecution(async (event, context) => {
  const one = await context.step("one", async () => 1);
  await context.wait({ seconds: 1 });
  return one;
});
`;

/**
 * After the peer's import: what its first invocation loads, as its SDK does (an import of
 * @aws-sdk/client-lambda and the client built), timed in the process, printed in milliseconds.
 */
const PEER_FIRST_USE = `await import("./peer.mjs");
const start = performance.now();
const { LambdaClient } = await import("@aws-sdk/client-lambda");
new LambdaClient({});
console.log(performance.now() - start);
`;

export interface PeerFiles {
  /** The peer's bundle. */
  file: string;
  /** A file that imports the bundle, then times the first-use client load and prints it. */
  probe: string;
}

/** Writes and bundles the peer under `dir` (which must lie in the project, so the SDK resolves). */
export async function buildPeer(root: string, dir: string, sdk: SdkOption): Promise<PeerFiles> {
  const base = join(dir, "peer");
  mkdirSync(base, { recursive: true });
  const entry = join(base, "peer-handler.mjs");
  writeFileSync(entry, PEER_HANDLER);
  const file = join(base, "peer.mjs");
  await build({ absWorkingDir: root, ...sstNodeBuildOptions(entry, file, buildSettings(sdk)) });
  const probe = join(base, "first-use.mjs");
  writeFileSync(probe, PEER_FIRST_USE);
  return { file, probe };
}
