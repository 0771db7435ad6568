import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { claimKey, TOKEN_OBJECTS_PATTERN } from "../../lib/claims/claim-keys.ts";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import {
  type Grant,
  grantsFor,
  type ResourceRef,
  type Role,
  TOKEN_CALLBACK_LEADING_KEYS,
} from "../../lib/deploy-plan/grants.ts";
import { jobKey, payloadKey, tokenKey } from "../../lib/store/keys.ts";

const { queues } = app;

const roles: Role[] = [
  "enqueue",
  "api",
  "worker",
  "reaper",
  "cleanup",
  "cron",
  "pool",
  "token-callback",
  "realtime-authorizer",
  "realtime-replay",
];
const extra: QueueDeclaration = { ...(queues[0] as QueueDeclaration), name: "emails" };
const threeQueues = [...queues, extra];

const actionsOn = (grants: Grant[], match: (r: ResourceRef) => boolean) =>
  new Set(grants.filter((g) => g.resources.some(match)).flatMap((g) => g.actions));
const refsWith = (grants: Grant[], action: string) =>
  grants.filter((g) => g.actions.includes(action)).flatMap((g) => g.resources);

describe("least privilege, as planned per role", () => {
  test("no action is a wildcard and the only wildcard resource is the table's own indexes", () => {
    for (const role of roles) {
      for (const g of grantsFor(role, threeQueues, ["default", "heavy"])) {
        for (const a of g.actions)
          expect(a, `${role}: ${a}`).toMatch(/^(dynamodb|sqs|lambda|s3|iot|ssm):[A-Z][A-Za-z]+$/);
        expect(g.resources.length, `${role} has a grant without resources`).toBeGreaterThan(0);
      }
    }
  });

  test("only the API and the reaper may touch event source mappings, and only the Lambda workers' ones", () => {
    for (const role of roles) {
      const refs = refsWith(grantsFor(role, threeQueues), "lambda:UpdateEventSourceMapping");
      if (role === "api" || role === "reaper") {
        // The Lambda-tier queues: not the pool's "heavy".
        expect(refs).toEqual(
          ["default", "batch", "emails"].map((queue) => ({ type: "eventSourceMapping", queue })),
        );
      } else {
        expect(refs, role).toEqual([]);
      }
    }
  });

  test("a worker moves messages of its own queue only, sends to every main queue (follow-ups, groups), and never reaches a DLQ or an index", () => {
    const grants = grantsFor("worker", threeQueues, ["emails"]);
    expect(refsWith(grants, "sqs:ChangeMessageVisibility")).toEqual([{ type: "queue", queue: "emails" }]);
    expect(refsWith(grants, "sqs:SendMessage")).toEqual(
      threeQueues.map((q) => ({ type: "queue", queue: q.name })),
    );
    const sqsRefs = grants
      .filter((g) => g.actions.some((a) => a.startsWith("sqs:")))
      .flatMap((g) => g.resources);
    expect(sqsRefs.every((r) => r.type === "queue")).toBe(true);
    expect(actionsOn(grants, (r) => r.type === "tableIndexes").size).toBe(0);
    expect(actionsOn(grants, (r) => r.type === "table")).toEqual(
      new Set([
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
        "dynamodb:BatchGetItem",
      ]),
    );
  });

  test("the pool receives from its own queues only; the enqueue function sends to every main queue", () => {
    const pool = grantsFor("pool", threeQueues, ["heavy"]);
    expect(refsWith(pool, "sqs:ReceiveMessage")).toEqual([{ type: "queue", queue: "heavy" }]);
    const enqueue = grantsFor("enqueue", threeQueues);
    expect(refsWith(enqueue, "sqs:SendMessage")).toEqual(
      threeQueues.map((q) => ({ type: "queue", queue: q.name })),
    );
    expect(refsWith(enqueue, "sqs:ReceiveMessage")).toEqual([]);
  });

  test("only the reaper drains DLQs; only the API, cleanup and the reaper (its stale-message pass) may scan; cleanup never writes a job", () => {
    for (const role of roles) {
      const grants = grantsFor(role, threeQueues, ["default"]);
      const drains = refsWith(grants, "sqs:DeleteMessage").some((r) => r.type === "dlq");
      expect(drains, role).toBe(role === "reaper");
      expect(refsWith(grants, "dynamodb:Scan").length > 0, role).toBe(
        role === "api" || role === "cleanup" || role === "reaper",
      );
    }
    const cleanup = grantsFor("cleanup", threeQueues);
    expect(refsWith(cleanup, "dynamodb:PutItem")).toEqual([]);
    expect(refsWith(cleanup, "dynamodb:UpdateItem")).toEqual([]);
  });

  test("adding a queue declaration extends every role that spans queues, with no other edit", () => {
    const before = grantsFor("reaper", queues);
    const after = grantsFor("reaper", threeQueues);
    expect(refsWith(after, "sqs:SendMessage")).toEqual([
      ...refsWith(before, "sqs:SendMessage"),
      { type: "queue", queue: "emails" },
    ]);
    expect(refsWith(after, "sqs:ReceiveMessage")).toContainEqual({ type: "dlq", queue: "emails" });
  });

  test("the claim objects: put and get only, for every role that enqueues or runs jobs; cleanup none", () => {
    for (const role of roles.filter((r) => r !== "token-callback" && !r.startsWith("realtime-"))) {
      const s3 = grantsFor(role, threeQueues, ["default"]).filter((g) =>
        g.actions.some((a) => a.startsWith("s3:")),
      );
      if (role === "cleanup") {
        expect(s3, role).toEqual([]);
        continue;
      }
      expect(s3, role).toEqual([
        { actions: ["s3:PutObject", "s3:GetObject"], resources: [{ type: "claimObjects" }] },
      ]);
    }
  });

  test("the token callback (the one route without IAM auth): get token and job items; update a token only in what a completion writes and a job only in what a resume writes, with nothing returned; put token objects; send to the main queues; nothing else", () => {
    const grants = grantsFor("token-callback", threeQueues, ["default"]);
    const noReturn = { test: "StringEquals", variable: "dynamodb:ReturnValues", values: ["NONE"] };
    const keys = (...values: string[]) => ({
      test: "ForAllValues:StringLike",
      variable: "dynamodb:LeadingKeys",
      values,
    });
    const attributes = (...values: string[]) => ({
      test: "ForAllValues:StringEquals",
      variable: "dynamodb:Attributes",
      values,
    });
    expect(grants).toEqual([
      { actions: ["dynamodb:GetItem"], resources: [{ type: "table" }], conditions: [keys("tok#*", "job#*")] },
      {
        actions: ["dynamodb:UpdateItem"],
        resources: [{ type: "table" }],
        conditions: [
          keys("tok#*"),
          attributes("pk", "sk", "status", "completedAt", "v", "o", "secretHash", "timeoutAt"),
          noReturn,
        ],
      },
      {
        actions: ["dynamodb:UpdateItem"],
        resources: [{ type: "table" }],
        conditions: [
          keys("job#*"),
          attributes("pk", "sk", "gsi1pk", "gsi1sk", "runAt", "promotingUntil", "waiting"),
          noReturn,
        ],
      },
      { actions: ["s3:PutObject"], resources: [{ type: "tokenObjects" }] },
      { actions: ["sqs:SendMessage"], resources: threeQueues.map((q) => ({ type: "queue", queue: q.name })) },
    ]);
    // A job's status, result, payload and steps are none of its writes: a bug in the callback can't end
    // or rewrite a job, only make a waiting one due.
    const jobWrites = grants[2]?.conditions?.find((c) => c.variable === "dynamodb:Attributes")?.values;
    for (const field of ["status", "result", "resultObject", "payload", "steps", "lastError", "expiresAt"])
      expect(jobWrites, field).not.toContain(field);
    // The leading keys are the store's own: a token's item, its job's and the job's payload item.
    const like = (key: string) =>
      TOKEN_CALLBACK_LEADING_KEYS.some((p) => new RegExp(`^${p.replace("*", ".*")}$`).test(key));
    for (const key of [tokenKey("tok_1"), jobKey("j1"), payloadKey("j1")])
      expect(like(key.pk), key.pk).toBe(true);
    expect(like("queue#default")).toBe(false);
    // No other role is limited by condition: their grants are unchanged by this one.
    for (const role of roles.filter((r) => r !== "token-callback"))
      expect(
        grantsFor(role, threeQueues).some((g) => g.conditions),
        role,
      ).toBe(false);
  });

  test("the token objects: the pattern spans a token's object of any class and job, and no payload, result or step", () => {
    const pattern = new RegExp(
      `^${TOKEN_OBJECTS_PATTERN.split("*")
        .map((p) => p.replace(/[.]/g, "\\."))
        .join(".*")}$`,
    );
    const now = Date.UTC(2026, 0, 1);
    expect(claimKey("j1", "token-tok_01", now, now + 90 * 86_400_000)).toMatch(pattern);
    expect(claimKey("j1", "token-tok_01", now, now)).toMatch(pattern);
    for (const part of ["payload", "result-1", "step-abc-1"] as const)
      expect(claimKey("j1", part, now, now + 86_400_000)).not.toMatch(pattern);
  });

  test("realtime: only the roles that change jobs' status publish a job's, a group's and a queue's events (not the token callback, nor cleanup); the replay function only its answers", () => {
    const publishes = (role: Role) => refsWith(grantsFor(role, threeQueues, ["default"]), "iot:Publish");
    const events = [
      { type: "realtimeTopics", topics: "jobs" },
      { type: "realtimeTopics", topics: "groups" },
      { type: "realtimeTopics", topics: "queues" },
    ];
    for (const role of roles) {
      const expected = ["worker", "pool", "api", "enqueue", "reaper", "cron"].includes(role)
        ? events
        : role === "realtime-replay"
          ? [{ type: "realtimeTopics", topics: "replies" }]
          : [];
      expect(publishes(role), role).toEqual(expected);
      // No other iot action, on any role.
      const iot = grantsFor(role, threeQueues, ["default"]).flatMap((g) =>
        g.actions.filter((a) => a.startsWith("iot:")),
      );
      expect(new Set(iot), role).toEqual(new Set(expected.length > 0 ? ["iot:Publish"] : []));
    }
  });

  test("realtime: the token secret is read by the API (it mints) and the authorizer (it checks), which may do nothing else", () => {
    for (const role of roles)
      expect(refsWith(grantsFor(role, threeQueues), "ssm:GetParameter").length > 0, role).toBe(
        role === "api" || role === "realtime-authorizer",
      );
    expect(grantsFor("realtime-authorizer", threeQueues)).toEqual([
      { actions: ["ssm:GetParameter"], resources: [{ type: "realtimeSecret" }] },
    ]);
    expect(grantsFor("realtime-replay", threeQueues)).toEqual([
      { actions: ["dynamodb:GetItem", "dynamodb:Query"], resources: [{ type: "table" }] },
      { actions: ["iot:Publish"], resources: [{ type: "realtimeTopics", topics: "replies" }] },
    ]);
  });
});
