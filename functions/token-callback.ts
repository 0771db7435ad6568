import { tokenCallbackHandler } from "../lib/handlers/token-callback.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine } = engineFromEnv("skyforge-token-callback");

/**
 * `POST /tokens/{id}` alone (API Gateway v2 payload format 2.0), the one route without IAM auth:
 * completes the token its url names and resumes its job, nothing else (infra/api.ts).
 */
export const handler = tokenCallbackHandler(engine);
