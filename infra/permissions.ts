import { CLAIMS_PREFIX, TOKEN_OBJECTS_PATTERN } from "../lib/claims/claim-keys";
import { grantsFor, type ResourceRef, type Role } from "../lib/deploy-plan/grants";
import type { Build } from "./build";
import type { Queues } from "./queues";
import type { RealtimeTargets } from "./realtime";
import type { Storage } from "./storage";

/** The event source mapping ARNs, by queue; known once the workers exist (infra/workers.ts). */
export type MappingArns = ReadonlyMap<string, $util.Output<string>>;

/** What a grant's references resolve against: this component's table, bucket and queues. */
export interface GrantTargets {
  storage: Storage;
  queues: Queues;
  realtime: RealtimeTargets;
}

function arnOf(ref: ResourceRef, targets: GrantTargets, mappings: MappingArns): $util.Input<string> {
  const { table, claims } = targets.storage;
  switch (ref.type) {
    case "table":
      return table.arn;
    case "tableIndexes":
      return $interpolate`${table.arn}/index/*`;
    case "queue":
      return targets.queues.queueOf(ref.queue).queue.arn;
    case "dlq":
      return targets.queues.queueOf(ref.queue).dlq.arn;
    case "claimObjects":
      return $interpolate`${claims.arn}/${CLAIMS_PREFIX}*`;
    case "tokenObjects":
      return $interpolate`${claims.arn}/${TOKEN_OBJECTS_PATTERN}`;
    case "realtimeSecret":
      return targets.realtime.secretArn;
    case "realtimeTopics":
      return targets.realtime.topicsArn(ref.topics);
    case "eventSourceMapping": {
      const arn = mappings.get(ref.queue);
      if (!arn) throw new Error(`no event source mapping for queue ${ref.queue}`);
      return arn;
    }
  }
}

/**
 * lib/deploy-plan/grants.ts's plan for one role, as SST function/service permissions. A grant's
 * conditions (the token callback's: which partition keys, which attributes, no item returned) go
 * into its statement as they are: IAM ANDs them.
 */
export function permissionsFor(
  build: Build,
  targets: GrantTargets,
  role: Role,
  own: readonly string[] = [],
  mappings: MappingArns = new Map(),
) {
  return grantsFor(role, build.app.queues, own)
    .filter((g) => g.resources.length > 0)
    .map((g) => ({
      actions: [...g.actions],
      resources: g.resources.map((r) => arnOf(r, targets, mappings)),
      ...(g.conditions
        ? {
            conditions: g.conditions.map((c) => ({
              test: c.test,
              variable: c.variable,
              values: [...c.values],
            })),
          }
        : {}),
    }));
}
