import { systemClock } from "../lib/clock.ts";
import type { App } from "../lib/declarations/define-app.ts";
import { ConfigError } from "../lib/errors.ts";
import { realtimeAuthorizerHandler as authorizer } from "../lib/realtime/authorizer-handler.ts";
import { iotPublisher } from "../lib/realtime/iot-publisher.ts";
import { realtimeReplayHandler as replay } from "../lib/realtime/replay-handler.ts";
import { ssmSecret } from "../lib/realtime/ssm-secret.ts";
import { engineFromEnv } from "./engine-config.ts";
import type { Env } from "./env-settings.ts";
import { type RealtimeSettings, realtimeSettingsFromEnv } from "./realtime-config.ts";

/**
 * Realtime's two functions on AWS (infra/realtime.ts), as factories of the app like every entry
 * (functions/handlers.ts): IoT Core's custom authorizer, and the replay function its topic rule
 * invokes. Each reads its settings once, at the module's init.
 */

function settingsOf(env: Env): RealtimeSettings {
  const settings = realtimeSettingsFromEnv(env);
  if (!settings) throw new ConfigError("SKYFORGE_REALTIME_PREFIX is not set");
  return settings;
}

/**
 * IoT Core's custom authorizer: the app is not used (a token's grant is the policy's alone), so its
 * deployed entry passes none and its bundle holds none of the app (infra/entries.ts, APP_FREE_FUNCTIONS).
 */
export function realtimeAuthorizerHandler(_app?: App, env: Env = process.env) {
  const { prefix, secretParameter } = settingsOf(env);
  if (!secretParameter) throw new ConfigError("SKYFORGE_REALTIME_HMAC_PARAMETER is not set");
  return authorizer({ secret: ssmSecret(secretParameter), prefix, clock: systemClock });
}

/** IoT Core's rule on `<prefix>/replay/#`: answers each subscriber's replay request. */
export function realtimeReplayHandler(app: App, env: Env = process.env) {
  const { prefix, endpoint } = settingsOf(env);
  const { engine } = engineFromEnv(app, "skyforge-realtime-replay", {}, env);
  return replay({ realtime: engine.realtime, prefix, publisher: iotPublisher(endpoint), log: engine.log });
}
