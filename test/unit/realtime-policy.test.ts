import { describe, expect, it } from "vitest";
import { groupTopic, jobTopic, queueTopic, replayTopic, replyTopic } from "../../lib/job/realtime-wire.ts";
import { iotAuthorizerResponse } from "../../lib/realtime/iot-authorizer.ts";
import { grantFor, mayUse } from "../../lib/realtime/policy.ts";
import { mintToken } from "../../lib/realtime/token.ts";

/** The one realtime policy (lib/realtime/policy.ts) and IoT Core's authorizer answer over it. */
const secret = "s3cr3t-for-tests";
const prefix = "skyforge/app/ci";
const now = 1_800_000_000_000;
const ARN = "arn:aws:lambda:us-east-1:123456789012:function:JobsRealtimeAuthorizer";
const token = (claims: { j: string; g?: string; exp?: number; p?: string }, key = secret) =>
  mintToken(
    {
      p: claims.p ?? prefix,
      j: claims.j,
      exp: claims.exp ?? now + 600_000,
      ...(claims.g ? { g: claims.g } : {}),
    },
    key,
  );
const event = (password: string, clientId = "sf-abc") => ({
  protocolData: { mqtt: { username: "token", password: Buffer.from(password).toString("base64"), clientId } },
});

describe("the realtime policy", () => {
  it("grants a token its own job's topic and its own reply topic, and publishing only its replay requests", () => {
    const answer = grantFor(token({ j: "JOBA" }), "sf-abc", { secret, prefix, now });
    expect(answer.ok && answer.grant.subscribe).toEqual([
      jobTopic(prefix, "JOBA"),
      replyTopic(prefix, "JOBA", "sf-abc"),
    ]);
    expect(answer.ok && answer.grant.publish).toEqual([replayTopic(prefix, "JOBA", "sf-abc")]);
  });

  it("never grants a token another job's read-back, even under the same client id (MQTT lets a connection take an id)", () => {
    const a = grantFor(token({ j: "JOBA" }), "sf-abc", { secret, prefix, now });
    const b = grantFor(token({ j: "JOBB" }), "sf-abc", { secret, prefix, now });
    const subscribedByB = b.ok ? b.grant.subscribe : [];
    for (const topic of a.ok ? a.grant.subscribe : ["a granted nothing"])
      expect(mayUse(subscribedByB, topic), topic).toBe(false);
  });

  it("refuses another stack's, an expired, an altered or another key's token, and a client id with topic characters", () => {
    const check = (t: string, clientId = "sf-abc") => grantFor(t, clientId, { secret, prefix, now });
    expect(check(token({ j: "JOBA", p: "skyforge/app/prod" }))).toMatchObject({ ok: false });
    expect(check(token({ j: "JOBA", exp: now }))).toMatchObject({
      ok: false,
      reason: "the token has expired",
    });
    expect(check(token({ j: "JOBA" }, "another"))).toMatchObject({ ok: false });
    const [, signature] = token({ j: "JOBA" }).split(".");
    const other = token({ j: "JOBB" }).split(".")[0];
    expect(check(`${other}.${signature}`)).toMatchObject({ ok: false });
    for (const id of ["a/b", "#", "+", ""])
      expect(check(token({ j: "JOBA" }), id)).toMatchObject({ ok: false });
  });
});

describe("the realtime policy for a queue token", () => {
  const queueToken = (q: string, extra: Record<string, unknown> = {}, key = secret) =>
    mintToken({ p: prefix, q, exp: now + 600_000, ...extra } as { p: string; q: string; exp: number }, key);
  const grant = (t: string, clientId = "sf-abc") => grantFor(t, clientId, { secret, prefix, now });

  it("grants exactly its queue's topic to read, and nothing to publish", () => {
    const answer = grant(queueToken("default"));
    expect(answer.ok && answer.grant.subscribe).toEqual([queueTopic(prefix, "default")]);
    expect(answer.ok && answer.grant.publish).toEqual([]);
  });

  it("can't read another queue's topic, any job's topic (its own queue's jobs' included), a group's or a reply topic, nor ask a read-back", () => {
    const answer = grant(queueToken("default"));
    const allowed = answer.ok ? answer.grant.subscribe : [];
    for (const topic of [
      queueTopic(prefix, "critical"),
      jobTopic(prefix, "JOBA"),
      groupTopic(prefix, "GRP"),
      replyTopic(prefix, "JOBA", "sf-abc"),
      `${prefix}/queues/+`,
      `${prefix}/#`,
    ])
      expect(mayUse(allowed, topic), topic).toBe(false);
    expect(mayUse(answer.ok ? answer.grant.publish : ["none"], replayTopic(prefix, "JOBA", "sf-abc"))).toBe(
      false,
    );
  });

  it("gives a job token no queue topic, and refuses a token naming both a job and a queue", () => {
    const job = grant(token({ j: "JOBA" }));
    expect(mayUse(job.ok ? job.grant.subscribe : [], queueTopic(prefix, "default"))).toBe(false);
    expect(grant(queueToken("default", { j: "JOBA" }))).toMatchObject({ ok: false });
  });

  it("refuses an expired, another stack's, another key's queue token and a queue name with topic characters", () => {
    expect(grant(queueToken("default", { exp: now }))).toMatchObject({
      ok: false,
      reason: "the token has expired",
    });
    expect(grant(queueToken("default", { p: "skyforge/app/prod" }))).toMatchObject({ ok: false });
    expect(grant(queueToken("default", {}, "another"))).toMatchObject({ ok: false });
    for (const q of ["a/b", "#", "+"]) expect(grant(queueToken(q))).toMatchObject({ ok: false });
  });

  it("becomes an IoT policy of exactly the queue's topic, with no publish", () => {
    const answer = iotAuthorizerResponse(event(queueToken("default")), ARN, { secret, prefix, now });
    const iot = "arn:aws:iot:us-east-1:123456789012";
    expect(answer.isAuthenticated).toBe(true);
    expect(answer.policyDocuments[0]?.Statement.slice(1)).toEqual([
      { Effect: "Allow", Action: "iot:Subscribe", Resource: [`${iot}:topicfilter/${prefix}/queues/default`] },
      { Effect: "Allow", Action: "iot:Receive", Resource: [`${iot}:topic/${prefix}/queues/default`] },
    ]);
  });
});

describe("IoT Core's authorizer answer", () => {
  it("allows exactly the grant's topics, in the function's account and region, until the token expires", () => {
    const answer = iotAuthorizerResponse(event(token({ j: "JOBA", g: "GRP" })), ARN, { secret, prefix, now });
    const iot = "arn:aws:iot:us-east-1:123456789012";
    expect(answer.isAuthenticated).toBe(true);
    expect(answer.disconnectAfterInSeconds).toBe(600);
    expect(answer.policyDocuments[0]?.Statement).toEqual([
      { Effect: "Allow", Action: "iot:Connect", Resource: [`${iot}:client/sf-abc`] },
      {
        Effect: "Allow",
        Action: "iot:Subscribe",
        Resource: [
          `${iot}:topicfilter/${prefix}/jobs/JOBA`,
          `${iot}:topicfilter/${prefix}/groups/GRP`,
          `${iot}:topicfilter/${prefix}/replies/JOBA/sf-abc`,
        ],
      },
      {
        Effect: "Allow",
        Action: "iot:Receive",
        Resource: [
          `${iot}:topic/${prefix}/jobs/JOBA`,
          `${iot}:topic/${prefix}/groups/GRP`,
          `${iot}:topic/${prefix}/replies/JOBA/sf-abc`,
        ],
      },
      { Effect: "Allow", Action: "iot:Publish", Resource: [`${iot}:topic/${prefix}/replay/JOBA/sf-abc`] },
    ]);
  });

  it("does not authenticate a refused token, and grants it nothing", () => {
    for (const password of ["", "nope", token({ j: "JOBA", exp: now - 1 })]) {
      const answer = iotAuthorizerResponse(event(password), ARN, { secret, prefix, now });
      expect(answer).toMatchObject({ isAuthenticated: false, policyDocuments: [] });
    }
  });
});
