import {
  groupTopic,
  isTopicSegment,
  jobTopic,
  queueTopic,
  replayTopic,
  replyTopic,
  type TokenClaims,
} from "../job/realtime-wire.ts";
import { verifyToken } from "./token.ts";

/**
 * The one realtime policy (docs/architecture.md §25), pure: what a connection holding `token` as
 * client `clientId` may do. The IoT Core authorizer (iot-authorizer.ts) turns it into a policy
 * document; the local broker's hooks (local/realtime-broker.ts) ask it at connect, subscribe and
 * publish. Exact topics only, never a wildcard: a job token reads its own job's topic (and its
 * group's when granted) and its own replies, and may publish only its own replay requests. A queue
 * token reads its queue's topic (every status event of the queue's jobs) and nothing else: no job's
 * topic (not even its queue's jobs': their steps and streams stay with job tokens), no group's, no
 * reply topic, and it publishes nothing (a queue's tail has no read-back).
 */
export interface Grant {
  claims: TokenClaims;
  subscribe: readonly string[];
  publish: readonly string[];
  /** When the connection must end: the token's expiry. */
  expiresAt: number;
}

export type GrantAnswer = { ok: true; grant: Grant } | { ok: false; reason: string };

export function grantFor(
  token: string,
  clientId: string,
  { secret, prefix, now }: { secret: string; prefix: string; now: number },
): GrantAnswer {
  const checked = verifyToken(token, secret, now);
  if (!checked.ok) return checked;
  const { claims } = checked;
  if (claims.p !== prefix) return { ok: false, reason: "the token is for another stack" };
  if (!isTopicSegment(clientId))
    return { ok: false, reason: "the client id must be 1..128 of [A-Za-z0-9_.:-]" };
  if ("q" in claims) {
    if (!isTopicSegment(claims.q)) return { ok: false, reason: "the token names no queue" };
    const subscribe = [queueTopic(prefix, claims.q)];
    return { ok: true, grant: { claims, subscribe, publish: [], expiresAt: claims.exp } };
  }
  if (!isTopicSegment(claims.j) || (claims.g !== undefined && !isTopicSegment(claims.g)))
    return { ok: false, reason: "the token names no job" };
  const subscribe = [
    jobTopic(prefix, claims.j),
    ...(claims.g ? [groupTopic(prefix, claims.g)] : []),
    replyTopic(prefix, claims.j, clientId),
  ];
  return {
    ok: true,
    grant: { claims, subscribe, publish: [replayTopic(prefix, claims.j, clientId)], expiresAt: claims.exp },
  };
}

/** Whether `topic` (a filter when subscribing) is one the grant names exactly. */
export const mayUse = (allowed: readonly string[], topic: string): boolean => allowed.includes(topic);
