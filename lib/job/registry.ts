import { ConfigError } from "../errors.ts";
import type { AnyKind } from "./kind.ts";

/** Every kind a producer may enqueue and a worker may run, by name. */
export type KindRegistry = ReadonlyMap<string, AnyKind>;

export function buildRegistry(list: readonly AnyKind[]): KindRegistry {
  const map = new Map<string, AnyKind>();
  for (const kind of list) {
    if (map.has(kind.name)) throw new ConfigError(`kind ${kind.name} is declared twice`);
    map.set(kind.name, kind);
  }
  return map;
}
