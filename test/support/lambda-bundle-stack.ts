import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { app } from "../../app/index.ts";
import type { LambdaFunction } from "../../infra/entries.ts";
import { tierOf } from "../../lib/declarations/queue-declaration.ts";
import { type Emulators, sqsClient, startEmulators } from "../../local/emulators.ts";
import {
  type BuiltFunction,
  buildFunction,
  functionName,
  lambdaHandlers,
  writeRepoEntries,
} from "../../scripts/deploy/lambda-build.ts";
import { type AwsCallRecorder, type RecordedCall, startAwsCallRecorder } from "./aws-call-recorder.ts";
import {
  type DeclaredFunction,
  type DeployedResources,
  declaredFunctions,
  referenceValues,
  resolveReferences,
} from "./declared-functions.ts";
import { EventSourceMappings } from "./event-source-mappings.ts";
import {
  type ArnResolver,
  distinctCalls,
  type Permission,
  type Uncovered,
  uncoveredCalls,
} from "./iam-coverage.ts";
import {
  type Invocation,
  type LambdaProcess,
  projectNode,
  startLambdaProcess,
} from "./lambda-bundle-process.ts";
import { TEST_ACCOUNT, TEST_REGION } from "./lambda-events.ts";
import { type FreshResources, freshResources } from "./test-emulators.ts";
import { waitFor } from "./wait.ts";

/** The queue whose worker the bundle tests run. */
const WORKER_QUEUE = "default";

/** Each deployed Lambda function (infra/entries.ts), by the name its bundle has. */
export type FunctionName = LambdaFunction;

export interface RunningFunction {
  built: BuiltFunction;
  declared: DeclaredFunction;
  /** Infra's permissions for the function, resources resolved to this stack's ARNs. */
  permissions: Permission[];
  recorder: AwsCallRecorder;
  process: LambdaProcess;
}

export interface BundleStack {
  outDir: string;
  /** Every function sst.config.ts declares. */
  declared: DeclaredFunction[];
  deployed: DeployedResources;
  mappings: EventSourceMappings;
  arns: ArnResolver;
  /** A client straight to fauxqs, for what the test itself sends or receives (never recorded). */
  sqs: SQSClient;
  fn(name: FunctionName): RunningFunction;
  /** Invokes a bundle; `calls` are the AWS calls it made meanwhile, `uncovered` those its grants don't allow. */
  invoke(
    name: FunctionName,
    event: unknown,
    timeoutMs?: number,
  ): Promise<{ answer: Invocation; calls: RecordedCall[]; uncovered: Uncovered[] }>;
  /** Receives from a queue until every named job's message is in hand (bounded). */
  receiveJobs(url: string, ids: readonly string[]): Promise<Map<string, Message>>;
  /** Each function's size, init time and distinct calls, for a person to read. */
  report(): string;
  stop(): Promise<void>;
}

/**
 * The seven bundles, built as SST builds them into node_modules/.cache (so the runtime's SDK resolves
 * from node_modules), each in its own Node process with the environment infra declares for it,
 * against fresh emulators holding the table and queues infra would create. Each function gets its
 * own recording proxy, so every call is attributed to the function that made it. On a failure to
 * start, whatever did start is stopped again.
 */
export async function startBundleStack(root: string): Promise<BundleStack> {
  const cache = join(root, "node_modules", ".cache", "skyforge-lambda-bundles");
  await mkdir(cache, { recursive: true });
  const outDir = await mkdtemp(join(cache, "run-"));
  const mappings = new EventSourceMappings(TEST_REGION, TEST_ACCOUNT);
  const running = new Map<FunctionName, RunningFunction>();
  const recorders: AwsCallRecorder[] = [];
  let emulators: Emulators | undefined;
  let sqs: SQSClient | undefined;
  const stop = async () => {
    await Promise.all([...running.values()].map((f) => f.process.stop()));
    await Promise.all(recorders.map((r) => r.stop()));
    sqs?.destroy();
    await emulators?.stop();
    await rm(outDir, { recursive: true, force: true });
  };

  try {
    writeRepoEntries(root);
    const [built, declared, emu] = await allSettled([
      Promise.all(lambdaHandlers.map((h) => buildFunction(root, h, outDir))),
      declaredFunctions(),
      startEmulators().then((e) => {
        emulators = e;
        return e;
      }),
    ] as const);
    const client = sqsClient(emu.sqs.endpoint);
    sqs = client;
    const deployed = await deploy(emu, mappings);
    const arns = arnResolver(deployed);

    await allSettled(
      built.map(async (b) => {
        // One worker is declared per Lambda-tier queue, in no set order: the tests feed the default queue's.
        const fn = declared.find(
          (d) =>
            d.handler === b.handler && (d.environment.SKYFORGE_WORKER_QUEUE ?? WORKER_QUEUE) === WORKER_QUEUE,
        );
        if (!fn) throw new Error(`infra declares no function with handler ${b.handler}`);
        const recorder = await startAwsCallRecorder({
          dynamodb: emu.dynamodb.endpoint,
          sqs: emu.sqs.endpoint,
          // fauxqs serves S3 on its SQS port.
          s3: emu.sqs.endpoint,
          lambda: mappings.respond,
        });
        recorders.push(recorder);
        // The SQS client sends to a queue URL's own origin when it differs from its endpoint (its
        // queueUrl middleware), so the URLs in the environment name this function's proxy, the
        // way AWS's queue URLs name the endpoint the client resolves.
        const proxied = new Map(
          [...deployed.queues].map(([q, v]) => [
            q,
            {
              ...v,
              url: withOrigin(v.url, recorder.endpoints.sqs),
              dlqUrl: withOrigin(v.dlqUrl, recorder.endpoints.sqs),
            },
          ]),
        );
        const refs = referenceValues({ ...deployed, queues: proxied });
        const name = functionName(b.handler) as FunctionName;
        const lambda = await startLambdaProcess({
          node: projectNode(root),
          taskRoot: outDir,
          handler: b.lambdaHandler,
          functionName: `skyforge-test-${name}`,
          runtime: fn.runtime,
          memoryMb: fn.memoryMb,
          timeoutSeconds: fn.timeoutSeconds,
          region: TEST_REGION,
          environment: Object.fromEntries(
            Object.entries(fn.environment)
              // IoT Core has no emulator: the functions that run jobs publish nowhere here (realtime's
              // settings left out, as on a stack without it); realtime's own functions keep theirs.
              .filter(([k]) => name.startsWith("realtime-") || !k.startsWith("SKYFORGE_REALTIME_"))
              .map(([k, v]) => [k, resolveReferences(v, refs)]),
          ),
          endpoints: recorder.endpoints,
        });
        const permissions = fn.permissions.map((p) => ({
          ...p,
          resources: p.resources.map((r) => resolveReferences(r, refs)),
        }));
        running.set(name, { built: b, declared: fn, permissions, recorder, process: lambda });
      }),
    );

    const fn = (name: FunctionName) => {
      const found = running.get(name);
      if (!found) throw new Error(`${name} is not running`);
      return found;
    };
    return {
      outDir,
      declared,
      deployed,
      mappings,
      arns,
      sqs: client,
      fn,
      async invoke(name, event, timeoutMs) {
        const f = fn(name);
        const answer = await f.process.invoke(event, timeoutMs);
        const calls = f.recorder.take();
        return { answer, calls, uncovered: uncoveredCalls(calls, f.permissions, arns) };
      },
      receiveJobs: (url, ids) => receiveJobs(client, url, ids),
      report: () =>
        [...running]
          .map(
            ([name, f]) =>
              `${name}: ${f.built.bytes} B, init ${f.process.initMs.toFixed(0)} ms\n  ${distinctCalls(f.recorder.calls, arns).join("\n  ")}`,
          )
          .join("\n"),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Like Promise.all, but waits for every promise first, so nothing still starting outlives a failure. */
async function allSettled<T extends readonly unknown[]>(
  promises: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

/** The table and each declared queue with its DLQ, as infra would create them; one mapping per Lambda-tier queue. */
async function deploy(emu: Emulators, mappings: EventSourceMappings): Promise<DeployedResources> {
  const fresh = await freshResources(emu, app.queues, {
    table: "skyforge-bundles",
    queues: "b",
    bucket: "skyforge-bundles",
  });
  try {
    return await describeDeployed(fresh, mappings);
  } finally {
    fresh.destroy();
  }
}

async function describeDeployed(
  fresh: FreshResources,
  mappings: EventSourceMappings,
): Promise<DeployedResources> {
  const { sqs, table, claimsBucket: claims, queues: provisioned } = fresh;
  const arnOf = async (url: string) =>
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] })))
      .Attributes?.QueueArn as string;
  const queues = new Map<string, { url: string; arn: string; dlqUrl: string; dlqArn: string }>();
  for (const [name, q] of provisioned)
    queues.set(name, {
      url: q.url,
      arn: await arnOf(q.url),
      dlqUrl: q.dlqUrl,
      dlqArn: await arnOf(q.dlqUrl),
    });
  const eventSourceMappings = new Map<string, { uuid: string; arn: string }>();
  for (const q of app.queues.filter((d) => tierOf(d) === "lambda")) {
    const uuid = randomUUID();
    mappings.add(uuid, { enabled: true, maxConcurrency: q.maxConcurrency });
    eventSourceMappings.set(q.name, { uuid, arn: mappings.arnOf(uuid) });
  }
  return {
    table: { name: table, arn: `arn:aws:dynamodb:${TEST_REGION}:${TEST_ACCOUNT}:table/${table}` },
    claims: { name: claims, arn: `arn:aws:s3:::${claims}` },
    queues,
    eventSourceMappings,
  };
}

function arnResolver(d: DeployedResources): ArnResolver {
  const queueArns = new Map<string, string>();
  for (const q of d.queues.values()) {
    queueArns.set(queueName(q.url), q.arn);
    queueArns.set(queueName(q.dlqUrl), q.dlqArn);
  }
  return {
    table: (name) => (name === d.table.name ? d.table.arn : undefined),
    queue: (url) => queueArns.get(queueName(url)),
    eventSourceMapping: (uuid) => [...d.eventSourceMappings.values()].find((m) => m.uuid === uuid)?.arn,
    object: (bucket, key) => (bucket === d.claims.name ? `${d.claims.arn}/${key}` : undefined),
  };
}

const queueName = (url: string) => new URL(url).pathname.split("/").pop() ?? "";
const withOrigin = (url: string, origin: string) => {
  const u = new URL(url);
  return new URL(`${u.pathname}${u.search}`, origin).toString();
};

async function receiveJobs(
  sqs: SQSClient,
  url: string,
  ids: readonly string[],
): Promise<Map<string, Message>> {
  const found = new Map<string, Message>();
  await waitFor(
    async () => {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ["All"],
          MessageAttributeNames: ["All"],
        }),
      );
      for (const m of out.Messages ?? []) {
        const id = (JSON.parse(m.Body ?? "{}") as { id?: string }).id;
        if (id && ids.includes(id)) found.set(id, m);
      }
      return found.size === ids.length;
    },
    `the messages of ${ids.join(", ")}`,
  );
  return found;
}
