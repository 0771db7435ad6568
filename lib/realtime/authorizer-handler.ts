import type { Clock } from "../clock.ts";
import {
  type IotAuthorizerEvent,
  type IotAuthorizerResponse,
  iotAuthorizerResponse,
} from "./iot-authorizer.ts";

/**
 * IoT Core's custom authorizer for realtime (docs/architecture.md §25), a function of its own: IoT
 * invokes it at each connect with the MQTT password (the subscription token, base64) and the client
 * id, and it answers the one policy's grant for that token as a policy document. Its role may read
 * the secret and nothing else of AWS (no iot:*, no table): a bug here can grant only what a token
 * signed with the secret names. A secret it can't read rejects the invocation, and IoT refuses the
 * connection.
 */
export interface RealtimeAuthorizerConfig {
  secret: () => Promise<string>;
  prefix: string;
  clock: Clock;
}

export function realtimeAuthorizerHandler(config: RealtimeAuthorizerConfig) {
  return async (
    event: IotAuthorizerEvent,
    context: { invokedFunctionArn: string },
  ): Promise<IotAuthorizerResponse> =>
    iotAuthorizerResponse(event, context.invokedFunctionArn, {
      secret: await config.secret(),
      prefix: config.prefix,
      now: config.clock.now(),
    });
}
