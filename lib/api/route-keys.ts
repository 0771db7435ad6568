/**
 * The HTTP API's routes as API Gateway route keys. Infra declares exactly these (each IAM-authorized);
 * a test checks they match what lib/api/routes.ts serves, so neither side can drift.
 */
export const API_ROUTE_KEYS = [
  "GET /health",
  "HEAD /health",
  "POST /jobs",
  "POST /jobs/batch",
  "GET /jobs",
  "GET /jobs/{id}",
  "POST /jobs/{id}/cancel",
  "POST /jobs/{id}/retry",
  "POST /groups",
  "GET /groups/{id}",
  "GET /groups/{id}/children",
  "POST /groups/{id}/children",
  "POST /groups/{id}/seal",
  "POST /groups/{id}/cancel",
  "GET /queues",
  "POST /queues/{name}/pause",
  "POST /queues/{name}/resume",
  "PATCH /queues/{name}",
  "GET /schedules",
  "PUT /schedules/{name}",
  "DELETE /schedules/{name}",
] as const;

/**
 * API Gateway answers a method or path it has no route for itself (404 `{"message":"Not Found"}`).
 * Infra also routes this catch-all to the API function, so a wrong method gets the function's 405
 * with `Allow`, and an unknown path its 404, both in the documented error shape.
 */
export const API_CATCH_ALL_ROUTE_KEY = "$default";
