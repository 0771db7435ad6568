import type { IoTDataPlaneClient } from "@aws-sdk/client-iot-data-plane";
import type { RealtimePublisher } from "../services/realtime-service.ts";
import { onFirstUse } from "./first-use.ts";

/**
 * Realtime's publisher on AWS (docs/architecture.md §25): one signed call of IoT Core's data-plane
 * Publish per message, QoS 0, to the account's `iot:Data-ATS` endpoint (infra gives its host). The
 * package is loaded on first use, so a cold start that publishes nothing doesn't pay for it; a
 * refused call rejects, and the publish queue (publish-queue.ts) retries it, then drops and counts it.
 */
type DataPlane = typeof import("@aws-sdk/client-iot-data-plane");
const dataPlanePackage = (): Promise<DataPlane> => import("@aws-sdk/client-iot-data-plane");

export function iotPublisher(
  endpoint: string,
  make: (sdk: DataPlane) => IoTDataPlaneClient = (sdk) =>
    new sdk.IoTDataPlaneClient({ endpoint: `https://${endpoint}` }),
): RealtimePublisher {
  // A failed load is not kept: the next publish tries again.
  const load = onFirstUse(() => dataPlanePackage().then((sdk) => ({ sdk, client: make(sdk) })));
  return {
    async publish(topic, payload) {
      const { sdk, client } = await load();
      await client.send(
        new sdk.PublishCommand({ topic, qos: 0, payload: new TextEncoder().encode(payload) }),
      );
    },
  };
}
