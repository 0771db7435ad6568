import { apiHandler } from "../lib/handlers/api.ts";
import { lambdaEventSources } from "./lambda-event-sources.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine } = engineFromEnv("skyforge-api", { eventSources: lambdaEventSources });

/** HTTP API (API Gateway v2 payload format 2.0). */
export const handler = apiHandler(engine);
