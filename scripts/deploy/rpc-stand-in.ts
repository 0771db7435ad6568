import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { FileHashes } from "./bundle-cache.ts";
import { buildFunction, type NodeBuildProperties } from "./lambda-build.ts";

/**
 * Stands in for the SST CLI's JSON-RPC server ($SST_SERVER/rpc), which SST's components call while
 * the program is built: Provider.Aws.Bootstrap (the asset bucket and ECR repository) and
 * Runtime.Build (bundle one function) on every stage; under `sst dev` also Provider.Aws.Appsync (the
 * live bridge's endpoints) and Runtime.AddTarget (the CLI takes over the function's code). Every
 * call is recorded; an unknown
 * method gets the CLI's own "can't find" answer, which the components treat as MethodNotFound.
 */

/** What SST's Function sends to Runtime.Build (components/aws/function.ts, buildInput). */
export interface BuildRequest {
  functionID: string;
  handler: string;
  runtime: string;
  isContainer?: boolean;
  properties: NodeBuildProperties & { architecture?: string };
}

export interface BuiltRecord {
  functionID: string;
  handler: string;
  runtime: string;
  architecture: string | undefined;
  properties: NodeBuildProperties;
  bytes: number;
  /** The files bundled in, as absolute paths: the app module's among them. */
  inputs: string[];
}

/** A function `sst dev` runs on the developer's machine: what it was declared with. */
export interface DevTarget {
  functionID: string;
  handler: string;
  runtime: string;
  architecture: string | undefined;
}

export interface RpcStandIn {
  url: string;
  methods: string[];
  builds: BuiltRecord[];
  /** Functions `sst dev` would run locally instead of building. */
  devTargets: DevTarget[];
  close(): Promise<void>;
}

export const BOOTSTRAP = {
  asset: "sst-asset-offline",
  assetEcrRegistryId: "123456789012",
  assetEcrUrl: "123456789012.dkr.ecr.us-east-1.amazonaws.com/sst-asset",
  state: "sst-state-offline",
  appsyncHttp: "offline.appsync-api.us-east-1.amazonaws.com",
  appsyncRealtime: "offline.appsync-realtime-api.us-east-1.amazonaws.com",
};

/** Starts the stand-in on loopback; builds go under <workDir>/artifacts/<functionID>, as SST lays them out. */
export async function startRpcStandIn(root: string, workDir: string): Promise<RpcStandIn> {
  const methods: string[] = [];
  const builds: BuiltRecord[] = [];
  const devTargets: DevTarget[] = [];
  // One program run: its functions' bundles share one read of each file (bundle-cache.ts).
  const hashes: FileHashes = new Map();

  async function answer(method: string, args: unknown): Promise<unknown> {
    switch (method) {
      case "Provider.Aws.Bootstrap":
        return BOOTSTRAP;
      case "Provider.Aws.Appsync":
        return { http: BOOTSTRAP.appsyncHttp, realtime: BOOTSTRAP.appsyncRealtime };
      case "Runtime.AddTarget": {
        const input = args as BuildRequest;
        devTargets.push({
          functionID: input.functionID,
          handler: input.handler,
          runtime: input.runtime,
          architecture: input.properties.architecture,
        });
        return null;
      }
      case "Runtime.Build": {
        const input = args as BuildRequest;
        const out = join(workDir, "artifacts", input.functionID);
        const { architecture, ...properties } = input.properties;
        try {
          const built = await buildFunction(root, input.handler, out, properties, hashes);
          builds.push({
            functionID: input.functionID,
            handler: input.handler,
            runtime: input.runtime,
            architecture,
            properties,
            bytes: built.bytes,
            inputs: built.inputs,
          });
          return { handler: input.handler, out, errors: [], sourcemaps: [] };
        } catch (error) {
          return { handler: input.handler, out, errors: [String(error)], sourcemaps: [] };
        }
      }
      default:
        throw new Error(`rpc: can't find method ${method}`);
    }
  }

  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const { method, params } = JSON.parse(body) as { method: string; params: unknown[] };
      methods.push(method);
      answer(method, params[0]).then(
        (result) => res.end(JSON.stringify({ result, error: null })),
        (error: Error) => res.end(JSON.stringify({ result: null, error: error.message })),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    methods,
    builds,
    devTargets,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
