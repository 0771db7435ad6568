import aws4 from "aws4";
import { describe, expect, it } from "vitest";
import { httpTransport } from "../../client/http-transport.ts";
import type { ApiRequest } from "../../client/transport.ts";
import { isLoopbackUrl, regionOfApiUrl } from "../../client/wire.ts";
import { type ReceivedRequest, recordingServerForFile } from "../support/recording-server.ts";

/**
 * The HTTP transport's SigV4 signature, checked against `aws4`, a signer written independently of
 * the AWS SDK's: for fixed requests, credentials, region and time, the signature the transport put
 * on the wire is the one aws4 computes for the request that arrived (method, path, query, the
 * headers the transport says it signed, body).
 */

const server = recordingServerForFile(() => '{"ok":true}');
const lastRequest = () => server().received.at(-1);

const SIGNED_AT = new Date("2026-01-02T03:04:05.678Z");
const region = "eu-west-1";
const keys = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const session = { ...keys, sessionToken: "FwoGZXIvYXdzEXAMPLE//token+with/slashes==" };

const cases: [string, ApiRequest, typeof keys | typeof session][] = [
  [
    "POST with a UTF-8 JSON body",
    {
      method: "POST",
      path: "/jobs",
      body: { kind: "echo", payload: { text: 'héllo "wörld" ✓', n: [1, 2] } },
    },
    keys,
  ],
  [
    "GET with a query that needs escaping",
    {
      method: "GET",
      path: "/jobs",
      query: { status: "dead", queue: "default", limit: "5", cursor: "a b+c*(!)'~_-.", skipped: undefined },
    },
    keys,
  ],
  [
    "DELETE of an escaped path segment, with a session token",
    { method: "DELETE", path: "/schedules/a%2Fb%20c" },
    session,
  ],
  [
    "PATCH under a base path",
    { method: "PATCH", path: "/queues/default", body: { maxConcurrency: 5 } },
    session,
  ],
];

describe("the HTTP transport signs as aws4 does", () => {
  it.each(cases)("%s", async (name, request, credentials) => {
    const base = name.includes("base path") ? `${server().url}/stage-a/` : server().url;
    const transport = httpTransport({ url: base, region, credentials, now: () => SIGNED_AT });
    const answer = await transport.send(request);
    expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    const got = lastRequest() as ReceivedRequest;

    const signedNames = ["host", "x-amz-date"];
    if (got.body) signedNames.push("content-type", "content-length");
    if ("sessionToken" in credentials) signedNames.push("x-amz-security-token");
    const headers = Object.fromEntries(signedNames.map((h) => [h, String(got.headers[h])]));
    const reference = aws4.sign(
      {
        method: got.method,
        host: got.headers.host,
        path: got.target,
        headers,
        ...(got.body ? { body: got.body } : {}),
        service: "execute-api",
        region,
      },
      credentials,
    );

    expect(got.headers["x-amz-date"]).toBe("20260102T030405Z");
    expect(got.headers.authorization).toBe(reference.headers?.Authorization);
    expect(got.headers.authorization).toContain(
      `Credential=AKIDEXAMPLE/20260102/${region}/execute-api/aws4_request`,
    );
    expect(got.headers.authorization).toContain(`SignedHeaders=${[...signedNames].sort().join(";")},`);
    if ("sessionToken" in credentials)
      expect(got.headers["x-amz-security-token"]).toBe(credentials.sessionToken);
    if (name.includes("base path")) expect(got.target).toBe("/stage-a/queues/default");
  });

  it("takes the region from an execute-api URL", () => {
    expect(regionOfApiUrl(new URL("https://abc123.execute-api.ap-southeast-2.amazonaws.com"))).toBe(
      "ap-southeast-2",
    );
    expect(regionOfApiUrl(new URL("https://abc123.execute-api.cn-north-1.amazonaws.com.cn/x"))).toBe(
      "cn-north-1",
    );
    expect(regionOfApiUrl(new URL("https://api.example.com"))).toBeUndefined();
  });

  it("needs no credentials for a loopback URL: it signs with fixed local ones", async () => {
    const transport = httpTransport({ url: server().url, now: () => SIGNED_AT });
    await transport.send({ method: "GET", path: "/health" });
    expect(lastRequest()?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=local\/20260102\/[a-z0-9-]+\/execute-api\//,
    );
  });

  it("counts 127.0.0.1 mapped into IPv6 as loopback, as it does 127.0.0.1 itself", async () => {
    const port = new URL(server().url).port;
    const transport = httpTransport({ url: `http://[::ffff:127.0.0.1]:${port}`, now: () => SIGNED_AT });
    await transport.send({ method: "GET", path: "/health" });
    expect(lastRequest()?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=local\//);

    const loopback = ["http://[::ffff:127.0.0.1]/", "http://[0:0:0:0:0:ffff:127.1.2.3]:8/", "http://[::1]/"];
    for (const u of loopback) expect(isLoopbackUrl(new URL(u)), u).toBe(true);
    const remote = [
      "http://[::ffff:10.0.0.1]/",
      "http://[::ffff:8.8.8.8]/",
      "http://[::2]/",
      "http://127.0.0.1.nip.io/",
    ];
    for (const u of remote) expect(isLoopbackUrl(new URL(u)), u).toBe(false);
  });
});
