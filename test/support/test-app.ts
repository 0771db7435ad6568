import { app } from "../../app/index.ts";
import type { App } from "../../lib/app/define-app.ts";
import type { AnyKind } from "../../lib/job/kind.ts";
import { buildRegistry, type KindRegistry } from "../../lib/job/registry.ts";
import { poolKindDefinition } from "../../lib/pool/child-slot.ts";

/** The project's app with some parts replaced: harnesses run its kinds on a queue of their own. */
export function testApp(parts: Partial<App> = {}): App {
  return { ...app, ...parts };
}

/** The app's first queue ("default"): the one its demo kinds feed from. */
export const defaultQueue = app.queues[0];

/** The registry a deployment of the app has: its kinds and its pool kinds. */
export function appRegistry(extra: readonly AnyKind[] = []): KindRegistry {
  return buildRegistry([...app.kinds, ...app.poolKinds.map(poolKindDefinition), ...extra]);
}
