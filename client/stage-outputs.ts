import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { AppNames } from "../lib/declarations/app-names.ts";
import type { AppTypes, AppTypesNames } from "./app-types.ts";
import { type ClientOptions, createClient } from "./create-client.ts";
import { SkyforgeClientError } from "./errors.ts";
import { type Credentials, httpTransport } from "./http-transport.ts";
import { type InvokeTransport, invokeTransport } from "./invoke-transport.ts";
import type { SkyforgeClient } from "./skyforge-client.ts";
import type { Transport } from "./transport.ts";
import { regionOfApiUrl } from "./wire.ts";

/**
 * Where a deployed stage is, from the outputs SST writes (sst.config.ts returns them):
 * `npx sst deploy --stage NAME` writes them to `.sst/outputs.json` after every successful deploy,
 * overwriting the previous deploy's whatever its stage, so the file also names its `stage`. To keep
 * several stages at hand, save each one's file (`cp .sst/outputs.json outputs.prod.json`) and pass it.
 */
export interface StageOutputs {
  stage: string;
  /** The HTTP API's URL (SigV4, execute-api). */
  api: string;
  /** The API function's name, for the Invoke transport. */
  apiFunction: string;
  /** The enqueue function's name (raw Invoke with an EnqueueRequest). */
  enqueueFunction: string;
  region: string;
}

export interface StageOutputsOptions {
  /** The project directory whose `.sst/outputs.json` to read; default the working directory. */
  root?: string;
  /** A saved outputs file instead (relative to the working directory). */
  file?: string;
}

/** A stage's outputs are missing or are another stage's: the message says what to run. */
export class StageOutputsError extends SkyforgeClientError {
  override readonly name = "StageOutputsError";
}

const REQUIRED = ["stage", "api", "apiFunction", "enqueueFunction"] as const;

export async function stageOutputs(stage: string, options: StageOutputsOptions = {}): Promise<StageOutputs> {
  const file = options.file
    ? resolve(options.file)
    : join(resolve(options.root ?? "."), ".sst", "outputs.json");
  const deploy = `npx sst deploy --stage ${stage}`;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    throw new StageOutputsError(
      `no outputs for stage "${stage}": ${file} does not exist. Run \`${deploy}\` in the project (SST writes .sst/outputs.json), or pass the outputs file saved for that stage.`,
    );
  }
  let outputs: Record<string, unknown>;
  try {
    outputs = JSON.parse(text) as Record<string, unknown>;
    if (typeof outputs !== "object" || outputs === null) throw new Error("not an object");
  } catch (err) {
    throw new StageOutputsError(`${file} is not SST's outputs (JSON object): ${(err as Error).message}`);
  }
  const missing = REQUIRED.filter((key) => typeof outputs[key] !== "string" || outputs[key] === "");
  if (missing.length > 0) {
    throw new StageOutputsError(
      `${file} lacks ${missing.join(", ")}: it was written by a deploy older than the client's outputs. Run \`${deploy}\` again.`,
    );
  }
  const found = outputs as Record<(typeof REQUIRED)[number], string> & { region?: unknown };
  if (found.stage !== stage) {
    throw new StageOutputsError(
      `${file} holds the outputs of stage "${found.stage}", not "${stage}": the last deploy from there was "${found.stage}". Run \`${deploy}\` (it rewrites the file), or pass the outputs file saved for "${stage}".`,
    );
  }
  const region = typeof found.region === "string" ? found.region : regionOfApiUrl(new URL(found.api));
  if (!region)
    throw new StageOutputsError(`${file} names no region, and its api URL ${found.api} holds none`);
  return {
    stage,
    api: found.api,
    apiFunction: found.apiFunction,
    enqueueFunction: found.enqueueFunction,
    region,
  };
}

export interface OutputsTransportOptions {
  /** "http" (the default): the API URL, signed with SigV4; "invoke": Lambda Invoke of the API function. */
  via?: "http" | "invoke";
  /** Default: the AWS credential chain (AWS_PROFILE, SSO, environment, role…). Used by "http". */
  credentials?: Credentials;
}

export interface StageTransportOptions extends StageOutputsOptions, OutputsTransportOptions {}

/** A transport to a deployed stage; close() releases the Lambda client an "invoke" transport made. */
export async function transportForStage(
  stage: string,
  options: StageTransportOptions = {},
): Promise<Transport & { close(): void }> {
  return transportForOutputs(await stageOutputs(stage, options), options);
}

/** A transport to the stage whose outputs were already read (stageOutputs). */
export function transportForOutputs(
  out: StageOutputs,
  options: OutputsTransportOptions = {},
): Transport & { close(): void } {
  if (options.via === "invoke") {
    const transport: InvokeTransport = invokeTransport({ functionName: out.apiFunction, region: out.region });
    return transport;
  }
  const transport = httpTransport({
    url: out.api,
    region: out.region,
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  return { send: (request) => transport.send(request), close: () => {} };
}

/** `await clientForStage<typeof app>("prod")`: the typed client for a deployed stage. */
export async function clientForStage<A extends AppNames>(
  stage: string,
  options?: StageTransportOptions & Pick<ClientOptions<A>, "app">,
): Promise<SkyforgeClient<A> & { close(): void }>;
/** `await clientForStage<SkyforgeApp>("prod")`, typed by what `npx skyforge types` wrote (client/app-types.ts). */
export async function clientForStage<A extends AppTypes>(
  stage: string,
  options?: StageTransportOptions,
): Promise<SkyforgeClient<AppTypesNames<A>> & { close(): void }>;
export async function clientForStage<A extends AppNames>(
  stage: string,
  options: StageTransportOptions & Pick<ClientOptions<A>, "app"> = {},
): Promise<SkyforgeClient<A> & { close(): void }> {
  const transport = await transportForStage(stage, options);
  const client = createClient<A>({ transport, ...(options.app ? { app: options.app } : {}) });
  return Object.assign(client, { close: () => transport.close() });
}
