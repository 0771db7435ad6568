import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ThrottledError } from "../../lib/errors.ts";
import { type Log, silentLog } from "../../lib/observability/log.ts";
import {
  type ChildReply,
  encodeRequest,
  parseBatchReply,
  parseReply,
} from "../../lib/pool/child-protocol.ts";
import { KindChildren } from "../../lib/pool/kind-children.ts";
import { outcomeOf } from "../../lib/pool/reserved-child.ts";
import { type ExchangeEnd, WarmChild } from "../../lib/pool/warm-child.ts";
import { childrenReapedAfterEach } from "../support/reaped-children.ts";
import { withinMs } from "../support/wait.ts";

const SCRIPTED = fileURLToPath(new URL("../fixtures/children/scripted.mjs", import.meta.url));
const KIND = "scripted";
/** An upper bound on waiting for an event; never a wait for state. */
const BOUND_MS = 10_000;

/** A second real child, for the exit races the scripted one can't stage. */
const RACER = `
const reply = (id) => process.stdout.write(JSON.stringify({ id, status: "ok" }) + "\\n");
require("node:readline").createInterface({ input: process.stdin }).on("line", (l) => {
  const { id, payload } = JSON.parse(l);
  if (payload === "reply-on-signal") {
    process.on("SIGUSR2", () => { reply(id); process.exit(0); });
    return void process.stderr.write("armed\\n");
  }
  if (payload === "hold-stdout") {
    const opts = { stdio: ["ignore", "inherit", "ignore"] };
    const g = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1e3)"], opts);
    process.stderr.write("grandchild " + g.pid + "\\n");
    process.exit(0);
  }
  reply(id);
  if (payload === "reply-exit") process.exit(0);
});`;
/** Holds the event loop, so what the children do meanwhile is all pending in one poll. */
const holdLoop = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const within = <T>(promise: Promise<T>, what: string) => withinMs(promise, what, BOUND_MS);

/** Every child a test starts, with a promise of its exit: killed and reaped after each test. */
const tracked = childrenReapedAfterEach(BOUND_MS);

function spawnChild(
  onExit: (c: WarmChild) => void = () => {},
  opts: { log?: Log; argv?: readonly string[] } = {},
): WarmChild {
  const { promise, resolve } = Promise.withResolvers<void>();
  const argv = opts.argv ?? [process.execPath, SCRIPTED];
  const launch = { kind: KIND, argv, env: { ...process.env }, cwd: process.cwd() };
  const child = new WarmChild(launch, opts.log ?? silentLog, (c) => {
    onExit(c);
    resolve();
  });
  tracked.set(child, promise);
  return child;
}

const exitOf = (c: WarmChild) => within(tracked.get(c) as Promise<void>, `exit of child ${c.pid}`);

const childrenOf = (soft: number, hard: number) =>
  new KindChildren(KIND, { soft, hard }, (onExit) => spawnChild(onExit));

let seq = 0;
function send(
  child: WarmChild,
  payload: unknown,
  signal = new AbortController().signal,
  id = `job-${++seq}`,
) {
  return within(child.exchange({ id, kind: KIND, attempt: 1, payload }, signal), `reply to ${id}`);
}

/** The reply of an exchange that must have produced one. */
function replyOf(end: ExchangeEnd) {
  if (!("reply" in end)) throw new Error(`expected a reply, got ${JSON.stringify(end)}`);
  return end.reply;
}

/** The scripted child's ok result, which carries its pid. */
function okResult(end: ExchangeEnd) {
  const reply = replyOf(end);
  if (reply.status !== "ok") throw new Error(`expected ok, got ${JSON.stringify(reply)}`);
  return reply.result as { pid: number; attempt: number; echo: unknown };
}

const pidOf = async (child: WarmChild) => okResult(await send(child, { act: "ok" })).pid;

/** How a dead child ended, read back through the exchange it refuses. */
async function exitDetail(child: WarmChild): Promise<string> {
  const end = await send(child, { act: "ok" });
  if (!("failure" in end) || end.failure !== "exited")
    throw new Error(`child is not dead: ${JSON.stringify(end)}`);
  return end.detail;
}

type Entry = { level: string; message: string; attributes: Record<string, unknown> };

/** A Log that records its lines and lets a test await one matching a predicate. */
function capturingLog() {
  const entries: Entry[] = [];
  const waiters: { match: (e: Entry) => boolean; resolve: (e: Entry) => void }[] = [];
  const at =
    (level: string) =>
    (message: string, attributes: Record<string, unknown> = {}) => {
      const e = { level, message, attributes };
      entries.push(e);
      for (const w of waiters.filter((w) => w.match(e))) w.resolve(e);
    };
  const log: Log = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  const waitFor = (match: (e: Entry) => boolean, what: string) => {
    const seen = entries.find(match);
    if (seen) return Promise.resolve(seen);
    const { promise, resolve } = Promise.withResolvers<Entry>();
    waiters.push({ match, resolve });
    return within(promise, what);
  };
  return { log, entries, waitFor };
}

describe("parseReply", () => {
  it("reads ok with and without a result", () => {
    expect(parseReply('{"id":"a","status":"ok","result":{"n":1}}', "a")).toEqual({
      id: "a",
      status: "ok",
      result: { n: 1 },
    });
    expect(parseReply('{"id":"a","status":"ok"}', "a")).toEqual({ id: "a", status: "ok" });
  });

  it("reads error and throttled, with their defaults", () => {
    expect(parseReply('{"id":"a","status":"error","message":"boom"}', "a")).toEqual({
      id: "a",
      status: "error",
      message: "boom",
    });
    expect(parseReply('{"id":"a","status":"error"}', "a")).toEqual({
      id: "a",
      status: "error",
      message: "the child reported an error",
    });
    expect(parseReply('{"id":"a","status":"throttled","retry_after_secs":5}', "a")).toEqual({
      id: "a",
      status: "throttled",
      retry_after_secs: 5,
    });
    expect(parseReply('{"id":"a","status":"throttled"}', "a")).toEqual({
      id: "a",
      status: "throttled",
      retry_after_secs: 60,
    });
  });

  it("a throttled reply may name the job's flow limit, which its ThrottledError carries", () => {
    const reply = parseReply('{"id":"a","status":"throttled","retry_after_secs":5,"limit":"llm"}', "a");
    expect(reply).toEqual({ id: "a", status: "throttled", retry_after_secs: 5, limit: "llm" });
    const outcome = outcomeOf(reply as ChildReply);
    expect(outcome).toBeInstanceOf(ThrottledError);
    expect(outcome).toMatchObject({ retryAfterSeconds: 5, limit: "llm" });
    expect(outcomeOf({ id: "a", status: "throttled", retry_after_secs: 5 })).toMatchObject({
      limit: undefined,
    });
  });

  it.each([
    ["a foreign id", '{"id":"b","status":"ok"}', /reply for job "b" while job "a" was asked/],
    ["a missing id", '{"status":"ok"}', /not a protocol response/],
    ["a line that is not JSON", "not json", /unparseable reply "not json"/],
    ["an unknown status", '{"id":"a","status":"maybe"}', /not a protocol response/],
  ])("calls %s a desync", (_, line, detail) => {
    const parsed = parseReply(line, "a");
    expect(parsed).toEqual({ desync: expect.stringMatching(detail) });
  });

  it("encodes a request as one line", () => {
    const line = encodeRequest({ id: "a", kind: "k", attempt: 2, payload: { x: 1 } });
    expect(line).toBe('{"id":"a","kind":"k","attempt":2,"payload":{"x":1}}\n');
  });
});

describe("parseBatchReply", () => {
  const request = {
    id: "call-1",
    kind: "k",
    key: "acct",
    items: ["a", "b", "c"].map((id) => ({ id, attempt: 1, payload: null })),
  };
  const line = (id: string, ids: string[]) =>
    JSON.stringify({ id, items: ids.map((i) => ({ id: i, status: "ok", result: i })) });

  it("puts the outcomes in the request's item order, whatever order the child wrote them in", () => {
    const parsed = parseBatchReply(line("call-1", ["c", "a", "b"]), request);
    expect(parsed).toEqual({
      id: "call-1",
      items: ["a", "b", "c"].map((i) => ({ id: i, status: "ok", result: i })),
    });
  });

  it.each([
    ["a missing item", line("call-1", ["a", "b"]), /no outcome for "c"/],
    ["a foreign item", line("call-1", ["a", "b", "c", "z"]), /items not asked: "z"/],
    ["an item twice", line("call-1", ["a", "b", "b", "c"]), /item "b" answered twice/],
    ["another call's id", line("call-2", ["a", "b", "c"]), /reply for call "call-2" while call "call-1"/],
    ["a single job's reply", '{"id":"call-1","status":"ok"}', /not a batch response/],
    ["a line that is not JSON", "{", /unparseable reply/],
  ])("calls %s a desync", (_, reply, detail) => {
    expect(parseBatchReply(reply, request)).toEqual({ desync: expect.stringMatching(detail) });
  });
});

describe("WarmChild on a real process", () => {
  it("maps ok, error and throttled replies, and logs stderr lines with kind and pid", async () => {
    const { log, waitFor } = capturingLog();
    const child = spawnChild(undefined, { log });
    const ok = replyOf(await send(child, { act: "ok", echo: "hi" }, undefined, "j-ok"));
    expect(ok).toEqual({ id: "j-ok", status: "ok", result: { pid: child.pid, attempt: 1, echo: "hi" } });
    const error = replyOf(await send(child, { act: "error", message: "nope" }, undefined, "j-err"));
    expect(error).toEqual({ id: "j-err", status: "error", message: "nope" });
    const throttled = replyOf(await send(child, { act: "throttle", secs: 9 }, undefined, "j-thr"));
    expect(throttled).toEqual({ id: "j-thr", status: "throttled", retry_after_secs: 9 });
    const line = await waitFor((e) => e.attributes.line === "scripted j-err error", "stderr line");
    expect(line).toMatchObject({ level: "info", attributes: { kind: KIND, pid: child.pid } });
    expect(child.alive).toBe(true);
  });

  it.each([
    ["a foreign id", "wrong-id", /reply for job "not-j-x" while job "j-x" was asked/],
    ["a garbage line", "garbage", /unparseable reply "this is not json"/],
  ])("reports %s as a desync and kills the child", async (_, act, detail) => {
    const child = spawnChild();
    const end = await send(child, { act }, undefined, "j-x");
    expect(end).toEqual({ failure: "desync", detail: expect.stringMatching(detail) });
    await exitOf(child);
    expect(child.alive).toBe(false);
    expect(await exitDetail(child)).toBe("child was killed by SIGKILL");
  });

  it("kills a child that writes a line nobody asked for, after a good reply", async () => {
    const { log, waitFor } = capturingLog();
    const child = spawnChild(undefined, { log });
    const end = await send(child, { act: "extra-line" });
    expect(replyOf(end).status).toBe("ok");
    await exitOf(child);
    expect(child.alive).toBe(false);
    const warned = await waitFor((e) => e.level === "warn", "warning about the extra line");
    expect(warned.attributes).toMatchObject({ kind: KIND, pid: child.pid });
    expect(await exitDetail(child)).toBe("child was killed by SIGKILL");
  });

  it.each(["timeout", "cancelled"])(
    "aborts a hung exchange with cause %s and kills the child",
    async (cause) => {
      const { log, waitFor } = capturingLog();
      const child = spawnChild(undefined, { log });
      const ac = new AbortController();
      const pending = send(child, { act: "hang" }, ac.signal, "j-hang");
      await waitFor((e) => e.attributes.line === "scripted j-hang hang", "the child to take the request");
      ac.abort(cause);
      expect(await pending).toEqual({ failure: "aborted", cause });
      await exitOf(child);
      expect(child.alive).toBe(false);
      expect(await exitDetail(child)).toBe("child was killed by SIGKILL");
    },
  );

  it("reports a child that exits mid-request as exited, with its code", async () => {
    const child = spawnChild();
    expect(await send(child, { act: "exit", code: 5 })).toEqual({
      failure: "exited",
      detail: "child exited with code 5",
    });
    await exitOf(child);
    expect(child.alive).toBe(false);
  });

  it("reports a program that cannot start as exited", async () => {
    const child = spawnChild(undefined, { argv: ["/nonexistent/skyforge-no-such-child"] });
    const end = await send(child, { act: "ok" });
    expect(end).toEqual({ failure: "exited", detail: expect.stringContaining("could not start") });
    await exitOf(child);
    expect(child.alive).toBe(false);
  });

  it("serves 20 sequential requests on one process", async () => {
    const child = spawnChild();
    const pids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const result = okResult(await send(child, { act: "ok", echo: i }));
      expect(result.echo).toBe(i);
      pids.push(result.pid);
    }
    expect(child.pid).toBeTypeOf("number");
    expect(new Set(pids)).toEqual(new Set([child.pid]));
  });

  it("stop closes stdin and the child exits on its own at EOF", async () => {
    const child = spawnChild();
    await pidOf(child);
    await within(child.stop(BOUND_MS / 2), "stop");
    expect(child.alive).toBe(false);
    expect(await exitDetail(child)).toBe("child exited with code 0");
  });

  it("stop kills a child still busy after the grace", async () => {
    const child = spawnChild();
    const pending = send(child, { act: "sleep", ms: 600_000 });
    await within(child.stop(50), "stop");
    expect(await pending).toEqual({ failure: "exited", detail: "child was killed by SIGKILL" });
  });

  it("keeps a reply written just before exit when another child's death reaps it first", async () => {
    // A exits with its reply while the loop is held; in the callback of that reply B replies and
    // exits while the loop is held again. The SIGCHLD of A, handled after that callback, reaps B
    // too, before B's reply is read: B's "exit" comes first, and its reply must still count.
    const { log, waitFor } = capturingLog();
    const a = spawnChild(undefined, { log, argv: [process.execPath, "-e", RACER] });
    const b = spawnChild(undefined, { log, argv: [process.execPath, "-e", RACER] });
    for (const c of [a, b]) expect(replyOf(await send(c, "warm-up")).status).toBe("ok");
    const pendingB = send(b, "reply-on-signal", undefined, "j-b");
    await waitFor((e) => e.attributes.line === "armed", "B to wait for its signal");
    const pendingA = send(a, "reply-exit").then((end) => {
      process.kill(b.pid as number, "SIGUSR2");
      holdLoop(300);
      return end;
    });
    holdLoop(300);
    expect(replyOf(await pendingA).status).toBe("ok");
    expect(await pendingB).toEqual({ reply: { id: "j-b", status: "ok" } });
    await Promise.all([exitOf(a), exitOf(b)]);
  });

  it("counts a death whose stdout a grandchild holds open, after a bound", async () => {
    const { log, waitFor } = capturingLog();
    const child = spawnChild(undefined, { log, argv: [process.execPath, "-e", RACER] });
    const pending = send(child, "hold-stdout");
    const said = await waitFor((e) => String(e.attributes.line).startsWith("grandchild "), "grandchild pid");
    try {
      expect(await pending).toEqual({ failure: "exited", detail: "child exited with code 0" });
      await exitOf(child);
      expect(child.alive).toBe(false);
    } finally {
      process.kill(Number(String(said.attributes.line).split(" ")[1]), "SIGKILL");
    }
  });
});

describe("KindChildren on real processes", () => {
  it("grows to soft for normal work, to hard for critical work, and culls above soft on release", async () => {
    const children = childrenOf(1, 3);
    const a = children.take(false) as WarmChild;
    expect(a).toBeInstanceOf(WarmChild);
    expect(children.take(false)).toBeUndefined();
    const b = children.take(true) as WarmChild;
    const c = children.take(true) as WarmChild;
    expect([b, c]).toEqual([expect.any(WarmChild), expect.any(WarmChild)]);
    expect(children.take(true)).toBeUndefined();
    expect(children.stats()).toEqual({ busy: 3, idle: 0 });
    children.release(a, false);
    children.release(b, false);
    children.release(c, false);
    await exitOf(a);
    await exitOf(b);
    expect(await exitDetail(a)).toBe("child exited with code 0");
    expect(children.size).toBe(1);
    expect(children.stats()).toEqual({ busy: 0, idle: 1 });
    expect(c.alive).toBe(true);
    expect(children.respawns).toBe(0);

    // While critical work waits, released children above soft stay warm.
    expect(children.take(false)).toBe(c);
    const d = children.take(true) as WarmChild;
    const e = children.take(true) as WarmChild;
    for (const x of [c, d, e]) children.release(x, true);
    expect(children.stats()).toEqual({ busy: 0, idle: 3 });
    expect([c, d, e].map((x) => x.alive)).toEqual([true, true, true]);
    const again = [children.take(false), children.take(false), children.take(false)];
    expect(new Set(again)).toEqual(new Set([c, d, e]));
    expect(children.take(true)).toBeUndefined();
    // Culled children were planned exits: growing again is not a respawn.
    expect(children.respawns).toBe(0);
  });

  it("drops dead children at once and refills them lazily, counting respawns", async () => {
    const children = childrenOf(3, 3);
    const first = [children.take(false), children.take(false), children.take(false)] as WarmChild[];
    const oldPids = await Promise.all(first.map(pidOf));
    for (const c of first) children.release(c, false);
    expect(children.stats()).toEqual({ busy: 0, idle: 3 });

    for (const pid of oldPids) process.kill(pid, "SIGKILL");
    await Promise.all(first.map(exitOf));
    expect(children.size).toBe(0);
    expect(children.stats()).toEqual({ busy: 0, idle: 0 });
    expect(children.respawns).toBe(0);

    const fresh = [children.take(false), children.take(false), children.take(false)] as WarmChild[];
    expect(fresh.every((c) => c instanceof WarmChild && c.alive)).toBe(true);
    const newPids = await Promise.all(fresh.map(pidOf));
    expect(new Set(newPids).size).toBe(3);
    expect(newPids.filter((p) => oldPids.includes(p))).toEqual([]);
    expect(children.respawns).toBe(3);
    expect(children.take(false)).toBeUndefined();

    const dying = fresh[0] as WarmChild;
    expect(await send(dying, { act: "exit", code: 9 })).toMatchObject({ failure: "exited" });
    const replacement = children.replace(dying);
    expect(replacement).not.toBe(dying);
    expect(replacement.alive).toBe(true);
    expect(await pidOf(replacement)).not.toBe(dying.pid);
    expect(children.respawns).toBe(4);
    expect(children.stats()).toEqual({ busy: 3, idle: 0 });
  });

  it("stopAll stops every child, busy or idle, at EOF", async () => {
    const children = childrenOf(3, 3);
    const kids = [children.take(false), children.take(false), children.take(false)] as WarmChild[];
    await Promise.all(kids.map(pidOf));
    children.release(kids[0] as WarmChild, false);
    await within(children.stopAll(BOUND_MS / 2), "stopAll");
    expect(kids.map((c) => c.alive)).toEqual([false, false, false]);
    for (const c of kids) expect(await exitDetail(c)).toBe("child exited with code 0");
    expect(children.size).toBe(0);
    expect(children.respawns).toBe(0);
  });
});
