import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import type { JobSteps, TokenView } from "../../lib/job/durable.ts";
import { type JournalFixture, journalFixture, tokenIdsOf } from "../../lib/job/journal-fixture.ts";
import { defineUnboundKind, type KindDefinition } from "../../lib/job/kind.ts";
import type { JobView } from "../../lib/job/schemas.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { fixtureLines, replayFixtures } from "../../scripts/deploy/durable-fixtures.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest } from "../support/engine-harness.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Recorded journal fixtures (docs/guide/durable-jobs.md, "Changing a durable kind safely"): a job of
 * a durable kind runs on the emulators to its sleep; its journal is recorded through the API as a
 * fixture; then check-deploy's replay (scripts/deploy/durable-fixtures.ts) runs that fixture offline
 * against the kind's handler as changed: unchanged, nothing; a step moved before the sleep, a
 * WARNING naming the kind, the fixture, the step and the change, and what onVersionChange does.
 */
const calls: string[] = [];
let code: "first" | "reordered" | "branching" = "first";

const kind = defineUnboundKind({
  name: "t-fixture",
  queue: "default",
  payload: z.object({ order: z.string() }),
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ order }, ctx) => {
    const a = await ctx.step("a", () => {
      calls.push(`${order}:a`);
      return { order };
    });
    const items = await ctx.map("items", [1, 2], (n) => n * 10, { concurrency: 2 });
    const token = await ctx.createToken("approval", { timeoutSeconds: 600 });
    if (code === "reordered") await ctx.step("b", () => calls.push(`${order}:b`));
    // The new code's branch: a job whose journal went past this point takes 1, the old path.
    const path = code === "branching" ? await ctx.version("b-first", [1, 2]) : 1;
    if (path === 2) await ctx.step("b", () => calls.push(`${order}:b`));
    await ctx.sleep("nap", 20 * 60);
    if (path === 1) await ctx.step("b", () => calls.push(`${order}:b`));
    return { a, items, token: token.id };
  },
});
const original = { version: kind.version, onVersionChange: kind.onVersionChange };

const harness = harnessPerTest();
let root: string;
let fixture: JournalFixture;

/** The fixture as `skyforge durable fixture` records it: GET /jobs/{id}, /jobs/{id}/steps and /tokens/{id}. */
async function recordFixture(api: ReturnType<typeof createApiHandler>, id: string): Promise<JournalFixture> {
  const get = async <T>(path: string): Promise<T> => {
    const out = await api(httpApiEvent({ method: "GET", path }), {} as never);
    expect(out.statusCode, String(out.body)).toBe(200);
    return JSON.parse(String(out.body)) as T;
  };
  const steps = await get<JobSteps>(`/jobs/${id}/steps`);
  const tokens = await Promise.all(tokenIdsOf(steps).map((t) => get<TokenView>(`/tokens/${t}`)));
  return journalFixture(await get<JobView>(`/jobs/${id}`), steps, tokens, new Date());
}

function writeFixture(name: string, text: string): void {
  const dir = join(root, "durable-fixtures", "t-fixture");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), text);
}

async function replayed(
  changes: { code: typeof code; version?: string; onVersionChange?: "pause" | "restart" },
  kinds: ReadonlyMap<string, KindDefinition> = new Map([[kind.name, kind as KindDefinition]]),
) {
  code = changes.code;
  Object.assign(kind, {
    version: changes.version ?? original.version,
    onVersionChange: changes.onVersionChange,
  });
  try {
    return await replayFixtures(root, kinds);
  } finally {
    code = "first";
    Object.assign(kind, original);
  }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "skyforge-fixtures-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a journal fixture recorded from a sleeping job, replayed against changed code", () => {
  it("records the journal through the API: ops in order with their places, no token secret", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: [kind] });
    h.startPoller();
    const order = `o-${Date.now()}`;
    const { job } = await h.engine.producer.enqueue({ kind: "t-fixture", payload: { order } });
    await waitFor(async () => (await getJob(h.engine.store, job.id))?.waiting, "the sleep");
    fixture = await recordFixture(createApiHandler(h.engine), job.id);
    expect(fixture).toMatchObject({
      format: 1,
      kind: "t-fixture",
      jobId: job.id,
      status: "scheduled",
      payload: { order },
    });
    expect(fixture.version).toMatch(/^src-[0-9a-f]{12}$/);
    expect(fixture.ops.map((o) => [o.name, o.op, o.place, o.status])).toEqual([
      ["a", "step", 1, "done"],
      ["items[0]", "step", 2, "done"],
      ["items[1]", "step", 3, "done"],
      ["approval", "token", 4, "done"],
      ["nap", "sleep", 5, "sleeping"],
    ]);
    expect(fixture.ops[0]?.result).toEqual({ order });
    const text = JSON.stringify(fixture, null, 2);
    expect(text).not.toMatch(/secret=(?!removed)/);
    expect(text).toContain("secret=removed");
    writeFixture("sleeping", text);
  });

  it("the handler unchanged: the fixture replays to its sleep, and nothing is reported", async () => {
    const before = calls.length;
    const out = await replayed({ code: "first" });
    expect(out).toEqual({ replayed: 1, findings: [] });
    expect(fixtureLines(out.findings, out.replayed)).toEqual(["durable fixtures: 1 replayed, 0 warning(s)"]);
    expect(calls.length).toBe(before); // offline: no step function ran
  });

  it("a step moved before the sleep: a WARNING naming the kind, the fixture, the step and the change", async () => {
    const out = await replayed({ code: "reordered" });
    expect(out.findings).toEqual([
      {
        file: join("durable-fixtures", "t-fixture", "sleeping.json"),
        level: "warning",
        text: `kind t-fixture: step "b" is new at place 5 of the handler's calls, where the journal has "nap"; the version ("${fixture.version}") is the same: onVersionChange does not apply, and a suspended job that replays meets NonDeterminismError there and is paused`,
      },
    ]);
    expect(fixtureLines(out.findings, out.replayed)[0]).toBe("durable fixtures: 1 replayed, 1 warning(s)");
  });

  it("under a new version, the reorder's warning says what onVersionChange does", async () => {
    const paused = await replayed({ code: "reordered", version: "v2", onVersionChange: "pause" });
    expect(paused.findings[0]?.text).toMatch(
      /step "b" is new at place 5 .*; version "src-\w+" -> "v2", onVersionChange "pause": such jobs pause when they resume, before any replay/,
    );
    const restarted = await replayed({ code: "reordered", version: "v2", onVersionChange: "restart" });
    expect(restarted.findings[0]?.text).toMatch(
      /onVersionChange "restart": such jobs start over under this code/,
    );
  });

  it("a new version handled by ctx.version is reported as such: a note, no warning", async () => {
    const out = await replayed({ code: "branching", version: "v2" });
    expect(out.findings).toEqual([
      {
        file: join("durable-fixtures", "t-fixture", "sleeping.json"),
        level: "note",
        text: `kind t-fixture: version "${fixture.version}" -> "v2", onVersionChange "continue": such jobs replay their records under this code; its recorded calls replay as recorded (ctx.version "b-first" takes 1)`,
      },
    ]);
  });

  it("a kind gone from the app, and a file that is no fixture", async () => {
    const gone = await replayed({ code: "first" }, new Map());
    expect(gone.findings[0]).toMatchObject({
      level: "warning",
      text: "kind t-fixture is not in the app any more: its suspended jobs have no handler to resume them",
    });
    writeFixture("broken", JSON.stringify({ ...fixture, format: 2 }));
    writeFixture("no-ops", JSON.stringify({ ...fixture, ops: "none" }));
    try {
      const out = await replayed({ code: "first" });
      expect(out.replayed).toBe(3);
      expect(out.findings).toEqual([
        {
          file: join("durable-fixtures", "t-fixture", "broken.json"),
          level: "fail",
          text: "not a journal fixture: format 2: this skyforge reads journal fixtures of format 1",
        },
        {
          file: join("durable-fixtures", "t-fixture", "no-ops.json"),
          level: "fail",
          text: expect.stringMatching(/^not a journal fixture: ops: /),
        },
      ]);
    } finally {
      rmSync(join(root, "durable-fixtures", "t-fixture", "broken.json"));
      rmSync(join(root, "durable-fixtures", "t-fixture", "no-ops.json"));
    }
  });
});
