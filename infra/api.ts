import { API_ROUTE_KEYS, UNAUTHENTICATED_ROUTE_KEYS } from "../lib/api/route-keys";
import type { createApiGateway } from "./api-gateway";
import { type Build, childName, childOpts, poolConfigEnv, poolConfigFiles } from "./build";
import { functionArgs } from "./lambda-function";
import { type GrantTargets, permissionsFor } from "./permissions";
import type { Workers } from "./workers";

/** The functions producers and operators call, and the API's routes to them. */
export function createApiFunctions(
  build: Build,
  targets: GrantTargets,
  workers: Workers,
  gateway: ReturnType<typeof createApiGateway>,
) {
  const { storage, queues } = targets;
  const fn = (part: string, args: sst.aws.FunctionArgs) =>
    new sst.aws.Function(childName(build, part), functionArgs(build, part, args), childOpts(build));

  /** Producers invoke this directly: an EnqueueRequest or { jobs: [...] }. */
  const enqueue = fn("Enqueue", {
    handler: build.handlers.enqueue,
    timeout: "30 seconds",
    memory: "512 MB",
    permissions: permissionsFor(build, targets, "enqueue"),
    environment: {
      ...storage.env,
      SKYFORGE_QUEUE_URLS: queues.queueUrls,
      ...poolConfigEnv(build),
      ...targets.realtime.env,
    },
    copyFiles: poolConfigFiles(build),
  });

  /** One function serves every route (one warm pool of containers, one log group). */
  const apiFunction = fn("ApiHandler", {
    handler: build.handlers.api,
    timeout: "29 seconds",
    memory: "512 MB",
    permissions: permissionsFor(build, targets, "api", [], workers.mappingArns),
    environment: {
      ...storage.env,
      SKYFORGE_QUEUE_URLS: queues.queueUrls,
      SKYFORGE_DLQ_URLS: queues.dlqUrls,
      SKYFORGE_EVENT_SOURCE_MAPPINGS: workers.eventSourceMappings,
      ...gateway.apiUrl,
      ...poolConfigEnv(build),
      ...targets.realtime.env,
      ...targets.realtime.mintEnv,
    },
    copyFiles: poolConfigFiles(build),
  });

  /**
   * `POST /tokens/{id}` in a function of its own: the one route without IAM auth (anyone holding a
   * token's url may call it), so it runs under the narrowest role there is ("token-callback" in
   * lib/deploy-plan/grants.ts: read and complete the token, resume its job, keep its data, send the
   * job's message) and serves that route alone (lib/handlers/token-callback.ts). A bug in it can't
   * list, cancel or enqueue anything. Its concurrency is reserved (lib/deploy-plan/api-throttle.ts):
   * a flood of bad secrets, already cut to the route's throttle, can't take the account's unreserved
   * concurrency from the workers, the reaper and cron. (Named "Callback": SST puts the name in its
   * environment, where check:deploy refuses a value that looks like a secret's name.)
   */
  const callback = fn("Callback", {
    handler: build.handlers["token-callback"],
    timeout: "29 seconds",
    memory: "512 MB",
    permissions: permissionsFor(build, targets, "token-callback"),
    environment: { ...storage.env, SKYFORGE_QUEUE_URLS: queues.queueUrls, ...poolConfigEnv(build) },
    copyFiles: poolConfigFiles(build),
    concurrency: { reserved: build.throttle.tokenCallback.reservedConcurrency },
  });

  // Each route key and no `$default` catch-all: API Gateway answers 404 for a path no key names exactly,
  // so a path variant (`/jobs/`) can't reach the function around a route-level IAM Deny.
  // Every route is IAM-authorized and served by the API function, but the token callback: no auth (its
  // url's secret is the credential) and its own function.
  const routes = API_ROUTE_KEYS.map((route) =>
    UNAUTHENTICATED_ROUTE_KEYS.includes(route)
      ? gateway.api.route(route, callback.arn)
      : gateway.api.route(route, apiFunction.arn, { auth: { iam: true } }),
  );
  // The stage, whose throttles name routes, is made once they exist (infra/api-gateway.ts).
  gateway.routesDeclared(routes.map((r) => r.nodes.route));
  return { enqueue, apiFunction, callback };
}
export type ApiFunctions = ReturnType<typeof createApiFunctions>;
