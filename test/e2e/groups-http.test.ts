import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { errorCodes } from "../../lib/errors.ts";
import { localLambdaClient } from "../support/local-stack-process.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Job groups end to end on the stack `npm start` runs (local/stack.ts over app/, started in this
 * process), as a user calls it: fan out over HTTP, fan in to a completion job, read the children page
 * by page, build a group in steps, and the Invoke API answering the group requests as the HTTP routes
 * do. One stack for the file.
 */

const stack = localStackForFile({ app });
let lambda: LambdaClient;
beforeAll(() => {
  lambda = localLambdaClient(stack().url);
});
afterAll(() => {
  lambda?.destroy();
});

const { call, untilStatus } = stackHttp(() => stack().url);

/** The enqueue function's answer to `event`; a caller's mistake must come back as `{ error }`, not a function error. */
async function invoke(event: unknown): Promise<Json> {
  const out = await lambda.send(
    new InvokeCommand({ FunctionName: "enqueue", Payload: Buffer.from(JSON.stringify(event)) }),
  );
  expect(out.StatusCode).toBe(200);
  expect(out.FunctionError).toBeUndefined();
  return JSON.parse(Buffer.from(out.Payload ?? []).toString("utf8"));
}

const untilGroup = (id: string, status: string) =>
  waitFor(
    async () => {
      const r = await call("GET", `/groups/${encodeURIComponent(id)}`);
      return r.body.status === status ? r.body : undefined;
    },
    `group ${id} to be ${status}`,
    30_000,
  );

/** Every child of a group, page by page, checking each page keeps to the limit. */
async function allChildren(id: string, limit: number): Promise<{ children: Json[]; pages: number }> {
  const children: Json[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const query = `limit=${limit}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
    const r = await call("GET", `/groups/${id}/children?${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.items.length).toBeLessThanOrEqual(limit);
    children.push(...r.body.items);
    cursor = r.body.cursor;
    pages++;
    expect(pages, "the cursor ends").toBeLessThan(100);
  } while (cursor !== undefined);
  return { children, pages };
}

const echo = (payload: unknown) => ({ kind: "echo", payload });
const onComplete = { kind: "echo", payload: { folded: true } };
let tags = 0;
/** A group id of this run: the stack is the file's own, so ids only need to differ within the file. */
const groupId = (what: string) => `groups-http-${what}-${++tags}`;

describe("job groups over HTTP on the local stack", () => {
  it("fans out 20 echo children and runs the echo completion job once all are done", async () => {
    const payloads = Array.from({ length: 20 }, (_, n) => ({ n, word: `child ${n} 🚀` }));
    const created = await call("POST", "/groups", { children: payloads.map(echo), onComplete });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      failure: "continue",
      duplicate: false,
      onComplete: { kind: "echo" },
      counts: { total: 20 },
      completionJobId: expect.any(String),
    });
    const { id } = created.body;

    const done = await untilGroup(id, "succeeded");
    expect(done.counts).toEqual({ total: 20, pending: 0, done: 20, dead: 0, cancelled: 0 });
    expect(done).toMatchObject({
      completionJobId: created.body.completionJobId,
      sealedAt: expect.any(String),
    });
    expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.createdAt));
    expect(done.failedChild).toBeUndefined();

    const { children, pages } = await allChildren(id, 7);
    expect(pages).toBe(3);
    expect(new Set(children.map((c) => c.id)).size).toBe(20);
    expect(children.map((c) => c.status)).toEqual(payloads.map(() => "done"));
    // In the order they were given, each with its own payload back as its result.
    expect(children.map((c) => c.result)).toEqual(payloads);
    // The children are ordinary jobs too.
    const child = children[13] as Json;
    expect(await untilStatus(child.id, "done")).toMatchObject({ kind: "echo", result: payloads[13] });

    const filtered = await call("GET", `/groups/${id}/children?status=done&limit=100`);
    expect(filtered.body.items).toHaveLength(20);
    expect(filtered.body.cursor).toBeUndefined();
    expect((await call("GET", `/groups/${id}/children?status=pending`)).body.items).toEqual([]);

    const completion = await untilStatus(done.completionJobId, "done");
    expect(completion).toMatchObject({ kind: "echo", attempts: 1, result: { folded: true } });
  });

  it("builds an open group in steps: it completes only once sealed", async () => {
    const id = groupId("steps");
    const first = await call("POST", "/groups", {
      id,
      sealed: false,
      children: [echo("a"), echo("b")],
      onComplete,
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      id,
      status: "open",
      counts: { total: 2 },
      expiresAt: expect.any(String),
    });

    const added = await call("POST", `/groups/${id}/children`, {
      children: [echo("c"), echo("d"), echo("e")],
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body).toMatchObject({ id, status: "open", counts: { total: 5 } });

    // Every child runs to done, and the group still waits for its seal.
    const allDone = await waitFor(async () => {
      const r = await call("GET", `/groups/${id}`);
      return r.body.counts.done === 5 ? r.body : undefined;
    }, "the five children to finish");
    expect(allDone.status).toBe("open");
    // Its completion job's id is fixed from the start, and no such job exists before the seal.
    expect((await call("GET", `/jobs/${allDone.completionJobId}`)).status).toBe(404);

    const sealed = await call("POST", `/groups/${id}/seal`);
    expect(sealed.status).toBe(200);
    expect(["sealed", "completing", "succeeded"]).toContain(sealed.body.status);
    const done = await untilGroup(id, "succeeded");
    expect(done.counts).toEqual({ total: 5, pending: 0, done: 5, dead: 0, cancelled: 0 });
    expect(done.expiresAt).toBeUndefined();
    const { children } = await allChildren(id, 2);
    expect(children.map((c) => c.result)).toEqual(["a", "b", "c", "d", "e"]);
    expect(await untilStatus(done.completionJobId, "done")).toMatchObject({ result: { folded: true } });

    // Sealing again changes nothing; adding or cancelling now is a conflict.
    const again = await call("POST", `/groups/${id}/seal`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, status: "succeeded" });
    const late = await call("POST", `/groups/${id}/children`, { children: [echo("late")] });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("conflict");
    const cancel = await call("POST", `/groups/${id}/cancel`);
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe("conflict");
    expect((await call("GET", `/groups/${id}`)).body.counts.total).toBe(5);
  });

  it("a create sent twice is one group: 201, then 200 duplicate; another body with its id is a conflict", async () => {
    const id = groupId("retry");
    const body = { id, children: [echo(1), echo(2)], onComplete };
    const first = await call("POST", "/groups", body);
    const second = await call("POST", "/groups", body);
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(first.body.duplicate).toBe(false);
    expect(second.body).toMatchObject({
      id,
      duplicate: true,
      completionJobId: first.body.completionJobId,
      createdAt: first.body.createdAt,
      counts: { total: 2 },
    });
    const other = await call("POST", "/groups", { ...body, children: [echo(3)] });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("conflict");
    const done = await untilGroup(id, "succeeded");
    expect(done.counts).toMatchObject({ total: 2, done: 2 });
  });

  it("a body it can't read is refused before anything is read or written", async () => {
    const id = groupId("encoding");
    const send = (path: string, headers: Record<string, string>, body: unknown) =>
      fetch(`${stack().url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    const latin1 = await send(
      "/groups",
      { "content-type": "application/json; charset=iso-8859-1" },
      { id, children: [echo(1)], onComplete },
    );
    expect(latin1.status).toBe(415);
    expect(((await latin1.json()) as Json).error.code).toBe("unsupported_media_type");
    expect((await call("GET", `/groups/${id}`)).status).toBe(404);
  });
});

/** A GroupView without what differs between two groups made alike: ids and times. */
function shape(view: Json): Json {
  const { id, createdAt, sealedAt, expiresAt, finishedAt, completionJobId, ...rest } = view;
  return {
    ...rest,
    id: typeof id,
    createdAt: typeof createdAt,
    sealedAt: typeof sealedAt,
    expiresAt: typeof expiresAt,
    finishedAt: typeof finishedAt,
    completionJobId: typeof completionJobId,
  };
}

/** What an answer holds whatever the children have done by then: no status, no progress. */
function stable(view: Json): Json {
  const { status: _status, finishedAt: _finishedAt, counts, ...rest } = shape(view);
  return { ...rest, counts: { total: counts.total } };
}

describe("Invoke answers the group requests as the HTTP routes do", () => {
  it("{ group } answers what POST /groups answers, a retry included", async () => {
    const request = (id: string) => ({ id, children: [echo("x"), echo("y"), echo("z")], onComplete });
    const viaHttp = groupId("parity-http");
    const viaInvoke = groupId("parity-invoke");
    const http = await call("POST", "/groups", request(viaHttp));
    const invoked = await invoke({ group: request(viaInvoke) });
    expect(http.status).toBe(201);
    expect(invoked.id).toBe(viaInvoke);
    expect(stable(invoked)).toEqual(stable(http.body));
    expect(["sealed", "completing", "succeeded"]).toContain(invoked.status);

    const httpAgain = await call("POST", "/groups", request(viaHttp));
    const invokedAgain = await invoke({ group: request(viaInvoke) });
    expect(invokedAgain).toMatchObject({ duplicate: true, completionJobId: invoked.completionJobId });
    expect(stable(invokedAgain)).toEqual(stable(httpAgain.body));

    const [doneHttp, doneInvoke] = await Promise.all([
      untilGroup(viaHttp, "succeeded"),
      untilGroup(viaInvoke, "succeeded"),
    ]);
    expect(shape(doneInvoke)).toEqual(shape(doneHttp));
    const { children } = await allChildren(viaInvoke, 100);
    expect(children.map((c) => c.result)).toEqual(["x", "y", "z"]);
  });

  it("{ groupChildren } and { sealGroup } answer what …/children and …/seal answer", async () => {
    const viaHttp = groupId("steps-http");
    const viaInvoke = groupId("steps-invoke");
    const open = (id: string) => ({ id, sealed: false, children: [echo(1)], onComplete });
    expect((await call("POST", "/groups", open(viaHttp))).status).toBe(201);
    expect((await invoke({ group: open(viaInvoke) })).status).toBe("open");

    const more = [echo(2), echo(3)];
    const added = await call("POST", `/groups/${viaHttp}/children`, { children: more });
    const addedByInvoke = await invoke({ groupChildren: { groupId: viaInvoke, children: more } });
    expect(added.status).toBe(200);
    expect(addedByInvoke).toMatchObject({ id: viaInvoke, status: "open", counts: { total: 3 } });
    expect(stable(addedByInvoke)).toEqual(stable(added.body));

    const sealed = await call("POST", `/groups/${viaHttp}/seal`);
    const sealedByInvoke = await invoke({ sealGroup: { groupId: viaInvoke } });
    expect(sealed.status).toBe(200);
    expect(sealedByInvoke.id).toBe(viaInvoke);
    expect(["sealed", "completing", "succeeded"]).toContain(sealedByInvoke.status);
    const [doneHttp, doneInvoke] = await Promise.all([
      untilGroup(viaHttp, "succeeded"),
      untilGroup(viaInvoke, "succeeded"),
    ]);
    expect(doneInvoke.counts).toEqual({ total: 3, pending: 0, done: 3, dead: 0, cancelled: 0 });
    expect(shape(doneInvoke)).toEqual(shape(doneHttp));
    // Sealing again over Invoke is as idempotent as over HTTP.
    expect(shape(await invoke({ sealGroup: { groupId: viaInvoke } }))).toEqual(
      shape((await call("POST", `/groups/${viaHttp}/seal`)).body),
    );
  });

  it("a bad request answers { error } with the HTTP route's code, message and issues", async () => {
    const sealedId = groupId("parity-sealed");
    expect(
      (
        await call("POST", "/groups", {
          id: sealedId,
          children: [{ kind: "echo", delaySeconds: 3600 }],
          onComplete,
        })
      ).status,
    ).toBe(201);
    const mixed = [echo(0), { kind: "partner-call", payload: { orderId: 5 } }, echo(2)];
    const pairs: [what: string, http: [method: string, path: string, body?: unknown], invoke: unknown][] = [
      [
        "one bad child",
        ["POST", "/groups", { children: mixed, onComplete }],
        { group: { children: mixed, onComplete } },
      ],
      [
        "a child with a uniqueKey",
        ["POST", "/groups", { children: [{ ...echo(0), uniqueKey: "k" }], onComplete }],
        { group: { children: [{ ...echo(0), uniqueKey: "k" }], onComplete } },
      ],
      [
        "1001 children",
        ["POST", "/groups", { children: Array.from({ length: 1001 }, () => echo(0)), onComplete }],
        { group: { children: Array.from({ length: 1001 }, () => echo(0)), onComplete } },
      ],
      [
        "onComplete an unknown kind",
        ["POST", "/groups", { onComplete: { kind: "nope" } }],
        { group: { onComplete: { kind: "nope" } } },
      ],
      [
        "an existing id with other children",
        ["POST", "/groups", { id: sealedId, children: [echo(9)], onComplete }],
        { group: { id: sealedId, children: [echo(9)], onComplete } },
      ],
      [
        "children for an unknown group",
        ["POST", "/groups/no-such-group/children", { children: [echo(0)] }],
        { groupChildren: { groupId: "no-such-group", children: [echo(0)] } },
      ],
      [
        "children for an id no group can have",
        ["POST", "/groups/not%20an%20id/children", { children: [echo(0)] }],
        { groupChildren: { groupId: "not an id", children: [echo(0)] } },
      ],
      [
        "children with one bad child",
        ["POST", `/groups/${sealedId}/children`, { children: mixed }],
        { groupChildren: { groupId: sealedId, children: mixed } },
      ],
      [
        "children for a sealed group",
        ["POST", `/groups/${sealedId}/children`, { children: [echo(0)] }],
        { groupChildren: { groupId: sealedId, children: [echo(0)] } },
      ],
      [
        "seal an unknown group",
        ["POST", "/groups/no-such-group/seal"],
        { sealGroup: { groupId: "no-such-group" } },
      ],
      [
        "seal an id no group can have",
        ["POST", `/groups/${"x".repeat(81)}/seal`],
        { sealGroup: { groupId: "x".repeat(81) } },
      ],
    ];
    const codes: string[] = [];
    for (const [what, [method, path, body], event] of pairs) {
      const http = await call(method, path, body);
      const invoked = await invoke(event);
      expect(http.status, what).toBe(errorCodes[http.body.error?.code as keyof typeof errorCodes]);
      expect(invoked, what).toEqual(http.body);
      codes.push(invoked.error.code);
    }
    expect(codes).toEqual([
      "validation_error",
      "validation_error",
      "validation_error",
      "unknown_kind",
      "conflict",
      "not_found",
      "not_found",
      "validation_error",
      "conflict",
      "not_found",
      "not_found",
    ]);
  });
});
