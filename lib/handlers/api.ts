import { createApiHandler } from "../api/routes.ts";
import type { Engine } from "../services/engine-services.ts";

/** HTTP API (API Gateway v2 payload format 2.0). */
export function apiHandler(engine: Engine) {
  return createApiHandler(engine);
}
