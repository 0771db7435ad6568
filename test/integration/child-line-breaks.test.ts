import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Log } from "../../lib/observability/log.ts";
import {
  batchExchange,
  encodeRequest,
  MAX_JOB_LINE_BYTES,
  replyLineLimit,
} from "../../lib/pool/child-protocol.ts";
import { type ExchangeEnd, STDERR_LINE_BYTES, WarmChild } from "../../lib/pool/warm-child.ts";
import { CapturingLog } from "../support/pool-harness.ts";
import { childrenReapedAfterEach } from "../support/reaped-children.ts";
import { withinMs } from "../support/wait.ts";

// U+2028 and U+2029 (issue 23): JSON.stringify leaves them raw, and a reader that ends lines at
// them (node:readline does) tore requests and replies in two. Real children, Node and Python, get
// them in payloads and batch keys and send them back in results, escaped or raw.

const path = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const CHILDREN = {
  "node digest.mjs": [process.execPath, path("../../children/digest.mjs")],
  "python digest.py": ["python3", path("../../children/digest.py")],
};
const SCRIPTED = [process.execPath, path("../fixtures/children/scripted.mjs")];
const PY_ECHO = ["python3", path("../fixtures/children/echo.py")];
const BOUND_MS = 10_000;
const TEXT = "line\u2028separator\u2029paragraph";

const within = <T>(promise: Promise<T>, what: string) => withinMs(promise, what, BOUND_MS);

const exits = childrenReapedAfterEach(BOUND_MS);

function spawnChild(argv: readonly string[], log: Log = new CapturingLog()): WarmChild {
  const { promise, resolve } = Promise.withResolvers<void>();
  const launch = { kind: "k", argv, env: { ...process.env }, cwd: process.cwd() };
  const child = new WarmChild(launch, log, () => resolve());
  exits.set(child, promise);
  return child;
}

let seq = 0;
const ask = (child: WarmChild, payload: unknown) =>
  within(
    child.exchange({ id: `j-${++seq}`, kind: "k", attempt: 1, payload }, new AbortController().signal),
    "a reply",
  );

function okResult(end: ExchangeEnd): Record<string, unknown> {
  if (!("reply" in end) || end.reply.status !== "ok")
    throw new Error(`expected ok, got ${JSON.stringify(end)}`);
  return end.reply.result as Record<string, unknown>;
}

const sha256Once = (text: string) => createHash("sha256").update(Buffer.from(text)).digest("hex");

describe("requests the pool writes", () => {
  it("escape U+2028 and U+2029, single and batch, and still mean the same JSON", () => {
    const single = encodeRequest({ id: "a", kind: "k", attempt: 1, payload: { text: TEXT } });
    const batch = batchExchange({
      id: "c",
      kind: "k",
      key: TEXT,
      items: [{ id: "i", attempt: 1, payload: TEXT }],
    });
    for (const line of [single, batch.line]) {
      expect(line).not.toMatch(/[\u2028\u2029]/);
      expect(line).toContain("\\u2028");
      expect(line).toContain("\\u2029");
      expect(line.indexOf("\n")).toBe(line.length - 1);
    }
    expect(JSON.parse(single)).toEqual({ id: "a", kind: "k", attempt: 1, payload: { text: TEXT } });
    expect(JSON.parse(batch.line).key).toBe(TEXT);
  });

  it("bound their reply: one job's line, or the call's items' worth", () => {
    const items = Array.from({ length: 3 }, (_, i) => ({ id: `i${i}`, attempt: 1, payload: null }));
    expect(batchExchange({ id: "c", kind: "k", key: "x", items }).maxReplyBytes).toBe(3 * MAX_JOB_LINE_BYTES);
    expect(replyLineLimit(1)).toBe(MAX_JOB_LINE_BYTES);
  });
});

describe.each(Object.entries(CHILDREN))("the demo child %s", (_, argv) => {
  it("hashes a text holding U+2028 and U+2029 as it is, and stays warm", async () => {
    const child = spawnChild(argv);
    const result = okResult(await ask(child, { text: TEXT }));
    expect(result.sha256).toBe(sha256Once(TEXT));
    expect(okResult(await ask(child, { text: "after" })).pid).toBe(result.pid);
    expect(child.alive).toBe(true);
  });

  it("gives a batch call's key back whole in its results, and an error message whole", async () => {
    const child = spawnChild(argv);
    const items = [
      { id: "i1", attempt: 1, payload: { text: TEXT } },
      { id: "i2", attempt: 1, payload: { fail: `bad\u2029row\u2028` } },
    ];
    const exchange = batchExchange({ id: "call-1", kind: "k", key: `acct\u2028${TEXT}`, items });
    const end = await within(child.send(exchange, new AbortController().signal), "a batch reply");
    if (!("reply" in end)) throw new Error(`expected a reply, got ${JSON.stringify(end)}`);
    const [first, second] = end.reply.items;
    expect(first).toMatchObject({
      status: "ok",
      result: { key: `acct\u2028${TEXT}`, sha256: sha256Once(TEXT) },
    });
    expect(second).toEqual({ id: "i2", status: "error", message: "bad\u2029row\u2028" });
    expect(child.alive).toBe(true);
  });
});

describe("the pool reading a child's lines", () => {
  it.each([
    ["Node (scripted.mjs)", SCRIPTED, { act: "ok", echo: TEXT }, { echo: TEXT }],
    ["Python (echo.py)", PY_ECHO, TEXT, { echo: TEXT }],
  ])(
    "takes a %s reply with raw U+2028 and U+2029 in its result whole",
    async (_, argv, payload, expected) => {
      const child = spawnChild(argv);
      expect(okResult(await ask(child, payload))).toMatchObject(expected);
      expect(okResult(await ask(child, payload))).toMatchObject(expected);
      expect(child.alive).toBe(true);
    },
  );

  it("calls a reply line over one job's bound a desync with that reason, and kills the child", async () => {
    const child = spawnChild(SCRIPTED);
    const fits = okResult(await ask(child, { act: "long-reply", bytes: MAX_JOB_LINE_BYTES }));
    expect(String(fits.pad).length).toBeGreaterThan(MAX_JOB_LINE_BYTES - 100);
    const end = await ask(child, { act: "long-reply", bytes: MAX_JOB_LINE_BYTES + 1 });
    expect(end).toEqual({ failure: "desync", detail: `reply line is over ${MAX_JOB_LINE_BYTES} bytes` });
    await within(exits.get(child) as Promise<void>, "the child's death");
    expect(child.alive).toBe(false);
  });

  it("logs a stderr line holding U+2028 as one entry, and cuts one over its bound", async () => {
    const log = new CapturingLog();
    const child = spawnChild(SCRIPTED, log);
    okResult(await ask(child, { act: "log", line: TEXT }));
    okResult(await ask(child, { act: "log", line: "z".repeat(STDERR_LINE_BYTES + 10) }));
    await within(child.stop(BOUND_MS / 2), "stop");
    const lines = log.matching(/^child stderr$/).map((e) => e.attributes ?? {});
    expect(lines.filter((a) => String(a.line).includes("separator"))).toEqual([
      { kind: "k", pid: child.pid, line: TEXT },
    ]);
    expect(lines.filter((a) => String(a.line).startsWith("zzz"))).toEqual([
      { kind: "k", pid: child.pid, line: "z".repeat(STDERR_LINE_BYTES), cut: true },
    ]);
  });
});
