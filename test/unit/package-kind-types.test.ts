import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { compileTypoFixture } from "../support/typo-fixture.ts";

/**
 * The `skyforge` package's builders in a user's app module (packages/skyforge/README.md, "Typed
 * kinds"): bound to no app, a kind's queue is checked by defineApp against the app's declared
 * queues and tiers; bound by `builders<ThisApp>()`, queues, kind names, payloads and rate-limit
 * scopes are checked where they are written.
 */
const fixture = fileURLToPath(new URL("../fixtures/package-typos/typos.ts", import.meta.url));

test("every typo in the package fixture is a compile error, and nothing else is", () => {
  const { lines, marked, failing } = compileTypoFixture(fixture);
  expect(marked.length).toBe(9);
  expect([...failing.keys()].sort((a, b) => a - b)).toEqual(marked);
  const messageAt = (needle: string) => failing.get(lines.findIndex((l) => l.includes(needle)) + 1)?.join();
  expect(messageAt("kinds: [echo, lost]")).toMatch(
    /kind 'lost' names queue 'defualt', which is not one of the app's Lambda-tier queues/,
  );
  expect(messageAt("kinds: [onPoolQueue]")).toMatch(
    /kind 'on-pool-queue' names queue 'heavy', which is not one of the app's Lambda-tier queues/,
  );
  expect(messageAt("poolKinds: [strayPoolKind]")).toMatch(
    /pool kind 'stray' names queue 'default', which is not one of the app's pool-tier queues/,
  );
  expect(messageAt('ctx.enqueue("ecoh"')).toMatch(/'"ecoh"' is not assignable to parameter of type/);
  expect(messageAt('ctx.rateLimit("partnr")')).toMatch(
    /'"partnr"' is not assignable to parameter of type '"partner"'/,
  );
}, 60_000);
