import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ComponentReport } from "../../infra/component-report.ts";
import { realtimeSecretParameter } from "../../lib/deploy-plan/realtime-plan.ts";
import { mintToken } from "../../lib/realtime/token.ts";
import { buildFunction } from "./lambda-build.ts";
import { ACCOUNT, IOT_ENDPOINT, REGION, type RecordedResource } from "./pulumi-mocks.ts";

/**
 * Realtime's authorizer as it deploys, asked (docs/architecture.md §25): the component's own
 * authorizer entry bundled as SST bundles it, loaded in a fresh Node process on the function's
 * environment, and invoked as IoT Core invokes it, once per probe (a connect's MQTT password and
 * client id). Its secret comes from a stand-in of SSM on loopback (AWS_ENDPOINT_URL_SSM), which
 * answers GetParameter with the probes' own secret and records what was asked.
 */
export interface AuthorizerProbe {
  label: string;
  token: string;
  clientId: string;
}

export interface AuthorizerAnswers {
  /** The function's ARN the probes were invoked with (the policy's partition, region, account). */
  functionArn: string;
  /** Each probe's answer, or the error the invocation threw. */
  answers: { label: string; answer?: unknown; error?: string }[];
  /** What the function asked SSM for: each GetParameter's name and decryption flag. */
  secretReads: { Name?: string; WithDecryption?: boolean }[];
}

/** The jobs the good probes are for: each token must reach its own job's topics and never the other's. */
export const PROBED_JOBS = ["job-a", "job-b"] as const;
export const PROBE_SECRET = "check-deploy-probe-secret";

/** Two good tokens (one per probed job) and three the authorizer must refuse. */
export function authorizerProbes(prefix: string, now = Date.now()): AuthorizerProbe[] {
  const hour = now + 3_600_000;
  return [
    ...PROBED_JOBS.map((job) => ({
      label: job,
      token: mintToken({ p: prefix, j: job, exp: hour }, PROBE_SECRET),
      clientId: `sf-${job}`,
    })),
    {
      label: "a token signed with another secret",
      token: mintToken({ p: prefix, j: "job-a", exp: hour }, "another-secret"),
      clientId: "sf-refused",
    },
    {
      label: "an expired token",
      token: mintToken({ p: prefix, j: "job-a", exp: now - 60_000 }, PROBE_SECRET),
      clientId: "sf-refused",
    },
    {
      label: "a token for another stack",
      token: mintToken({ p: `${prefix}-other`, j: "job-a", exp: hour }, PROBE_SECRET),
      clientId: "sf-refused",
    },
  ];
}

export async function probeAuthorizer(
  root: string,
  component: ComponentReport,
  resources: readonly RecordedResource[],
): Promise<AuthorizerAnswers | { error: string }> {
  const probes = authorizerProbes(component.realtimePrefix);
  const handler = component.handlers["realtime-authorizer"];
  const fn = resources.find((r) => r.type === "aws:lambda/function:Function" && r.inputs.handler === handler);
  const functionArn =
    (fn?.outputs.arn as string | undefined) ??
    `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${component.name}RealtimeAuthorizer`;
  const declared = (fn?.inputs.environment as { variables?: Record<string, string> } | undefined)?.variables;
  // Under `sst dev` the function is SST's bridge: its environment is what infra gives the real one.
  const env = declared ?? {
    SKYFORGE_REALTIME_PREFIX: component.realtimePrefix,
    SKYFORGE_REALTIME_ENDPOINT: IOT_ENDPOINT,
    SKYFORGE_REALTIME_HMAC_PARAMETER: realtimeSecretParameter(component.realtimePrefix),
  };
  const secretReads: AuthorizerAnswers["secretReads"] = [];
  const ssm = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const asked = JSON.parse(body || "{}") as { Name?: string; WithDecryption?: boolean };
      secretReads.push({ Name: asked.Name, WithDecryption: asked.WithDecryption });
      res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
      res.end(JSON.stringify({ Parameter: { Name: asked.Name, Type: "SecureString", Value: PROBE_SECRET } }));
    });
  });
  await new Promise<void>((resolve) => ssm.listen(0, "127.0.0.1", resolve));
  // Inside the project, so the bundle's externals (the runtime's SDK) resolve from its node_modules.
  const parent = join(root, ".sst", "check-deploy-probes");
  mkdirSync(parent, { recursive: true });
  const outDir = mkdtempSync(join(parent, `${component.name}-`));
  try {
    const built = await buildFunction(root, handler, outDir);
    const script = `
      const { handler } = await import(${JSON.stringify(pathToFileURL(built.file).href)});
      const out = [];
      for (const p of JSON.parse(process.env.PROBES)) {
        const event = { protocolData: { mqtt: { username: "token", password: Buffer.from(p.token).toString("base64"), clientId: p.clientId } } };
        try { out.push({ label: p.label, answer: await handler(event, { invokedFunctionArn: process.env.PROBE_ARN }) }); }
        catch (error) { out.push({ label: p.label, error: String(error) }); }
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const { port } = ssm.address() as AddressInfo;
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        cwd: outDir,
        env: {
          PATH: process.env.PATH,
          ...env,
          AWS_REGION: REGION,
          AWS_ACCESS_KEY_ID: "check-deploy",
          AWS_SECRET_ACCESS_KEY: "check-deploy",
          AWS_ENDPOINT_URL_SSM: `http://127.0.0.1:${port}`,
          PROBES: JSON.stringify(probes),
          PROBE_ARN: functionArn,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("exit", (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr.slice(-2000)}`)),
      );
    });
    return { functionArn, answers: JSON.parse(output) as AuthorizerAnswers["answers"], secretReads };
  } catch (error) {
    return { error: `the realtime authorizer's bundle could not be asked: ${String(error)}` };
  } finally {
    ssm.close();
    rmSync(outDir, { recursive: true, force: true });
  }
}
