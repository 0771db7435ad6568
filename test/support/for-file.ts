import { afterAll, beforeAll } from "vitest";

/**
 * Something a whole file shares (emulators, a stack): `start` runs before the file's first test,
 * `stop` after its last. The getter says so if asked for outside a test or hook, rather than
 * handing out undefined.
 */
export function forFile<T>(what: string, start: () => Promise<T>, stop: (it: T) => Promise<void>): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    if (started !== undefined) await stop(started);
  });
  return () => {
    if (started === undefined)
      throw new Error(`${what} start in beforeAll: ask for them inside a test or hook`);
    return started;
  };
}
