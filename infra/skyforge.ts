import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { assertValidDeclarations } from "../lib/declarations/validate-app";
import { type ApiThrottlePlan, apiThrottlePlan } from "../lib/deploy-plan/api-throttle";
import { poolScaling } from "../lib/deploy-plan/pool-scaling";
import { producerRoutePaths } from "../lib/deploy-plan/producer-link";
import { realtimePrefix } from "../lib/deploy-plan/realtime-plan";
import { pascalCase } from "../lib/deploy-plan/resource-names";
import { type LoadedDeclarations, loadAppDeclarationsSync } from "../project/app-declarations";
import { createApiFunctions } from "./api";
import { createApiGateway } from "./api-gateway";
import type { Build } from "./build";
import { describeComponent, SKYFORGE_TYPE } from "./component-report";
import { handlersFor, type LambdaFunction, PACKAGE_HANDLERS, poolEntry, writeEntries } from "./entries";
import { createMonitoring } from "./monitoring";
import { createPool } from "./pool";
import { resolvePoolKinds } from "./pool-config";
import { createQueues } from "./queues";
import { createRealtime, createRealtimeTargets } from "./realtime";
import { pinRuntimes } from "./runtime-updates";
import { createSchedules } from "./schedules";
import type { SkyforgeArgs } from "./skyforge-args";
import { createStorage } from "./storage";
import { createWorkers } from "./workers";

export type { SkyforgeArgs, Transform } from "./skyforge-args";

/** A component's name starts every child's logical name, so it is a plain PascalCase word. */
const COMPONENT_NAME = /^[A-Za-z][A-Za-z0-9]{0,39}$/;

/** The names taken in this program (lowercase): SST refuses two components of one name the same way. */
const taken = new Map<string, string>();

/** The app and the checked declarations, before anything is created (every failure is one error naming its cause). */
function prepare(name: string, args: SkyforgeArgs) {
  const refuse = (problem: string): never => {
    throw new Error(`Skyforge "${name}": ${problem}`);
  };
  if (!COMPONENT_NAME.test(name))
    refuse(
      "a component's name is letters and digits, starting with a letter (it starts every resource's name)",
    );
  const lower = name.toLowerCase();
  for (const [other, original] of taken) {
    if (other === lower)
      refuse(`a stage holds one Skyforge component of each name; "${original}" is declared already`);
    if (other.startsWith(lower) || lower.startsWith(other))
      refuse(
        `its name and "${original}"'s begin the same way, so their resources' names could collide; pick names where neither begins the other`,
      );
  }
  if (typeof args?.app !== "string" || args.app === "")
    refuse('no `app`: name the module that exports your defineApp value, e.g. { app: "src/jobs/app.ts" }');
  const root = resolve($cli.paths.root);
  const loaded = loadAppDeclarationsSync(args.app, root);
  const poolKinds = poolKindsOf(root, loaded, args.pool?.config, refuse);
  const handlers = handlersFor(loaded.inputs);
  let throttle: ApiThrottlePlan;
  try {
    throttle = apiThrottlePlan(args.throttle);
  } catch (err) {
    return refuse((err as Error).message);
  }
  const image = args.pool?.image ?? repositoryPoolImage(root, handlers);
  if (poolKinds.length > 0 && !image)
    refuse(
      `${relative(root, loaded.file)} declares pool kinds (${poolKinds.map((k) => k.name).join(", ")}): give pool.image, an image whose command starts the pool over this app (${poolEntry(name)} does)`,
    );
  taken.set(lower, name);
  return { root, loaded, poolKinds, handlers, image, throttle };
}

/**
 * The app's pool kinds with `pool.config`'s laid over them, checked with the rest of the app (the
 * module checked its own declarations; the kinds the file adds are checked here). A bad file or a
 * refused kind is one error naming the file.
 */
function poolKindsOf(
  root: string,
  loaded: LoadedDeclarations,
  config: string | undefined,
  refuse: (problem: string) => never,
) {
  try {
    const poolKinds = resolvePoolKinds(root, loaded.app, config);
    assertValidDeclarations({ ...loaded.app, poolKinds });
    return poolKinds;
  } catch (err) {
    return refuse(`${relative(root, loaded.file)} with pool.config ${config}: ${(err as Error).message}`);
  }
}

/**
 * This repository's pool image (infra/pool.Dockerfile, which bundles functions/pool/main.ts) when
 * the project is the repository itself: its entry runs the demo app and nothing else.
 */
function repositoryPoolImage(root: string, handlers: string) {
  if (handlers === PACKAGE_HANDLERS) return undefined;
  const engineRoot = dirname(dirname(handlers));
  const dockerfile = join(engineRoot, "infra", "pool.Dockerfile");
  return engineRoot === root && existsSync(dockerfile)
    ? { context: ".", dockerfile: "infra/pool.Dockerfile" }
    : undefined;
}

/**
 * skyforge in one SST component: `new Skyforge("Jobs", { app: "src/jobs/app.ts" })` creates the
 * jobs table, the claims bucket, a queue and a DLQ per declared queue, a worker per Lambda-tier
 * queue, the HTTP API with its token callback, the enqueue function, the reaper, cleanup and cron
 * schedules, the Fargate pool when the app declares pool kinds, and the dashboard and alarms. Every
 * function runs the app module's kinds: its handler is an entry generated for this component
 * (infra/entries.ts). The declarations are checked before any resource is planned.
 *
 * `link: [jobs]` on a function lets it enqueue (getSSTLink below); `outputs` is what the producer
 * client reads from `.sst/outputs.json` when sst.config.ts returns it.
 */
export class Skyforge extends $util.ComponentResource {
  readonly table: sst.aws.Dynamo;
  readonly claims: sst.aws.Bucket;
  readonly api: sst.aws.ApiGatewayV2;
  readonly enqueue: sst.aws.Function;
  readonly apiFunction: sst.aws.Function;
  readonly callback: sst.aws.Function;
  /** The pool's ECS service, when the app declares pool kinds. */
  readonly pool: sst.aws.Service | undefined;
  readonly dashboardUrl: $util.Output<string>;
  /** Each declared queue's SQS queue and DLQ, by queue name. */
  readonly queues: ReadonlyMap<string, { queue: sst.aws.Queue; dlq: sst.aws.Queue }>;

  constructor(name: string, args: SkyforgeArgs, opts: $util.ComponentResourceOptions = {}) {
    const { root, loaded, poolKinds, handlers, image, throttle } = prepare(name, args);
    super(SKYFORGE_TYPE, name, {}, opts);
    const entryHandlers: Record<LambdaFunction, string> = writeEntries({
      root,
      component: name,
      appFile: loaded.file,
      appExport: loaded.exportName,
      handlers,
    });
    const build: Build = {
      name,
      parent: this,
      app: loaded.app,
      poolKinds,
      poolConfig: args.pool?.config,
      handlers: entryHandlers,
      poolEntry: poolEntry(name),
      throttle,
      args,
    };
    const storage = createStorage(build);
    const queues = createQueues(build);
    const targets = { storage, queues, realtime: createRealtimeTargets(build) };
    const gateway = createApiGateway(build);
    const workers = createWorkers(build, targets, gateway.apiUrl);
    const functions = createApiFunctions(build, targets, workers, gateway);
    const schedules = createSchedules(build, targets, workers);
    const realtime = createRealtime(build, targets);
    pinRuntimes(build, [
      ["Enqueue", functions.enqueue.name],
      ["ApiHandler", functions.apiFunction.name],
      ["Callback", functions.callback.name],
      ...workers.workers.map((w): [string, $util.Input<string>] => [
        w.label.slice(name.length),
        w.functionName,
      ]),
      ["Reaper", schedules.reaper.nodes.function.name],
      ["Cleanup", schedules.cleanup.nodes.function.name],
      ["Cron", schedules.cron.nodes.function.name],
      ["RealtimeAuthorizer", realtime.authorizerFunction.name],
      ["RealtimeReplay", realtime.replayFunction.name],
    ]);
    const pool =
      poolKinds.length > 0 && image ? createPool(build, targets, gateway.apiUrl, image) : undefined;
    const monitoring = createMonitoring(build, queues, workers, pool);

    this.table = storage.table;
    this.claims = storage.claims;
    this.api = gateway.api;
    this.enqueue = functions.enqueue;
    this.apiFunction = functions.apiFunction;
    this.callback = functions.callback;
    this.pool = pool?.pool;
    this.dashboardUrl = monitoring.dashboardUrl;
    this.queues = new Map(queues.queues.map((q) => [q.declaration.name, { queue: q.queue, dlq: q.dlq }]));
    describeComponent({
      name,
      app: loaded.file,
      handlers: entryHandlers,
      children: [
        ...["Table", "Claims", "Api", "Enqueue", "ApiHandler", "Callback", "Reaper", "Cleanup", "Cron"],
        ...["RealtimeAuthorizer", "RealtimeReplay"],
        ...(pool ? ["Vpc", "Cluster", "Pool"] : []),
        ...loaded.app.queues.flatMap((q) => [`${pascalCase(q.name)}Queue`, `${pascalCase(q.name)}Dlq`]),
      ].map((part) => `${name}${part}`),
      queues: loaded.app.queues,
      poolKinds,
      throttle,
      realtimePrefix: realtimePrefix($app.name, $app.stage, name),
      ...(pool && image ? { poolImage: image, poolMaxTasks: args.pool?.maxTasks ?? poolScaling.max } : {}),
    });
    this.registerOutputs({});
  }

  /**
   * What the producer client reads from `.sst/outputs.json` (client/stage-outputs.ts): return it
   * from sst.config.ts's run(). `poolService` only where the pool is deployed (not under `sst dev`).
   */
  get outputs() {
    return {
      stage: $app.stage,
      region: aws.getRegionOutput().region,
      table: this.table.name,
      api: this.api.url,
      apiFunction: this.apiFunction.name,
      enqueueFunction: this.enqueue.name,
      poolService: this.pool && !$dev ? this.pool.nodes.service.name : undefined,
      dashboard: this.dashboardUrl,
    };
  }

  /**
   * `link: [jobs]`: what a producer needs and nothing more (lib/deploy-plan/producer-link.ts):
   * execute-api:Invoke on the API's enqueue routes, and lambda:InvokeFunction on the enqueue
   * function; and what the client needs to find the stage (no credentials: those are the role's).
   */
  getSSTLink() {
    return {
      properties: {
        stage: $app.stage,
        region: aws.getRegionOutput().region,
        api: this.api.url,
        enqueueFunction: this.enqueue.name,
      },
      include: [
        sst.aws.permission({
          actions: ["execute-api:Invoke"],
          resources: producerRoutePaths().map(
            (path) => $interpolate`${this.api.nodes.api.executionArn}/${path}`,
          ),
        }),
        sst.aws.permission({ actions: ["lambda:InvokeFunction"], resources: [this.enqueue.arn] }),
      ],
    };
  }
}
