import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpEvent } from "../../lib/api/http.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { type LocalHttp, startLocalHttp } from "../../local/http-server.ts";

/**
 * The local server routes as API Gateway does: POST /tokens/{id} to the token callback's own
 * function (deployed without IAM auth, with a throttle of its own), every other route to the API's.
 */
describe("the local HTTP server's integrations", () => {
  let http: LocalHttp;
  const answer = (by: string) => async (event: HttpEvent) => ({
    statusCode: 200,
    body: JSON.stringify({ by, routeKey: event.routeKey }),
  });
  beforeAll(async () => {
    http = await startLocalHttp({
      host: "127.0.0.1",
      port: 0,
      api: answer("api"),
      tokenCallback: answer("token-callback"),
      functions: {},
      log: silentLog,
    });
  });
  afterAll(() => http?.close());

  it("sends POST /tokens/{id} to the token callback and every other route to the API", async () => {
    const post = await fetch(`${http.url}/tokens/abc`, { method: "POST", body: "{}" });
    expect(await post.json()).toEqual({ by: "token-callback", routeKey: "POST /tokens/{id}" });
    const get = await fetch(`${http.url}/tokens/abc`);
    expect(await get.json()).toEqual({ by: "api", routeKey: "GET /tokens/{id}" });
    const job = await fetch(`${http.url}/jobs/abc`);
    expect(await job.json()).toEqual({ by: "api", routeKey: "GET /jobs/{id}" });
  });
});
