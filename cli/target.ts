import { fileURLToPath } from "node:url";
import { createClient } from "../client/create-client.ts";
import { httpTransport } from "../client/http-transport.ts";
import { invokeTransport } from "../client/invoke-transport.ts";
import type { SkyforgeClient } from "../client/skyforge-client.ts";
import { type StageOutputs, StageOutputsError, stageOutputs } from "../client/stage-outputs.ts";
import type { Transport } from "../client/transport.ts";
import type { AppNames } from "../lib/app/define-app.ts";
import { UsageError } from "./exit-codes.ts";

/** npm start's address. */
export const DEFAULT_ENDPOINT = "http://127.0.0.1:3000";

/** The global options that pick what the CLI talks to. */
export interface TargetOptions {
  endpoint?: string;
  stage?: string;
  /** A saved outputs file for --stage, instead of the project's .sst/outputs.json. */
  outputs?: string;
  transport?: "http" | "invoke";
  /** The region to sign for (default: a stage's, an execute-api URL's, then AWS_REGION). */
  region?: string;
}

/** The project this CLI belongs to: SST writes .sst/outputs.json there, wherever the CLI is run from. */
const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Where the commands go, and how:
 * - `--endpoint URL` (or SKYFORGE_ENDPOINT; default npm start's http://127.0.0.1:3000): the HTTP API
 *   at that URL, or with `--transport invoke` the Lambda Invoke API served there (function "api");
 * - `--stage NAME`: a deployed stage, from the outputs SST wrote for it (client/stage-outputs.ts:
 *   the project's .sst/outputs.json, written by the last `sst deploy`, or `--outputs FILE` saved
 *   from one), signed with SigV4 by the usual AWS credential chain (AWS_PROFILE, SSO, environment,
 *   role…); the `api` URL by default, the `apiFunction` with `--transport invoke`.
 */
export interface Target {
  /** For messages: "http://127.0.0.1:3000" or "stage prod (https://…)". */
  description: string;
  transport: Transport;
  close(): void;
}

export async function resolveTarget(options: TargetOptions, env = process.env): Promise<Target> {
  try {
    return await targetFor(options, env);
  } catch (err) {
    // A transport that can't be built (no region to sign for a non-AWS URL) is the command line's.
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message);
  }
}

async function targetFor(options: TargetOptions, env: NodeJS.ProcessEnv): Promise<Target> {
  const via = options.transport ?? "http";
  if (options.stage !== undefined && options.endpoint !== undefined) {
    throw new UsageError("give --endpoint or --stage, not both");
  }
  if (options.stage !== undefined) return stageTarget(options.stage, options.outputs, via, options.region);
  if (options.outputs !== undefined) throw new UsageError("--outputs goes with --stage");
  const endpoint = options.endpoint ?? env.SKYFORGE_ENDPOINT ?? DEFAULT_ENDPOINT;
  const region = options.region ? { region: options.region } : {};
  if (via === "invoke") {
    const transport = invokeTransport({ functionName: "api", endpoint, ...region });
    return { description: `${endpoint} (Lambda Invoke of "api")`, transport, close: () => transport.close() };
  }
  return { description: endpoint, transport: httpTransport({ url: endpoint, ...region }), close: () => {} };
}

async function stageTarget(
  stage: string,
  file: string | undefined,
  via: "http" | "invoke",
  regionOption: string | undefined,
): Promise<Target> {
  let outputs: StageOutputs;
  try {
    outputs = await stageOutputs(stage, file !== undefined ? { file } : { root: PROJECT_ROOT });
  } catch (err) {
    // No outputs for that stage: the command line names something that isn't there.
    if (err instanceof StageOutputsError || (err as NodeJS.ErrnoException).code) {
      throw new UsageError((err as Error).message);
    }
    throw err;
  }
  const region = regionOption ?? outputs.region;
  if (via === "invoke") {
    const transport = invokeTransport({ functionName: outputs.apiFunction, region });
    return {
      description: `stage ${stage} (Lambda Invoke of ${outputs.apiFunction})`,
      transport,
      close: () => transport.close(),
    };
  }
  return {
    description: `stage ${stage} (${outputs.api})`,
    transport: httpTransport({ url: outputs.api, region }),
    close: () => {},
  };
}

/**
 * The CLI's client. It is given no app: kinds, payloads and queues are the API's to judge, so the CLI
 * works the same against a stage whose operator added pool kinds, and reports the API's own errors.
 */
export type CliClient = SkyforgeClient<AppNames>;

export function clientFor(target: Target): CliClient {
  return createClient<AppNames>({ transport: target.transport });
}
