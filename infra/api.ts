import { API_ROUTE_KEYS, UNAUTHENTICATED_ROUTE_KEYS } from "../lib/api/route-keys";
import { api, apiUrl, routesDeclared } from "./api-gateway";
import { permissionsFor } from "./permissions";
import { poolConfigEnv, poolConfigFiles } from "./pool-config";
import { dlqUrls, queueUrls } from "./queues";
import { storage } from "./storage-env";
import { throttle } from "./throttle-settings";
import { eventSourceMappings, mappingArns } from "./workers";

/** Producers invoke this directly: an EnqueueRequest or { jobs: [...] }. */
export const enqueue = new sst.aws.Function("Enqueue", {
  handler: "functions/enqueue.handler",
  timeout: "30 seconds",
  memory: "512 MB",
  permissions: permissionsFor("enqueue"),
  environment: { ...storage, SKYFORGE_QUEUE_URLS: queueUrls, ...poolConfigEnv },
  copyFiles: poolConfigFiles,
});

/** One function serves every route (one warm pool of containers, one log group). */
export const apiFunction = new sst.aws.Function("ApiHandler", {
  handler: "functions/api.handler",
  timeout: "29 seconds",
  memory: "512 MB",
  permissions: permissionsFor("api", [], mappingArns),
  environment: {
    ...storage,
    SKYFORGE_QUEUE_URLS: queueUrls,
    SKYFORGE_DLQ_URLS: dlqUrls,
    SKYFORGE_EVENT_SOURCE_MAPPINGS: eventSourceMappings,
    ...apiUrl,
    ...poolConfigEnv,
  },
  copyFiles: poolConfigFiles,
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
export const callback = new sst.aws.Function("Callback", {
  handler: "functions/token-callback.handler",
  timeout: "29 seconds",
  memory: "512 MB",
  permissions: permissionsFor("token-callback"),
  environment: { ...storage, SKYFORGE_QUEUE_URLS: queueUrls, ...poolConfigEnv },
  copyFiles: poolConfigFiles,
  concurrency: { reserved: throttle.tokenCallback.reservedConcurrency },
});

export { api };

// Each route key and no `$default` catch-all: API Gateway answers 404 for a path no key names exactly,
// so a path variant (`/jobs/`) can't reach the function around a route-level IAM Deny.
// Every route is IAM-authorized and served by the API function, but the token callback: no auth (its
// url's secret is the credential) and its own function.
const routes = API_ROUTE_KEYS.map((route) =>
  UNAUTHENTICATED_ROUTE_KEYS.includes(route)
    ? api.route(route, callback.arn)
    : api.route(route, apiFunction.arn, { auth: { iam: true } }),
);
// The stage, whose throttles name routes, is made once they exist (infra/api-gateway.ts).
routesDeclared(routes.map((r) => r.nodes.route));
