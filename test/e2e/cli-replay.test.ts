import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useCliOnStack } from "../support/skyforge-cli.ts";
import type { Json } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * `npx skyforge jobs replay` (POST /jobs/replay, docs/architecture.md §21) against the local stack
 * (useCliOnStack): dead `fail` jobs found by their error text, a dry run, a replay, the same
 * request id twice, more than 100 matches replayed in chunks with progress, more than a request's
 * 500 found along the API's cursor, and the usage errors.
 */
const { call, cli } = useCliOnStack("skyforge-cli-replay-");
const { run, json } = cli;

/** `n` fail jobs of one attempt each, with `message` as their error, once every one is dead. */
async function deadJobs(message: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let at = 0; at < n; at += 100) {
    const jobs = Array.from({ length: Math.min(100, n - at) }, () => ({
      kind: "fail",
      payload: { message },
      maxAttempts: 1,
    }));
    const answer = await call("POST", "/jobs/batch", { jobs });
    expect(answer.status).toBe(200);
    ids.push(...answer.body.results.map((r: Json) => r.id as string));
  }
  await allDead(ids);
  return ids;
}

/**
 * Until each of `ids` has been seen dead (a terminal status: a job seen dead is not asked again).
 * A look every 250 ms, not every 50: each look is a GET per job still to die, and the stack is
 * running those jobs on the same two cores.
 */
async function allDead(ids: readonly string[]) {
  const pending = new Set(ids);
  await waitFor(
    async () => {
      for (const id of [...pending]) {
        if ((await call("GET", `/jobs/${id}`)).body.status !== "dead") return false;
        pending.delete(id);
      }
      return true;
    },
    `${ids.length} jobs to be dead`,
    60_000,
    250,
  );
}

describe("skyforge jobs replay against the local stack", () => {
  it("a dry run counts the dead jobs an --error matches; the replay runs each again; the same --request-id twice replays once", async () => {
    const token = `cli-replay-${randomUUID()}`;
    const ids = await deadJobs(`bad row (${token})`, 3);
    await deadJobs(`partner down (${token})`, 1);
    const filter = ["jobs", "replay", "--status", "dead", "--kind", "fail", "--error", `bad row (${token})`];

    const dry = await json([...filter, "--since", "1h", "--dry-run"]);
    expect(dry).toMatchObject({ matched: 3, replayed: 0, dryRun: true });
    expect(dry.jobs.map((j: Json) => j.from).sort()).toEqual([...ids].sort());
    const dryHuman = await run([...filter, "--dry-run"]);
    expect(dryHuman.code).toBe(0);
    expect(dryHuman.stdout).toMatch(/^dry run: 3 jobs match; nothing replayed\nJOB\n/);

    const requestId = `cli-${randomUUID()}`;
    const first = await json([...filter, "--since", "1h", "--request-id", requestId]);
    expect(first).toMatchObject({ matched: 3, replayed: 3, requestId });
    expect(first.jobs.map((j: Json) => j.from).sort()).toEqual([...ids].sort());
    for (const { from, id } of first.jobs) {
      expect((await call("GET", `/jobs/${id}`)).body).toMatchObject({ kind: "fail", replayOf: from });
      expect((await call("GET", `/jobs/${from}`)).body.status).toBe("dead");
    }
    // The replays die of the same error, so they match the filter too; the same request id again
    // still answers the same three jobs and enqueues nothing.
    const replays = first.jobs.map((j: Json) => j.id as string);
    await allDead(replays);
    const again = await json([...filter, "--request-id", requestId]);
    expect(again.jobs.map((j: Json) => [j.from, j.id]).sort()).toEqual(
      first.jobs.map((j: Json) => [j.from, j.id]).sort(),
    );
    // A new request would take the originals and the dead replays: six, and no more were made.
    expect((await json([...filter, "--dry-run"])).matched).toBe(6);

    // For a person: the summary, the pairs, and the fresh request id on stderr to repeat it with.
    const human = await run([
      ...["jobs", "replay", "--status", "dead", "--error", `partner down (${token})`],
      ...["--payload", '{"message":"fixed"}', "--max-attempts", "2"],
    ]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      /^replayed 1 of 1 matched\nFROM +NEW JOB\n01\w+ +→ +01\w+\nrequest id replay-/,
    );
    expect(human.stderr).toMatch(/^request id (replay-[\w-]+): run again with --request-id \1 /);
    const newId = /→ +(\w+)/.exec(human.stdout)?.[1];
    expect((await call("GET", `/jobs/${newId}`)).body).toMatchObject({
      maxAttempts: 2,
      payload: { message: "fixed" },
    });
  }, 120_000);

  it("more than 100 matches: replayed 100 at a time with progress, every one once", async () => {
    const token = `cli-many-${randomUUID()}`;
    const ids = await deadJobs(token, 130);
    const requestId = `many-${randomUUID()}`;
    const args = ["jobs", "replay", "--status", "dead", "--error", token, "--request-id", requestId];
    const r = await run([...args, "--payload", '{"message":"second run"}', "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const answer = JSON.parse(r.stdout) as Json;
    expect(answer).toMatchObject({ matched: 130, replayed: 130 });
    expect(new Set(answer.jobs.map((j: Json) => j.from))).toEqual(new Set(ids));
    expect(new Set(answer.jobs.map((j: Json) => j.id)).size).toBe(130);
    // Not a terminal: a plain progress line at each tenth; the last says all of them.
    expect(r.stderr).toContain("replay: 130/130 jobs (100%), 130 replayed");
    expect(r.stderr).not.toContain("request id"); // given, so not printed
  }, 180_000);

  it("more matches than one request takes (500): the dry run walks the API's cursor, and every one is replayed once", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const marker = `cli-walk-${randomUUID()}`;
    const ids: string[] = [];
    for (let at = 0; at < 510; at += 100) {
      const jobs = Array.from({ length: Math.min(100, 510 - at) }, (_, i) => ({
        kind: "fail",
        payload: { message: `${marker} ${at + i}` },
        maxAttempts: 1,
      }));
      const answer = await call("POST", "/jobs/batch", { jobs });
      ids.push(...answer.body.results.map((r: Json) => r.id as string));
    }
    // Counted along the API's own cursor (two requests a look), not 510 GETs.
    const deadCount = async () => {
      let count = 0;
      let cursor: string | undefined;
      do {
        const r = await call("POST", "/jobs/replay", {
          filter: { status: "dead", kind: "fail", errorContains: marker },
          dryRun: true,
          ...(cursor ? { cursor } : {}),
        });
        count += r.body.matched;
        cursor = r.body.cursor;
      } while (cursor);
      return count;
    };
    // A look every 500 ms: each walks the cursor over all 510, while the stack is running them.
    await waitFor(async () => (await deadCount()) === 510, "510 jobs to be dead", 60_000, 500);
    const filter = [
      "jobs",
      "replay",
      "--status",
      "dead",
      "--kind",
      "fail",
      "--error",
      marker,
      "--since",
      since,
    ];
    const dry = await json([...filter, "--dry-run"]);
    expect(dry.matched).toBe(510);
    expect(new Set(dry.jobs.map((j: Json) => j.from))).toEqual(new Set(ids));
    expect((await json([...filter, "--dry-run", "--limit", "505"])).matched).toBe(505);
    const replayed = await json([...filter, "--request-id", `walk-${randomUUID()}`]);
    expect(replayed).toMatchObject({ matched: 510, replayed: 510 });
    expect(new Set(replayed.jobs.map((j: Json) => j.id)).size).toBe(510);
  }, 240_000);

  it("usage errors exit 2 before anything is sent: a status replay can't take, a bad --since", async () => {
    const status = await run(["jobs", "replay", "--status", "running", "--kind", "fail", "--json"]);
    expect(status.code).toBe(2);
    expect(JSON.parse(status.stderr).error).toMatchObject({ code: "usage" });
    expect(JSON.parse(status.stderr).error.message).toMatch(/--status <status>.*dead, done, cancelled/);
    const missing = await run(["jobs", "replay", "--kind", "fail"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--status <status>' not specified/);
    const since = await run(["jobs", "replay", "--status", "dead", "--since", "yesterday"]);
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/--since <time>.*duration ago/);
    // The API's own refusal (a status alone, no limit) exits 3.
    const everything = await json(["jobs", "replay", "--status", "done"], 3);
    expect(everything.error).toMatchObject({ code: "validation_error", status: 400 });
    expect(everything.error.issues[0].path).toBe("limit");
  });
});
