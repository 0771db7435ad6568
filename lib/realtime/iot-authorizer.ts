import { grantFor } from "./policy.ts";

/**
 * IoT Core's custom authorizer over the one policy (policy.ts), pure (docs/architecture.md §25): the
 * connection's MQTT password is the subscription token, its client id the one it connects as. A
 * token the policy refuses is not authenticated; a good one gets a policy document naming exactly
 * its grant's topics, and is disconnected when the token expires.
 */
export interface IotAuthorizerEvent {
  protocolData?: { mqtt?: { username?: string; password?: string; clientId?: string } };
}

/** IoT Core's least: a connection lives at least 5 minutes (and the token's shortest life is that). */
const MIN_SECONDS = 300;
const MAX_SECONDS = 86_400;

export interface IotAuthorizerResponse {
  isAuthenticated: boolean;
  principalId: string;
  disconnectAfterInSeconds: number;
  refreshAfterInSeconds: number;
  policyDocuments: {
    Version: "2012-10-17";
    Statement: { Effect: "Allow"; Action: string; Resource: string[] }[];
  }[];
}

/** `arn`: the authorizer function's own ARN, whose partition, region and account the topics are in. */
export function iotAuthorizerResponse(
  event: IotAuthorizerEvent,
  arn: string,
  config: { secret: string; prefix: string; now: number },
): IotAuthorizerResponse {
  const mqtt = event.protocolData?.mqtt ?? {};
  const token = Buffer.from(mqtt.password ?? "", "base64").toString("utf8");
  const clientId = mqtt.clientId ?? "";
  const answer = grantFor(token, clientId, config);
  const principalId = clientId.replace(/[^A-Za-z0-9]/g, "").slice(0, 128) || "refused";
  if (!answer.ok)
    return {
      isAuthenticated: false,
      principalId,
      disconnectAfterInSeconds: MIN_SECONDS,
      refreshAfterInSeconds: MIN_SECONDS,
      policyDocuments: [],
    };
  const [, partition, , region, account] = arn.split(":");
  const iot = `arn:${partition}:iot:${region}:${account}`;
  const { subscribe, publish, expiresAt } = answer.grant;
  const seconds = Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, Math.floor((expiresAt - config.now) / 1000)));
  return {
    isAuthenticated: true,
    principalId,
    disconnectAfterInSeconds: seconds,
    refreshAfterInSeconds: seconds,
    policyDocuments: [
      {
        Version: "2012-10-17",
        Statement: withResources([
          { Effect: "Allow", Action: "iot:Connect", Resource: [`${iot}:client/${clientId}`] },
          {
            Effect: "Allow",
            Action: "iot:Subscribe",
            Resource: subscribe.map((t) => `${iot}:topicfilter/${t}`),
          },
          { Effect: "Allow", Action: "iot:Receive", Resource: subscribe.map((t) => `${iot}:topic/${t}`) },
          { Effect: "Allow", Action: "iot:Publish", Resource: publish.map((t) => `${iot}:topic/${t}`) },
        ]),
      },
    ],
  };
}

type Statement = IotAuthorizerResponse["policyDocuments"][number]["Statement"][number];
/** A queue token publishes nothing: no statement rather than one naming no resource. */
const withResources = (statements: Statement[]) => statements.filter((s) => s.Resource.length > 0);
