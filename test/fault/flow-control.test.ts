import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../support/project-copy.ts";
import { waitFor } from "../support/wait.ts";
import { POOL_OBSERVER_LOG } from "./project-copy.ts";
import {
  assertHealthy,
  type FaultProjectCopy,
  type FaultStack,
  faultScenarios,
  type Json,
  LEASE_MS,
  poolRestarted,
  report,
  times,
} from "./support.ts";

/**
 * Debounce and singleton under the fault suite (docs/architecture.md §19): "a burst runs once, and
 * no enqueue is lost: each answered id reaches a terminal status". A whole-stack SIGKILL in the
 * middle of bursts of the demo kind doc-index (trailing, by payload.doc); a SIGKILL of the pool
 * while it runs a collect-debounced pool kind's call; a freeze past the lease under the demo
 * singleton doc-sync (cancel-running). Every enqueue is an HTTP POST /jobs; what it answered is the
 * contract, what it didn't answer (the kill cut it) is sent again, as a client would.
 */

/** The demo kind: trailing debounce by payload.doc, period 2 s, max delay 10 s; it returns {doc, rev}. */
const DOC_INDEX = "doc-index";
/** The demo kind: singleton cancel-running by payload.doc; it sleeps payload.sleepMs, then returns {doc, rev}. */
const DOC_SYNC = "doc-sync";
/** A pool kind the copy declares (app/pool-kinds.ts): collect debounce by payload.doc. */
const COLLECT_POOL_KIND = "collect-echo";
const COLLECT_CHILD = join(projectRoot, "test/fixtures/children/collect-echo.mjs");

/**
 * Declares the collect pool kind in the copy's app/pool-kinds.ts, as an app adds one: its child
 * logs each call to the scenario's observer log, whose path the stack's environment carries (the
 * pool starts with it, and a child's environment is the kind's own `env`).
 */
function declareCollectPoolKind(copy: FaultProjectCopy): void {
  const path = join(copy.dir, "app/pool-kinds.ts");
  const text = readFileSync(path, "utf8");
  const end = "] as const;";
  if (text.split(end).length !== 2) throw new Error(`${path}: expected one ${JSON.stringify(end)}`);
  const entry = `  definePoolKind({
    name: "${COLLECT_POOL_KIND}",
    argv: [${JSON.stringify(process.execPath)}, ${JSON.stringify(COLLECT_CHILD)}],
    queue: "heavy",
    soft: 2,
    hard: 2,
    timeoutSeconds: 60,
    maxAttempts: 5,
    env: { FAULT_OBSERVER_LOG: ${POOL_OBSERVER_LOG} },
    debounce: {
      key: (p: JsonValue) => String((p as { doc?: unknown } | null)?.doc ?? ""),
      periodSeconds: 2,
      maxDelaySeconds: 10,
      mode: "collect",
    },
  }),
`;
  writeFileSync(path, text.replace(end, `${entry}${end}`));
}

const onStack = faultScenarios(declareCollectPoolKind);
const TERMINAL = ["done", "dead", "cancelled"];

/** One POST /jobs as sent: what it answered, or that the kill cut it (no answer). */
interface Send {
  doc: string;
  rev: number;
  phase: "before-kill" | "after-restart";
  id?: string;
  http?: number;
  debounced?: boolean;
  lost?: boolean;
}

/**
 * POST /jobs until answered with an id. A 409 (the key's lock names a job whose enqueue looks in
 * flight: one the kill cut between its lock and its item) is retried, as its message asks, within
 * `boundMs`; any other answer but 200/201 throws. A network failure throws (the caller decides).
 */
async function enqueue(
  stack: FaultStack,
  body: Json,
  boundMs: number,
  conflicts: { count: number },
): Promise<{ http: number; body: Json }> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const r = await stack.call("POST", "/jobs", body);
    if ((r.status === 200 || r.status === 201) && typeof r.body.id === "string")
      return { http: r.status, body: r.body };
    if (r.status !== 409 || Date.now() > deadline)
      throw new Error(`POST /jobs ${JSON.stringify(body)} answered ${r.status}: ${JSON.stringify(r.body)}`);
    conflicts.count++;
    // A client's pause before it asks again, not a wait for state.
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Polls GET /jobs/{id} until every job is terminal (bounded); the views, and what is still not. */
async function untilTerminal(stack: FaultStack, ids: readonly string[], timeoutMs: number) {
  const views = new Map<string, Json>();
  const pending = new Map<string, string>();
  const deadline = Date.now() + timeoutMs;
  do {
    pending.clear();
    const left = ids.filter((id) => !views.has(id));
    const answers = await Promise.all(left.map((id) => stack.call("GET", `/jobs/${id}`)));
    answers.forEach((r, i) => {
      const id = left[i] as string;
      if (r.status === 200 && TERMINAL.includes(r.body.status)) views.set(id, r.body);
      else pending.set(id, r.status === 200 ? r.body.status : `HTTP ${r.status}`);
    });
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  } while (pending.size > 0 && Date.now() < deadline);
  return { views, pending };
}

/** Every job of `queue` in `status`, page by page. */
async function listJobs(stack: FaultStack, queue: string, status: string): Promise<Json[]> {
  const jobs: Json[] = [];
  let cursor: string | undefined;
  do {
    const r = await stack.call(
      "GET",
      `/jobs?queue=${queue}&status=${status}&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    jobs.push(...(r.body.items as Json[]));
    cursor = r.body.cursor || undefined;
  } while (cursor);
  return jobs;
}

describe("debounce and singleton under faults on npm start", () => {
  it("a stack SIGKILLed mid-burst, started again: every answered id ends done, each burst runs once with its last revision", async () => {
    await onStack("debounce-kill", async (stack) => {
      const DOCS = 10;
      const REVS = 10;
      /** The kill lands once this many enqueues are answered: every doc mid-burst. */
      const KILL_AFTER = 30;
      const docs = times(DOCS, (i) => `fault-doc-${i}`);
      const sends = new Map<string, Send[]>(docs.map((d) => [d, []]));
      const conflicts = { count: 0 };
      const answered = () => [...sends.values()].flat().filter((s) => s.id !== undefined).length;
      /** Sends `doc`'s revisions from `from` on, one after another; stops (the rest unsent) at a kill. */
      const sendRevisions = async (
        doc: string,
        from: number,
        phase: Send["phase"],
        isDown: () => boolean,
      ) => {
        for (let rev = from; rev <= REVS && !isDown(); rev++) {
          const send: Send = { doc, rev, phase };
          sends.get(doc)?.push(send);
          try {
            const a = await enqueue(stack, { kind: DOC_INDEX, payload: { doc, rev } }, 75_000, conflicts);
            Object.assign(send, { id: a.body.id, http: a.http, debounced: a.body.debounced === true });
          } catch (err) {
            if (!isDown()) throw err;
            send.lost = true;
            return;
          }
        }
      };

      // The bursts, all docs at once, each doc's revisions in order; the kill once some are answered.
      let down = false;
      const startedAt = Date.now();
      let failedBefore = false;
      const before = Promise.all(docs.map((doc) => sendRevisions(doc, 1, "before-kill", () => down)));
      // Awaited after the kill, which then reports the failure; until then it only stops the wait.
      before.catch(() => {
        failedBefore = true;
      });
      await waitFor(
        async () => failedBefore || answered() >= KILL_AFTER,
        `${KILL_AFTER} enqueues to be answered`,
        30_000,
        5,
      );
      down = true;
      const { killedAt, processes } = await stack.killAll();
      await before;
      const answeredBeforeKill = answered();
      const lostInKill = [...sends.values()].flat().filter((s) => s.lost).length;
      expect(answeredBeforeKill).toBeLessThan(DOCS * REVS);

      await stack.restart();
      const restartedAt = Date.now();
      // The rest of each doc's revisions: from its first unanswered one (a cut one is sent again).
      await Promise.all(
        docs.map((doc) => {
          const next = (sends.get(doc) ?? []).filter((s) => s.id !== undefined).length + 1;
          return sendRevisions(doc, next, "after-restart", () => false);
        }),
      );
      const sentAllAt = Date.now();

      const all = [...sends.values()].flat();
      const answers = all.filter((s): s is Send & { id: string } => s.id !== undefined);
      for (const doc of docs)
        expect(
          answers.filter((s) => s.doc === doc).map((s) => s.rev),
          `${doc}: each revision answered once, in order`,
        ).toEqual(times(REVS, (i) => i + 1));
      const ids = [...new Set(answers.map((s) => s.id))];

      // Every answered id reaches a terminal status (bounded), and it is done.
      const { views, pending } = await untilTerminal(stack, ids, 40_000);
      const problems: string[] = [];
      for (const [id, status] of pending)
        problems.push(`job ${id} is still ${status} 40 s after the last enqueue`);

      for (const id of ids) {
        const view = views.get(id);
        if (!view) continue;
        const mine = answers.filter((s) => s.id === id);
        const doc = (mine[0] as Send).doc;
        const revs = mine.map((s) => s.rev);
        const evidence = `answered revs ${revs.join(",")} (${mine.map((s) => s.phase).join(",")}); view ${JSON.stringify(view)}`;
        if (view.status !== "done") problems.push(`job ${id} ended ${view.status}: ${evidence}`);
        if (mine.some((s) => s.doc !== doc)) problems.push(`job ${id} answered for two docs: ${evidence}`);
        if (view.kind !== DOC_INDEX || view.coalesceKey !== doc)
          problems.push(`job ${id} is not ${DOC_INDEX} of key ${doc}: ${evidence}`);
        // Ran once: each claim counts an attempt. Only a job that may have been running when the
        // stack died (due by then) may have run again: at least once, by design.
        const dueBeforeKill = Date.parse(view.runAt) <= killedAt;
        if (view.attempts !== 1 && !(dueBeforeKill && view.attempts === 2))
          problems.push(`job ${id} ran ${view.attempts} times: ${evidence}`);
        // Its result is its burst's last payload: the last revision answered to it, or the one sent
        // right after it that the kill cut (it may have joined the burst before the kill).
        const last = Math.max(...revs);
        const docSends = sends.get(doc) ?? [];
        const after = docSends[docSends.findIndex((s) => s.id === id && s.rev === last) + 1];
        const allowed = after?.lost ? [last, after.rev] : [last];
        if (view.result?.doc !== doc || !allowed.includes(view.result?.rev))
          problems.push(
            `job ${id}: result ${JSON.stringify(view.result)}, expected rev ${allowed.join(" or ")}: ${evidence}`,
          );
        // It counts each enqueue answered to it, and may count one the kill cut right before or
        // after one of them (that one joined it, or started it, before the kill).
        const answeredTo = (s: Send | undefined) => s?.id === id;
        const cutBeside = docSends.filter(
          (s, i) => s.lost && (answeredTo(docSends[i - 1]) || answeredTo(docSends[i + 1])),
        ).length;
        if (view.enqueues < mine.length || view.enqueues > mine.length + cutBeside)
          problems.push(
            `job ${id} counts ${view.enqueues} enqueues for ${mine.length} answered and ${cutBeside} cut beside them: ${evidence}`,
          );
        // None idles: due, it ran within 2 × lease of being due or of the restart, whichever is later.
        const from = Math.max(Date.parse(view.runAt), restartedAt);
        if (view.finishedAt && Date.parse(view.finishedAt) - from > 2 * LEASE_MS)
          problems.push(
            `job ${id} finished ${Date.parse(view.finishedAt) - from} ms after it could run: ${evidence}`,
          );
      }
      // The final run of each doc has its last revision.
      for (const doc of docs) {
        const final = answers.find((s) => s.doc === doc && s.rev === REVS);
        const view = final && views.get(final.id);
        if (view?.result?.rev !== REVS)
          problems.push(
            `${doc}: its last job ${final?.id} ended with ${JSON.stringify(view?.result)}, not rev ${REVS}`,
          );
      }
      // A job nobody was answered with comes only from an enqueue the kill cut (sent again since).
      const lost = all.filter((s) => s.lost);
      const unanswered = (await listJobs(stack, "default", "done")).filter(
        (j) => j.kind === DOC_INDEX && !ids.includes(j.id),
      );
      for (const j of unanswered)
        if (!lost.some((s) => s.doc === j.coalesceKey && s.rev === j.payload?.rev))
          problems.push(`job ${j.id} ran, but no enqueue that the kill cut was for it: ${JSON.stringify(j)}`);
      expect(problems).toEqual([]);

      const jobsPerDoc = docs.map(
        (doc) => new Set(answers.filter((s) => s.doc === doc).map((s) => s.id)).size,
      );
      report("debounce-kill", {
        processes,
        answeredBeforeKill,
        lostInKill,
        burstMsBeforeKill: killedAt - startedAt,
        downMs: restartedAt - killedAt,
        sendAfterRestartMs: sentAllAt - restartedAt,
        conflicts: conflicts.count,
        jobs: ids.length,
        jobsPerDoc,
        reruns: [...views.values()].filter((v) => v.attempts > 1).length,
        unansweredJobs: unanswered.length,
      });
    });
  }, 180_000);

  it("a pool SIGKILLed mid collect call: the burst's job completes once with every payload in order", async () => {
    await onStack("collect-pool-kill", async (stack) => {
      const doc = "fault-collect";
      const conflicts = { count: 0 };
      const enqueueAll = async (payloads: readonly Json[]) => {
        const ids: string[] = [];
        for (const payload of payloads)
          ids.push((await enqueue(stack, { kind: COLLECT_POOL_KIND, payload }, 10_000, conflicts)).body.id);
        return ids;
      };
      // One burst (enqueues well under the 2 s period apart); its call lasts 4 s, so the kill lands in it.
      const first = times(8, (i) => ({ doc, rev: i + 1, ms: 4000 }));
      const firstIds = await enqueueAll(first);
      expect(new Set(firstIds).size, `one job answers the whole burst: ${firstIds.join(",")}`).toBe(1);
      const burstId = firstIds[0] as string;
      const [start] = await stack.waitForStarts([burstId], "the collect call to start", 30_000);
      const pool = stack.poolPid() as number;
      expect(pool).toBeGreaterThan(0);
      const child = (start as { pid: number }).pid;
      stack.deathWatch.watch([child]);
      await stack.killPids([pool], "the pool process");
      const killedAt = stack.deaths.get(pool) as number;
      await waitFor(async () => stack.deaths.has(child), "the collect child to die", 5_000, 10);

      // While the pool is down: the burst's job started, so these make a burst of their own.
      const second = times(4, (i) => ({ doc, rev: 9 + i, ms: 100 }));
      const secondIds = await enqueueAll(second);
      expect(new Set(secondIds).size, `one job answers the second burst: ${secondIds.join(",")}`).toBe(1);
      expect(secondIds[0]).not.toBe(burstId);
      await poolRestarted(stack, pool);
      const faultEndedAt = Date.now();

      const ids = [burstId, secondIds[0] as string];
      const figures = await assertHealthy(stack, ids, { leaseMs: LEASE_MS, faultEndedAt });
      // The kill landed mid-call: the burst's first run died with its child.
      const runs = stack.observerLog().filter((l) => l.jobId === burstId && l.event === "start");
      expect(runs.length).toBeGreaterThanOrEqual(2);
      for (const [id, payloads] of [
        [burstId, first],
        [secondIds[0] as string, second],
      ] as const) {
        const view = (await stack.call("GET", `/jobs/${id}`)).body;
        expect(view).toMatchObject({ status: "done", coalesceKey: doc, enqueues: payloads.length });
        expect(
          (view.result as Json[]).map(({ doc, rev, index, of }) => ({ doc, rev, index, of })),
          `job ${id}: one result per payload, in enqueue order`,
        ).toEqual(payloads.map((p, index) => ({ doc, rev: p.rev, index, of: payloads.length })));
      }
      report("collect-pool-kill", {
        poolBackAfterMs: faultEndedAt - killedAt,
        burstAttempts: (await stack.call("GET", `/jobs/${burstId}`)).body.attempts,
        conflicts: conflicts.count,
        ...figures,
      });
    });
  }, 90_000);

  it("cancel-running across a freeze: the doc's earlier sync ends cancelled, the new one runs once after it", async () => {
    await onStack("singleton-freeze", async (stack) => {
      const doc = "fault-sync";
      const sync = (rev: number, sleepMs?: number) =>
        stack.call("POST", "/jobs", {
          kind: DOC_SYNC,
          payload: { doc, rev, ...(sleepMs ? { sleepMs } : {}) },
        });
      const first = await sync(1, 60_000);
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const firstId = first.body.id as string;
      await waitFor(
        async () => (await stack.call("GET", `/jobs/${firstId}`)).body.status === "running" && true,
        "the first sync to run",
        20_000,
      );
      // Frozen past the lease: the first sync's run loses its lease at the thaw.
      const { frozenAt, thawedAt } = await stack.freeze(LEASE_MS + 2000);
      const second = await sync(2);
      expect(second.status, JSON.stringify(second.body)).toBe(201);
      const secondId = second.body.id as string;
      expect(second.body.after, "the new sync waits for the first").toEqual([firstId]);

      const { views, pending } = await untilTerminal(stack, [firstId, secondId], 40_000);
      expect([...pending], "every answered id ends").toEqual([]);
      const [a, b] = [views.get(firstId) as Json, views.get(secondId) as Json];
      expect(a.status, JSON.stringify(a)).toBe("cancelled");
      expect(b, JSON.stringify(b)).toMatchObject({ status: "done", attempts: 1, result: { doc, rev: 2 } });
      // Never two syncs of the doc at once: the new one started once the first had ended.
      expect(Date.parse(b.startedAt)).toBeGreaterThanOrEqual(Date.parse(a.finishedAt));
      report("singleton-freeze", {
        frozenMs: thawedAt - frozenAt,
        firstAttempts: a.attempts,
        firstEndedAfterThawMs: Date.parse(a.finishedAt) - thawedAt,
        secondStartedAfterThawMs: Date.parse(b.startedAt) - thawedAt,
      });
    });
  }, 90_000);
});
