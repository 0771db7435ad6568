/**
 * Realtime's names on AWS (docs/architecture.md §25), as data shared by infra/realtime.ts and
 * check:deploy: the stack's topic prefix, the token secret's parameter, the authorizer's and the
 * replay rule's names, and the topics each role may publish to. One IoT endpoint serves a whole
 * account and region, so every topic starts with the app, the stage and the component: two stacks
 * (or two components of one stage) never publish to, or grant, each other's topics.
 */

/** `skyforge/<app>/<stage>/<component>`: at most 7 slashes in an IoT topic, and its longest has 6. */
export function realtimePrefix(app: string, stage: string, component: string): string {
  return `skyforge/${app}/${stage}/${component}`;
}

/** The SecureString parameter holding the token secret (its name says `hmac`: environments carry it). */
export function realtimeSecretParameter(prefix: string): string {
  return `/${prefix}/realtime-hmac`;
}

/** The IoT custom authorizer's name, unique in the account and region: `[\w=,@-]`, at most 128. */
export function realtimeAuthorizerName(prefix: string): string {
  return prefix.replace(/[^A-Za-z0-9_=,@-]/g, "-").slice(0, 128);
}

/** The replay topic rule's name (`[A-Za-z0-9_]`, at most 128). */
export function realtimeReplayRuleName(prefix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9_]/g, "_")}_replay`.slice(0, 128);
}

/** The replay rule's query: each request's topic, and its payload as base64 whatever it holds. */
export function realtimeReplayRuleSql(prefix: string): string {
  return `SELECT topic() AS topic, encode(*, 'base64') AS payload FROM '${prefix}/replay/#'`;
}

/** The topic trees a role may publish to: a job's, a group's and a queue's events, a replay's answers. */
export const PUBLISHED_TOPICS = ["jobs", "groups", "queues", "replies"] as const;
export type PublishedTopics = (typeof PUBLISHED_TOPICS)[number];

/** `arn:<partition>:iot:<region>:<account>:topic/<prefix>/<topics>/*`. */
export function topicsArn(
  iot: { partition: string; region: string; account: string },
  prefix: string,
  topics: PublishedTopics,
): string {
  return `arn:${iot.partition}:iot:${iot.region}:${iot.account}:topic/${prefix}/${topics}/*`;
}
