import { dlqUrls, eventSourceMappingPermission, eventSourceMappings, queues, queueUrls } from "./queues";
import { table } from "./storage";

const env = { SKYFORGE_TABLE: table.name, SKYFORGE_QUEUE_URLS: queueUrls };
const link = [table, ...queues.map((q) => q.queue)];
/** The API also reads DLQ depths and controls the queues' event sources. */
const apiEnv = { ...env, SKYFORGE_DLQ_URLS: dlqUrls, SKYFORGE_EVENT_SOURCE_MAPPINGS: eventSourceMappings };
const apiLink = [...link, ...queues.map((q) => q.dlq)];

/** Producers invoke this directly: an EnqueueRequest or { jobs: [...] }. */
export const enqueue = new sst.aws.Function("Enqueue", {
  handler: "functions/enqueue.handler",
  timeout: "30 seconds",
  memory: "512 MB",
  link,
  environment: env,
});

/** The HTTP API, IAM (SigV4) authorized on every route. */
export const api = new sst.aws.ApiGatewayV2("Api");
const routes = [
  "POST /jobs",
  "POST /jobs/batch",
  "GET /jobs",
  "GET /jobs/{id}",
  "POST /jobs/{id}/cancel",
  "POST /jobs/{id}/retry",
  "GET /queues",
  "POST /queues/{name}/pause",
  "POST /queues/{name}/resume",
  "PATCH /queues/{name}",
  "GET /schedules",
  "PUT /schedules/{name}",
  "DELETE /schedules/{name}",
  "GET /health",
];
for (const route of routes) {
  api.route(
    route,
    {
      handler: "functions/api.handler",
      link: apiLink,
      environment: apiEnv,
      permissions: [eventSourceMappingPermission],
      timeout: "29 seconds",
    },
    { auth: { iam: true } },
  );
}
