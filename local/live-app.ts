import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { App } from "../lib/declarations/define-app.ts";
import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";
import type { QueueDeclaration } from "../lib/declarations/queue-declaration.ts";
import type { EngineConfig } from "../lib/engine.ts";
import { assembleDeployment, type Deployment } from "../lib/handlers/deployment.ts";
import type { HandlerSettings } from "../lib/handlers/handler-settings.ts";
import { errorFields, type Log } from "../lib/observability/log.ts";
import type { MemoryMetrics } from "../lib/observability/metrics.ts";
import { CLAIMS_BUCKET, type ProvisionedQueue, provisionQueues } from "./emulators.ts";
import { EventSourcePoller } from "./event-source-poller.ts";
import type { LocalEventSources } from "./local-event-sources.ts";
import { type PoolProcess, type PoolProcessOptions, startPoolProcess } from "./pool-process.ts";

/** What the served app runs on, and keeps across reloads: the emulators' clients, the table, the queues' event sources. */
export interface LiveAppDeps {
  clients: { dynamodb: DynamoDBClient; sqs: SQSClient; s3: S3Client };
  table: string;
  metrics: MemoryMetrics;
  eventSources: LocalEventSources;
  clock: EngineConfig["clock"];
  log: Log;
  random?: () => number;
  settings: HandlerSettings;
  visibilityTimeoutSeconds?: number;
  /** The local realtime broker's publisher, prefix and url (local/realtime-broker.ts). */
  realtime?: EngineConfig["realtime"];
  /** The pool's entry point as a child process, and the emulators it is pointed at; without it, no pool. */
  pool?: Pick<
    PoolProcessOptions,
    "command" | "baseEnv" | "settings" | "drainSeconds" | "waitSeconds" | "realtime"
  > & {
    endpoints: PoolProcessOptions["endpoints"];
  };
}

/** An app made ready to serve, nothing of it running yet. */
interface Prepared {
  deployment: Deployment;
  /** What it serves: the app's kinds, and the pool kinds in force (the MCP endpoint's tools). */
  kinds: { kinds: App["kinds"]; poolKinds: readonly PoolKindSpec[] };
  pollers: { queue: QueueDeclaration; poller: EventSourcePoller }[];
  /** What the pool process is started from; a reload restarts the pool only when it changed. */
  poolFingerprint: string | undefined;
}

/**
 * The part of the local stack a reload replaces: the deployment (the engine and every handler, as
 * lib/handlers/deployment.ts assembles them) over one app value, the event-source pollers feeding
 * its workers, and the pool process. The emulators, the table and the queues stay, so a reload
 * loses no job: a queued job's message waits in its queue for the new pollers.
 *
 * A reload first makes the new app ready (its queues provisioned, a new one created; its deployment
 * assembled; its declared schedules synced) while the old one serves. Only then does it switch:
 * the old pollers are retired (EventSourcePoller.retire: no new receive; what the one in flight
 * brings is handed back; the runs they hold finish in the background, on the old code), the new
 * pollers start with each queue's recorded pause and concurrency, and the pool
 * is restarted if what it runs changed. Anything that fails before the switch leaves the old app
 * serving. Reloads run one at a time.
 */
export class LiveApp {
  private current: Deployment;
  private currentKinds: Prepared["kinds"];
  private pollers: EventSourcePoller[] = [];
  private readonly retiring = new Set<EventSourcePoller>();
  private readonly draining = new Set<Promise<void>>();
  private pool: { process: PoolProcess; fingerprint: string } | undefined;
  private apiUrl: string | undefined;
  private pending: Prepared | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  private stopped = false;

  private readonly deps: LiveAppDeps;
  /** Every queue provisioned so far, by name (a reload adds the new app's). */
  readonly queues: Map<string, ProvisionedQueue>;

  private constructor(deps: LiveAppDeps, queues: Map<string, ProvisionedQueue>, first: Prepared) {
    this.deps = deps;
    this.queues = queues;
    this.current = first.deployment;
    this.currentKinds = first.kinds;
    this.pending = first;
  }

  /** Made ready over `app`, serving the API at once; its pollers and pool start with `start()`. */
  static async prepare(deps: LiveAppDeps, app: App, poolKinds?: readonly PoolKindSpec[]): Promise<LiveApp> {
    const queues = new Map<string, ProvisionedQueue>();
    return new LiveApp(deps, queues, await prepareApp(deps, queues, app, poolKinds));
  }

  /** The deployment serving now: the HTTP server and the ticker call through it, so they follow a reload. */
  get deployment(): Deployment {
    return this.current;
  }

  /** The kinds served now (the MCP endpoint lists a tool per kind), following a reload. */
  get kinds(): Prepared["kinds"] {
    return this.currentKinds;
  }

  /**
   * Starts the first app's pollers and pool, once the API's URL is known: durable jobs' token urls
   * start with it, and no job (one kept in the data directory included) may make a token before.
   */
  async start(apiUrl: string): Promise<void> {
    this.apiUrl = apiUrl;
    const first = this.pending as Prepared;
    this.pending = undefined;
    await this.switchTo(first);
  }

  /** Serves `app` from now on (see the class comment); rejects, with the old app still serving, if it can't be made ready. */
  reload(app: App, poolKinds?: readonly PoolKindSpec[]): Promise<void> {
    const run = this.chain.then(async () => {
      if (this.stopped) throw new Error("the local stack is stopping");
      const next = await prepareApp(this.deps, this.queues, app, poolKinds);
      await this.switchTo(next);
    });
    this.chain = run.catch(() => {});
    return run;
  }

  /**
   * The stack's first stop (before the HTTP server): no reload after this one, and the pool is
   * stopped, so it can hand its jobs back while the emulators still run.
   */
  async stopPool(): Promise<void> {
    this.stopped = true;
    await this.chain;
    await this.pool?.process.stop();
    this.pool = undefined;
  }

  /** Stops every poller (those a reload retired too), and waits for the runs they hold. */
  async stopPollers(): Promise<void> {
    const all = [...this.pollers, ...this.retiring];
    this.pollers = [];
    await Promise.allSettled([...all.map((poller) => poller.stop()), ...this.draining]);
  }

  private async switchTo(next: Prepared): Promise<void> {
    if (this.apiUrl) next.deployment.engine.tokenUrlBase = this.apiUrl;
    for (const poller of this.pollers) this.retire(poller);
    this.pollers = [];
    this.current = next.deployment;
    this.currentKinds = next.kinds;
    for (const { queue, poller } of next.pollers) {
      await this.deps.eventSources.start(next.deployment.engine.store, queue, poller);
      this.pollers.push(poller);
    }
    await this.switchPool(next.poolFingerprint);
  }

  /**
   * Stops `poller` receiving; its receive in flight ends by itself (what it brings is handed back to
   * the new pollers) and the runs it holds finish, in the background: `stopPollers()` waits for them.
   */
  private retire(poller: EventSourcePoller): void {
    this.retiring.add(poller);
    const drained = poller
      .retire()
      .catch((err) => this.deps.log.error("retiring a poller failed", errorFields(err)))
      .finally(() => this.retiring.delete(poller));
    this.draining.add(drained);
    void drained.finally(() => this.draining.delete(drained));
  }

  /** The pool process runs the app module from disk: restarted only when the pool kinds, kinds or queues changed. */
  private async switchPool(fingerprint: string | undefined): Promise<void> {
    const pool = this.deps.pool;
    if (!pool || this.pool?.fingerprint === fingerprint) return;
    await this.pool?.process.stop();
    this.pool = undefined;
    if (fingerprint === undefined) return;
    const urls = (pick: (q: ProvisionedQueue) => string) =>
      new Map([...this.queues].map(([name, q]) => [name, pick(q)]));
    const process = startPoolProcess({
      ...pool,
      table: this.deps.table,
      queueUrls: urls((q) => q.url),
      dlqUrls: urls((q) => q.dlqUrl),
      ...(this.apiUrl ? { apiUrl: this.apiUrl } : {}),
      log: this.deps.log,
    });
    this.pool = { process, fingerprint };
  }
}

/**
 * Provisions `app`'s queues (adding them to `queues`), assembles its deployment on the kept clients,
 * syncs its declared schedules, and makes (without starting) one poller per Lambda-tier queue.
 */
async function prepareApp(
  deps: LiveAppDeps,
  queues: Map<string, ProvisionedQueue>,
  app: App,
  poolKinds: readonly PoolKindSpec[] | undefined,
): Promise<Prepared> {
  const { clients, log } = deps;
  const provisioned = await provisionQueues(
    clients.sqs,
    app.queues,
    "skyforge",
    deps.visibilityTimeoutSeconds !== undefined
      ? { visibilityTimeoutSeconds: deps.visibilityTimeoutSeconds }
      : {},
  );
  for (const [name, q] of provisioned) queues.set(name, q);
  const deployment = assembleDeployment(
    {
      app,
      ...(poolKinds ? { poolKinds } : {}),
      dynamodb: clients.dynamodb,
      sqs: clients.sqs,
      s3: clients.s3,
      claimsBucket: CLAIMS_BUCKET,
      table: deps.table,
      queueUrls: new Map([...provisioned].map(([name, q]) => [name, q.url])),
      dlqUrls: new Map([...provisioned].map(([name, q]) => [name, q.dlqUrl])),
      eventSources: deps.eventSources,
      clock: deps.clock,
      metrics: deps.metrics,
      log,
      ...(deps.random ? { random: deps.random } : {}),
      ...(deps.realtime ? { realtime: deps.realtime } : {}),
      // The local stack's workers all run in this process: its attempts name it in their history.
      runner: () => ({ runner: `local:${process.pid}` }),
    },
    deps.settings,
  );
  // The declared schedules are synced once per deployment (lib/handlers/cron.ts), as a deploy does:
  // here, before it serves, so the API lists them before the first tick.
  await deployment.cron.syncDeclared();
  const pollers: Prepared["pollers"] = [];
  for (const queue of deployment.engine.queues) {
    const worker = deployment.workers.get(queue.name);
    if (!worker) continue; // a pool-tier queue: the pool process receives from it
    const urls = provisioned.get(queue.name) as ProvisionedQueue;
    const attrs = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: urls.url, AttributeNames: ["QueueArn"] }),
    );
    const poller = new EventSourcePoller(clients.sqs, {
      queueName: queue.name,
      queueUrl: urls.url,
      queueArn: attrs.Attributes?.QueueArn ?? queue.name,
      batchSize: queue.batchSize,
      batchWindowSeconds: queue.batchWindowSeconds,
      leaseSeconds: queue.leaseSeconds,
      maxConcurrency: queue.maxConcurrency,
      handler: worker,
      log,
    });
    pollers.push({ queue, poller });
  }
  const kinds = { kinds: app.kinds, poolKinds: poolKinds ?? app.poolKinds };
  return { deployment, kinds, pollers, poolFingerprint: poolFingerprint(deployment, queues) };
}

/**
 * What the pool process serves, as text: the pool kinds in force (their functions by source), the
 * kind names and queues its engine knows, the queue urls it is given. Undefined when there are no
 * pool kinds: no pool process then.
 */
function poolFingerprint(
  deployment: Deployment,
  queues: ReadonlyMap<string, ProvisionedQueue>,
): string | undefined {
  const { engine } = deployment;
  if (engine.poolKinds.length === 0) return undefined;
  return JSON.stringify(
    {
      poolKinds: engine.poolKinds,
      kinds: engine.app.kinds.map((k) => k.name),
      queues: engine.queues,
      rateLimits: engine.app.rateLimits,
      urls: [...queues],
    },
    (_key, value: unknown) => (typeof value === "function" ? String(value) : value),
  );
}
