import type * as z from "zod";
import type { QueueDeclaration } from "../lib/declarations/queue-declaration.ts";
import type { AnyKind } from "../lib/job/kind.ts";

/**
 * An app's names for a project that can't import the app: what `npx skyforge types` writes
 * (cli/app-types.ts), an interface with each kind's payload (as a producer sends it) by name and
 * the queue names. `createClient<SkyforgeApp>({ transport })` checks kinds, payloads and queues
 * against it as `createClient<typeof app>` does against the app value.
 */
export interface AppTypes {
  kinds: { [kind: string]: unknown };
  queues: string;
}

/**
 * AppTypes in the shape the client's types read (AppNames: declarations with a zod schema per
 * kind). Only the names and the payloads' input types are real: no value of it exists. The kinds
 * are built from AnyKind without its own name and payload, since `any & T` would be `any`.
 */
export type AppTypesNames<T extends AppTypes> = {
  queues: readonly (QueueDeclaration & { name: T["queues"] })[];
  kinds: readonly {
    [K in keyof T["kinds"] & string]: Omit<AnyKind, "name" | "payload"> & {
      name: K;
      payload: z.ZodType<unknown, T["kinds"][K]>;
    };
  }[keyof T["kinds"] & string][];
  poolKinds: readonly never[];
  rateLimits: readonly never[];
};
