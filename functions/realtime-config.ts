import type { RealtimeConfig } from "../lib/engine.ts";
import { ConfigError } from "../lib/errors.ts";
import { iotPublisher } from "../lib/realtime/iot-publisher.ts";
import { ssmSecret } from "../lib/realtime/ssm-secret.ts";
import type { Env } from "./env-settings.ts";

/**
 * Realtime on AWS from the environment infra sets (infra/realtime.ts), names only, never the secret:
 * - SKYFORGE_REALTIME_PREFIX, the stack's topic prefix (`skyforge/<app>/<stage>/<component>`);
 * - SKYFORGE_REALTIME_ENDPOINT, the account's IoT data endpoint (`iot:Data-ATS`), where the
 *   publisher sends and subscribers connect; the two go together, and without them nothing is
 *   published (infra gives them to every function that changes a job's status, not to cleanup or
 *   the token callback);
 * - SKYFORGE_REALTIME_AUTHORIZER, the IoT custom authorizer's name, which a subscriber's url names;
 * - SKYFORGE_REALTIME_HMAC_PARAMETER, the SecureString parameter holding the token secret (the API,
 *   which mints tokens, and the authorizer, which checks them).
 */
export interface RealtimeSettings {
  prefix: string;
  endpoint: string;
  authorizer: string | undefined;
  secretParameter: string | undefined;
}

const HOST = /^[A-Za-z0-9.-]{1,253}$/;
const PREFIX = /^[A-Za-z0-9_.:-]{1,64}(\/[A-Za-z0-9_.:-]{1,64}){0,3}$/;

export function realtimeSettingsFromEnv(env: Env): RealtimeSettings | undefined {
  const prefix = env.SKYFORGE_REALTIME_PREFIX || undefined;
  const endpoint = env.SKYFORGE_REALTIME_ENDPOINT || undefined;
  if (!prefix && !endpoint) return undefined;
  if (!prefix || !endpoint)
    throw new ConfigError("SKYFORGE_REALTIME_PREFIX and SKYFORGE_REALTIME_ENDPOINT are set together");
  if (!PREFIX.test(prefix))
    throw new ConfigError(`SKYFORGE_REALTIME_PREFIX must be 1 to 4 topic levels, got "${prefix}"`);
  if (!HOST.test(endpoint))
    throw new ConfigError(`SKYFORGE_REALTIME_ENDPOINT must be a host name, got "${endpoint}"`);
  return {
    prefix,
    endpoint,
    authorizer: env.SKYFORGE_REALTIME_AUTHORIZER || undefined,
    secretParameter: env.SKYFORGE_REALTIME_HMAC_PARAMETER || undefined,
  };
}

/** Where a browser connects: IoT Core's MQTT over WebSocket, naming the authorizer that checks its token. */
export function subscriptionUrl(endpoint: string, authorizer: string): string {
  return `wss://${endpoint}/mqtt?x-amz-customauthorizer-name=${encodeURIComponent(authorizer)}`;
}

/** The engine's realtime on AWS: IoT's data plane, and where the API mints tokens, the secret and the url. */
export function realtimeConfigFromEnv(env: Env): RealtimeConfig | undefined {
  const settings = realtimeSettingsFromEnv(env);
  if (!settings) return undefined;
  const { prefix, endpoint, authorizer, secretParameter } = settings;
  const url = authorizer ? subscriptionUrl(endpoint, authorizer) : undefined;
  // AWS_ENDPOINT_URL_IOT_DATA_PLANE points it elsewhere: the local stack's broker, for its pool.
  const override = env.AWS_ENDPOINT_URL_IOT_DATA_PLANE;
  return {
    publisher: override
      ? iotPublisher(endpoint, (sdk) => new sdk.IoTDataPlaneClient({ endpoint: override }))
      : iotPublisher(endpoint),
    prefix,
    ...(secretParameter ? { secret: ssmSecret(secretParameter) } : {}),
    ...(url ? { url: () => url } : {}),
  };
}
