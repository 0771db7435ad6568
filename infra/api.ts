import { API_ROUTE_KEYS } from "../lib/api/route-keys";
import { apiAccessLogFormat } from "./api-access-log";
import { permissionsFor } from "./permissions";
import { poolConfigEnv, poolConfigFiles } from "./pool-config";
import { dlqUrls, queueUrls } from "./queues";
import { storage } from "./storage-env";
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
    ...poolConfigEnv,
  },
  copyFiles: poolConfigFiles,
});

/**
 * The HTTP API, IAM (SigV4) authorized on every route. No CORS: no browser calls it (the console
 * goes through its own loopback proxy), and SST's default allows any origin. SST renders
 * `cors: false` as an empty CORS configuration rather than none, so the transform removes it. The
 * access log names each caller (infra/api-access-log.ts).
 */
export const api = new sst.aws.ApiGatewayV2("Api", {
  cors: false,
  transform: {
    api: (args) => {
      args.corsConfiguration = undefined;
    },
    stage: (args) => {
      args.accessLogSettings = $util.output(args.accessLogSettings).apply((settings) => {
        if (!settings) throw new Error("SST no longer gives the API stage an access log to format");
        return { ...settings, format: apiAccessLogFormat };
      });
    },
  },
});
// Each route key and no `$default` catch-all: API Gateway answers 404 for a path no key names exactly,
// so a path variant (`/jobs/`) can't reach the function around a route-level IAM Deny.
for (const route of API_ROUTE_KEYS) {
  api.route(route, apiFunction.arn, { auth: { iam: true } });
}
