import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../client/create-client.ts";
import { tokenTarget } from "../../client/durable-calls.ts";
import { SkyforgeApiError, SkyforgeTransportError } from "../../client/errors.ts";
import { httpTransport } from "../../client/http-transport.ts";
import type { ApiRequest, ApiResponse, Transport } from "../../client/transport.ts";
import type { AppNames } from "../../lib/declarations/app-names.ts";

/**
 * The client's durable calls (docs/guide/durable-jobs.md): what each sends, a token's url taken apart
 * into its id and secret (and never used as the host to send to), and answers checked against the
 * routes' shapes. The routes themselves run against the local stack in test/e2e/client.test.ts.
 */

const TOKEN = "tok_01ARZ3NDEKTSV4RRFFQ69G5FAV";
const JOB = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

/** A transport that answers `reply` and records each request. */
function recording(reply: (request: ApiRequest) => ApiResponse) {
  const sent: ApiRequest[] = [];
  const transport: Transport = {
    send: async (request) => {
      sent.push(request);
      return reply(request);
    },
  };
  return { sent, client: createClient<AppNames>({ transport }) };
}
const ok = (body: unknown): ApiResponse => ({ status: 200, headers: {}, body });
const completed = ok({ id: TOKEN, jobId: JOB, status: "completed", resumed: true });

const fail = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("expected a failure"),
    (e: unknown) => e,
  );

describe("tokenTarget", () => {
  it.each([
    [`https://abc.execute-api.eu-west-1.amazonaws.com/tokens/${TOKEN}?secret=s3cr3t`, undefined, "s3cr3t"],
    [`http://127.0.0.1:8787/prefix/tokens/${TOKEN}?secret=a-b_c&x=1`, undefined, "a-b_c"],
    [`/tokens/${TOKEN}?secret=bare`, undefined, "bare"],
    [`/tokens/${TOKEN}?secret=fromurl`, "given", "given"],
    [TOKEN, "given", "given"],
  ])("%s (secret %s): the id and the secret %s", (urlOrId, secret, wanted) => {
    expect(tokenTarget(urlOrId, secret)).toEqual({ id: TOKEN, secret: wanted });
  });

  it("an id alone, or a url without a secret, carries none", () => {
    expect(tokenTarget(TOKEN, undefined)).toEqual({ id: TOKEN });
    expect(tokenTarget(`/tokens/${TOKEN}`, undefined)).toEqual({ id: TOKEN });
  });

  it.each(["https://example.com/jobs/x", "/tokens/", `/tokens/${TOKEN}/more`])(
    "%s names no token: refused by the client",
    (urlOrId) => {
      const err = (() => {
        try {
          tokenTarget(urlOrId, undefined);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(SkyforgeApiError);
      expect(err).toMatchObject({ status: 400, code: "validation_error", raisedBy: "client" });
      expect((err as Error).message).toMatch(/names no token/);
    },
  );
});

describe("the durable calls", () => {
  it("completeToken from a url: POST /tokens/{id} with the url's secret and { data }, through the client's transport", async () => {
    const { sent, client } = recording(() => completed);
    const answer = await client.completeToken(`https://elsewhere.example/tokens/${TOKEN}?secret=s3cr3t`, {
      approved: true,
    });
    expect(answer).toEqual({ id: TOKEN, jobId: JOB, status: "completed", resumed: true });
    await client.completeToken(TOKEN, undefined, { secret: "other" });
    expect(sent).toEqual([
      {
        method: "POST",
        path: `/tokens/${TOKEN}`,
        query: { secret: "s3cr3t" },
        body: { data: { approved: true } },
      },
      { method: "POST", path: `/tokens/${TOKEN}`, query: { secret: "other" }, body: { data: null } },
    ]);
  });

  it("steps, token and sendEvent: their routes, escaped ids, and the event's body", async () => {
    const answers: Record<string, unknown> = {
      [`/jobs/${JOB}/steps`]: {
        jobId: JOB,
        status: "scheduled",
        waiting: { for: "token", until: "2026-01-01T00:10:00.000Z", token: TOKEN },
        steps: [
          {
            name: "create-account",
            type: "step",
            status: "done",
            attempt: 1,
            at: "2026-01-01T00:00:00.000Z",
          },
        ],
      },
      [`/tokens/${TOKEN}`]: {
        id: TOKEN,
        jobId: JOB,
        step: "approval",
        status: "pending",
        createdAt: "2026-01-01T00:00:00.000Z",
        timeoutAt: "2026-01-01T00:10:00.000Z",
      },
      "/events": { resumed: 2 },
    };
    const { sent, client } = recording((r) =>
      r.path === "/events" ? { ...ok(answers[r.path]), status: 202 } : ok(answers[r.path]),
    );
    expect((await client.steps(JOB)).waiting).toEqual({
      for: "token",
      until: "2026-01-01T00:10:00.000Z",
      token: TOKEN,
    });
    expect((await client.token(TOKEN)).status).toBe("pending");
    expect(await client.sendEvent("order.paid", "o-1", { amount: 5 })).toEqual({ resumed: 2 });
    expect(sent).toEqual([
      { method: "GET", path: `/jobs/${JOB}/steps` },
      { method: "GET", path: `/tokens/${TOKEN}` },
      { method: "POST", path: "/events", body: { name: "order.paid", match: "o-1", data: { amount: 5 } } },
    ]);
    for (const id of ["", ".."]) {
      expect(await fail(client.steps(id))).toMatchObject({ code: "validation_error", raisedBy: "client" });
    }
    await fail(client.token("a/b"));
    expect(sent.at(-1)?.path).toBe("/tokens/a%2Fb");
  });

  it("sendEvent follows each answer's continuation, the same event sent again with it, and adds up resumed", async () => {
    const answers = [{ resumed: 2, continuation: "c1" }, { resumed: 0, continuation: "c2" }, { resumed: 1 }];
    const { sent, client } = recording(() => ({ ...ok(answers[sent.length - 1]), status: 202 }));
    expect(await client.sendEvent("order.paid", "o-1", { amount: 5 })).toEqual({ resumed: 3 });
    const event = { name: "order.paid", match: "o-1", data: { amount: 5 } };
    expect(sent.map((r) => r.body)).toEqual([
      event,
      { ...event, continuation: "c1" },
      { ...event, continuation: "c2" },
    ]);
    // A server that hands back the continuation it was given is not followed round for ever.
    const stuck = recording((r) => ({
      ...ok({ resumed: 0, continuation: (r.body as { continuation?: string }).continuation ?? "c" }),
      status: 202,
    }));
    expect(await stuck.client.sendEvent("order.paid", "o-1")).toEqual({ resumed: 0 });
    expect(stuck.sent).toHaveLength(2);
  });

  it("waitingCounts: GET /jobs?waiting=true, with the queue when given; an answer without counts is a transport error", async () => {
    const counts = {
      waiting: [{ queue: "default", kind: "onboard", version: "v1", jobs: 2 }],
      complete: true,
    };
    const { sent, client } = recording(() => ok(counts));
    expect(await client.waitingCounts()).toEqual(counts);
    expect(await client.waitingCounts({ queue: "default" })).toEqual(counts);
    expect(sent.map((r) => [r.method, r.path, r.query])).toEqual([
      ["GET", "/jobs", { waiting: "true", queue: undefined }],
      ["GET", "/jobs", { waiting: "true", queue: "default" }],
    ]);
    const wrong = recording(() => ok({ items: [] }));
    expect(await fail(wrong.client.waitingCounts())).toBeInstanceOf(SkyforgeTransportError);
  });

  it("an answer not in the route's shape is a transport error naming the field", async () => {
    const { client } = recording(() => ok({ jobId: JOB, status: "scheduled", steps: [{ name: "x" }] }));
    const err = await fail(client.steps(JOB));
    expect(err).toBeInstanceOf(SkyforgeTransportError);
    expect((err as Error).message).toMatch(/GET \/jobs\/\w+\/steps answered .*steps\.0\.type/);
    const wrong = recording(() => ok({ id: TOKEN, jobId: JOB, status: "pending", resumed: true }));
    expect(await fail(wrong.client.completeToken(TOKEN, 1, { secret: "s" }))).toBeInstanceOf(
      SkyforgeTransportError,
    );
  });
});

describe("over HTTP", () => {
  let server: Server;
  let url: string;
  const seen: { method?: string; url?: string; host?: string; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        seen.push({ method: req.method, url: req.url, host: req.headers.host, body });
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ id: TOKEN, jobId: JOB, status: "completed", resumed: false }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("the secret rides in the query string, escaped, to the client's endpoint", async () => {
    const client = createClient<AppNames>({ transport: httpTransport({ url }) });
    const answer = await client.completeToken(
      `https://other-host.example/tokens/${TOKEN}?secret=a%2Bb%3D`,
      "yes",
    );
    expect(answer.resumed).toBe(false);
    expect(seen).toEqual([
      {
        method: "POST",
        url: `/tokens/${TOKEN}?secret=a%2Bb%3D`,
        host: new URL(url).host,
        body: JSON.stringify({ data: "yes" }),
      },
    ]);
  });
});
