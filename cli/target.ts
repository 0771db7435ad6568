import { fileURLToPath } from "node:url";
import { createClient } from "../client/create-client.ts";
import { httpTransport } from "../client/http-transport.ts";
import { invokeTransport } from "../client/invoke-transport.ts";
import type { SkyforgeClient } from "../client/skyforge-client.ts";
import {
  type StageOutputs,
  StageOutputsError,
  type StageOutputsOptions,
  stageOutputs,
  transportForOutputs,
} from "../client/stage-outputs.ts";
import type { Transport } from "../client/transport.ts";
import type { AppNames } from "../client/vocabulary.ts";
import { isPlainHttpOffMachine } from "../client/wire.ts";
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
  /** The region to sign for (default: an execute-api URL's, then AWS_REGION); a stage's is the one its outputs name. */
  region?: string;
  /** Lets an endpoint be plain http to a host that isn't loopback (refused otherwise). */
  allowPlainHttp?: boolean;
}

/** The project this CLI belongs to: SST writes .sst/outputs.json there, wherever the CLI is run from. */
const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Where the commands go, and how:
 * - `--endpoint URL` (or SKYFORGE_ENDPOINT; default npm start's http://127.0.0.1:$PORT when PORT
 *   is set, else http://127.0.0.1:3000): the HTTP API
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
  /** A deployed stage's name and region (`--stage`): what doctor reads its CloudWatch alarms with. */
  stage?: { name: string; region: string };
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
  const endpoint = options.endpoint ?? env.SKYFORGE_ENDPOINT ?? startEndpoint(env);
  const plain = plainHttp(endpoint, options.allowPlainHttp);
  const region = options.region ? { region: options.region } : {};
  if (via === "invoke") {
    const transport = invokeTransport({ functionName: "api", endpoint, ...region, ...plain });
    return { description: `${endpoint} (Lambda Invoke of "api")`, transport, close: () => transport.close() };
  }
  return {
    description: endpoint,
    transport: httpTransport({ url: endpoint, ...region, ...plain }),
    close: () => {},
  };
}

/**
 * The transports refuse plain http to a host that isn't loopback (client/wire.ts): said here in the
 * command line's words, and passed on as the transports' opt-in when --allow-plain-http was given.
 */
function plainHttp(endpoint: string, allowed: boolean | undefined): { allowPlainHttp?: true } {
  if (allowed) return { allowPlainHttp: true };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return {}; // the transport names what is wrong with it
  }
  if (isPlainHttpOffMachine(url)) {
    throw new UsageError(
      `refusing to send signed requests over plain http to ${url.host} (credentials and payloads would travel unencrypted): use https://, or add --allow-plain-http to accept that`,
    );
  }
  return {};
}

/**
 * npm start's address when nothing names one: it listens on PORT when that is set (as in the shell
 * that started it), else on 3000. PORT=0 (a free port) or a PORT that isn't one says nowhere the CLI
 * can find, so it is refused by name rather than sent to 3000.
 */
function startEndpoint(env: NodeJS.ProcessEnv): string {
  const port = env.PORT;
  if (port === undefined || port === "") return DEFAULT_ENDPOINT;
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new UsageError(
      `PORT=${JSON.stringify(port)} is no port npm start can be reached on: give --endpoint or SKYFORGE_ENDPOINT`,
    );
  }
  return `http://127.0.0.1:${Number(port)}`;
}

async function stageTarget(
  stage: string,
  file: string | undefined,
  via: "http" | "invoke",
  region: string | undefined,
): Promise<Target> {
  const where: StageOutputsOptions = file !== undefined ? { file } : { root: PROJECT_ROOT };
  let outputs: StageOutputs;
  try {
    outputs = await stageOutputs(stage, where);
  } catch (err) {
    // No outputs for that stage: the command line names something that isn't there.
    if (err instanceof StageOutputsError || (err as NodeJS.ErrnoException).code) {
      throw new UsageError((err as Error).message);
    }
    throw err;
  }
  // A stage's API is in the region its outputs name (or its execute-api URL holds): a request signed
  // for another is refused, and the stage's transport signs for that one only.
  if (region !== undefined && region !== outputs.region) {
    throw new UsageError(`stage ${stage} is in ${outputs.region}, not ${region}: leave out --region`);
  }
  const transport = transportForOutputs(outputs, { via });
  return {
    description:
      via === "invoke"
        ? `stage ${stage} (Lambda Invoke of ${outputs.apiFunction})`
        : `stage ${stage} (${outputs.api})`,
    transport,
    stage: { name: stage, region: outputs.region },
    close: () => transport.close(),
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
