import type { AnyKind } from "../job/kind.ts";
import { poolKindDefinition } from "../pool/child-slot.ts";
import { declaredPoolKinds, type PoolKindSpec } from "../pool/pool-kinds.ts";
import { echo } from "./echo.ts";
import { fail } from "./fail.ts";
import { flaky } from "./flaky.ts";
import { partnerCall } from "./partner-call.ts";
import { sleep } from "./sleep.ts";

/** Adding a kind: write lib/kinds/<name>.ts with defineKind, then add it to this list. */
export const kinds: readonly AnyKind[] = [echo, sleep, fail, flaky, partnerCall];

/** Every kind a producer may enqueue: the Lambda kinds above and the pool's (lib/pool/pool-kinds.ts). */
export const allKinds: readonly AnyKind[] = [...kinds, ...declaredPoolKinds.map(poolKindDefinition)];

export type KindRegistry = ReadonlyMap<string, AnyKind>;

export function buildRegistry(list: readonly AnyKind[] = allKinds): KindRegistry {
  const map = new Map<string, AnyKind>();
  for (const kind of list) {
    if (map.has(kind.name)) throw new Error(`kind ${kind.name} is declared twice`);
    map.set(kind.name, kind);
  }
  return map;
}

/** The Lambda kinds plus a resolved set of pool kinds (the declared ones with an operator's file over them). */
export function registryWithPoolKinds(poolKinds: readonly PoolKindSpec[]): KindRegistry {
  return buildRegistry([...kinds, ...poolKinds.map(poolKindDefinition)]);
}
