import type * as z from "zod";
import type { AnyKind, KindDefinition } from "../job/kind.ts";
import type { PoolKindSpec } from "./pool-kind.ts";
import type { QueueDeclaration } from "./queue-declaration.ts";
import type { RateLimitScope } from "./rate-limit-scope.ts";

/** The names an app's declarations give (its queues, kinds, scopes) and the types looked up by them. */

/** The parts of an app its names come from; the builders below read them lazily, so kinds can refer to each other. */
export interface AppNames {
  queues: readonly QueueDeclaration[];
  kinds: readonly AnyKind[];
  poolKinds: readonly PoolKindSpec[];
  rateLimits: readonly RateLimitScope[];
}

export type QueueName<A extends AppNames> = A["queues"][number]["name"];
/** Queues a Lambda worker serves: every queue not declared `tier: "pool"`. */
export type LambdaQueueName<A extends AppNames> = Exclude<A["queues"][number], { tier: "pool" }>["name"];
export type PoolQueueName<A extends AppNames> = Extract<A["queues"][number], { tier: "pool" }>["name"];
export type ScopeName<A extends AppNames> = A["rateLimits"][number]["scope"];

/** A pool kind's payload is any JSON: its child program validates it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Every kind's payload type (as a producer writes it) by name: Lambda kinds from their schema, pool kinds JSON. */
export type KindPayloads<A extends AppNames> = {
  [K in A["kinds"][number] as K["name"]]: z.input<K["payload"]>;
} & { [P in A["poolKinds"][number] as P["name"]]: JsonValue };
export type KindName<A extends AppNames> = keyof KindPayloads<A> & string;
/**
 * Every kind's result type (as `ctx.invoke` hands it back, from JSON) by name: a Lambda kind's from its
 * handler, a pool kind's any JSON.
 */
export type KindResults<A extends AppNames> = {
  [K in A["kinds"][number] as K["name"]]: K extends KindDefinition<z.ZodType, infer R> ? R : unknown;
} & { [P in A["poolKinds"][number] as P["name"]]: JsonValue };
/** The payload of one kind, looked up by name: `PayloadOf<typeof app, "resize-image">`. */
export type PayloadOf<A extends AppNames, N extends KindName<A>> = KindPayloads<A>[N];
