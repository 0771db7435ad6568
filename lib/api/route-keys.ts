/**
 * The HTTP API's routes as API Gateway route keys. Infra declares exactly these (each IAM-authorized);
 * a test checks they match what lib/api/routes.ts serves, so neither side can drift.
 */
export const API_ROUTE_KEYS = [
  "GET /health",
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
] as const;
