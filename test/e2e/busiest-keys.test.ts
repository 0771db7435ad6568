import { randomUUID } from "node:crypto";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { createClient } from "../../client/create-client.ts";
import { httpTransport } from "../../client/http-transport.ts";
import type { BusyKey } from "../../client/skyforge-client.ts";
import { busiestKeys, MAX_KEYS_LOOKED_AT } from "../../lib/flow/busiest-keys.ts";
import { flowKey } from "../../lib/job/flow-key.ts";
import type { AnyKind } from "../../lib/job/kind.ts";
import { parkJob } from "../../lib/store/flow-key-ops.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * GET /keys?queue=…&limit=… on the local stack (lib/flow/busiest-keys.ts): a queue's flow keys with
 * parked jobs, most waiting first, over HTTP and through the typed client; its 404 and 400s.
 */
const stack = localStackForFile({ app });

const { call } = stackHttp(() => stack().url);
async function enqueueMany(tenant: string, n: number, sleepMs: number): Promise<void> {
  const jobs = Array.from({ length: n }, (_, seq) => ({
    kind: "tenant-echo",
    payload: { tenant, seq, sleepMs },
  }));
  const { status, body } = await call("POST", "/jobs/batch", { jobs });
  expect(status).toBe(200);
  expect(body.results.every((r: Json) => typeof r.id === "string")).toBe(true);
}

describe("GET /keys: a queue's busiest flow keys", () => {
  it("lists two flooded tenants of tenant-echo by waiting count, most first; the client reads the same", async () => {
    const big = `big-${randomUUID()}`;
    const small = `small-${randomUUID()}`;
    // tenant-echo runs 2 at once for a plain tenant: 14 jobs leave about 12 parked, 6 about 4, and
    // each line shortens by 2 every 2 s, so the big one stays ahead while the test looks.
    await enqueueMany(big, 14, 2_000);
    await enqueueMany(small, 6, 2_000);

    const listed = await waitFor(async () => {
      const { status, body } = await call("GET", "/keys?queue=default&limit=50");
      expect(status).toBe(200);
      const items = body.items as BusyKey[];
      const at = (tenant: string) => items.findIndex((k) => k.key === tenant);
      const [b, s] = [items[at(big)], items[at(small)]];
      return b && s && b.waiting > s.waiting ? { items, b, s, order: [at(big), at(small)] } : undefined;
    }, "both tenants listed, the bigger line first");
    expect(listed.order[0]).toBeLessThan(listed.order[1] as number);
    for (const k of [listed.b, listed.s]) {
      expect(k).toMatchObject({ kind: "tenant-echo", concurrency: 2 });
      expect(k.running).toBeLessThanOrEqual(2);
      expect(k.waiting).toBeGreaterThan(0);
    }
    const waits = listed.items.map((k) => k.waiting);
    expect(waits).toEqual([...waits].sort((x, y) => y - x));
    expect(listed.items.every((k) => k.kind === "tenant-echo")).toBe(true);

    // limit 1: the busiest alone. The typed client reads the listing and one key.
    const one = await call("GET", "/keys?queue=default&limit=1");
    expect(one.status).toBe(200);
    expect(one.body.items).toHaveLength(1);
    const client = createClient<typeof app>({ transport: httpTransport({ url: stack().url }) });
    const page = await client.keys.busiest("default", 50);
    expect(page.items.map((k) => k.key)).toContain(big);
    const key = await client.keys.get("tenant-echo", big);
    expect(key).toMatchObject({ kind: "tenant-echo", key: big, concurrency: 2 });

    // Another queue's listing has none of them: no kind with flow is at home there.
    const batch = await call("GET", "/keys?queue=batch");
    expect([batch.status, batch.body]).toEqual([200, { items: [] }]);
  }, 60_000);

  it("404 for an undeclared queue, 400 for a bad query, never a 5xx", async () => {
    const notFound = await call("GET", "/keys?queue=nope");
    expect([notFound.status, notFound.body.error.code]).toEqual([404, "not_found"]);
    for (const query of [
      "queue=default&limit=0",
      "queue=default&limit=51",
      "queue=default&limit=2.5",
      "queue=default&limit=ten",
      "limit=5",
      "",
      "queue=default&other=1",
      "queue=default&queue=batch",
    ]) {
      const r = await call("GET", `/keys${query ? `?${query}` : ""}`);
      expect([query, r.status, r.body.error?.code]).toEqual([query, 400, "validation_error"]);
    }
    const client = createClient<typeof app>({ transport: httpTransport({ url: stack().url }) });
    await expect(client.keys.busiest("default", 0)).rejects.toMatchObject({ status: 400 });
  });

  it("steps over another queue's kinds in the parked index, and looks at no more than 200 keys", async () => {
    const { engine } = stack();
    // A flow kind at home on "batch" whose name sorts before tenant-echo's: its lines come first in
    // every shard the walk for "default" reads.
    const echo = engine.registry.get("tenant-echo") as AnyKind;
    const other = { ...echo, name: "aa-other", queue: "batch" } as AnyKind;
    const deps = { ...engine, registry: new Map([...engine.registry, [other.name, other]]) };
    const park = (kind: string, queue: string, key: string) => {
      const now = Date.now();
      return parkJob(
        engine.store,
        {
          id: ulid(),
          kind,
          queue,
          maxAttempts: 3,
          priority: "normal",
          createdAt: now,
          runAt: now,
          timeoutSeconds: 60,
          flowKey: key,
        },
        flowKey(kind, key),
        now,
      );
    };
    const tenant = `parked-${randomUUID()}`;
    for (let i = 0; i < 3; i++) expect(await park("tenant-echo", "default", tenant)).toBe(true);
    const keys = Array.from({ length: MAX_KEYS_LOOKED_AT + 1 }, (_, i) => `o-${i}-${randomUUID()}`);
    for (let i = 0; i < keys.length; i += 20)
      await Promise.all(keys.slice(i, i + 20).map((key) => park(other.name, "batch", key)));
    expect(await park(other.name, "batch", keys[0] as string)).toBe(true);

    const home = await busiestKeys(deps, "default", 50);
    expect(home.truncated).toBeUndefined();
    expect(home.items.find((k) => k.key === tenant)).toEqual({
      kind: "tenant-echo",
      key: tenant,
      running: 0,
      waiting: 3,
      concurrency: 2,
      // When the first of its three parked jobs became due (doctor's lagging-key check reads it).
      oldestWaitingSince: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(home.items.every((k) => k.kind === "tenant-echo")).toBe(true);

    const away = await busiestKeys(deps, "batch", 5);
    expect(away.truncated).toBe(true);
    expect(away.items).toHaveLength(5);
    expect(away.items.every((k) => k.kind === other.name)).toBe(true);
    // keys[0] has 2 parked, the others 1: it leads when the walk looked at it, and the rest follow.
    const waits = away.items.map((k) => k.waiting);
    expect(waits).toEqual([...waits].sort((x, y) => y - x));
    expect(waits.every((w) => w >= 1)).toBe(true);
  }, 60_000);
});
