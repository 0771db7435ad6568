import { app } from "../../app/index.ts";
import type { App } from "../../lib/declarations/define-app.ts";
import { appRegistry } from "../../lib/engine.ts";
import type { AnyKind } from "../../lib/job/kind.ts";
import type { KindRegistry } from "../../lib/job/registry.ts";

/** The project's app with some parts replaced: harnesses run its kinds on a queue of their own. */
export function testApp(parts: Partial<App> = {}): App {
  return { ...app, ...parts };
}

/** The app's first queue ("default"): the one its demo kinds feed from. */
export const defaultQueue = app.queues[0];

/** The registry a deployment of the app has (its kinds and pool kinds), plus test kinds. */
export function testRegistry(extra: readonly AnyKind[] = []): KindRegistry {
  return appRegistry({ kinds: [...app.kinds, ...extra] }, app.poolKinds);
}
