import { API_ROUTE_KEYS } from "../lib/api/route-keys";
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

/** The HTTP API, IAM (SigV4) authorized on every route. */
export const api = new sst.aws.ApiGatewayV2("Api");
const handler = {
  handler: "functions/api.handler",
  timeout: "29 seconds" as const,
  memory: "512 MB" as const,
  permissions: permissionsFor("api", [], mappingArns),
  environment: {
    ...storage,
    SKYFORGE_QUEUE_URLS: queueUrls,
    SKYFORGE_DLQ_URLS: dlqUrls,
    SKYFORGE_EVENT_SOURCE_MAPPINGS: eventSourceMappings,
    ...poolConfigEnv,
  },
  copyFiles: poolConfigFiles,
};
for (const route of API_ROUTE_KEYS) api.route(route, handler, { auth: { iam: true } });
