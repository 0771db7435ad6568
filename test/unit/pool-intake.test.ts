import { describe, expect, test } from "vitest";
import type { PoolKindSpec } from "../../lib/declarations/pool-kind.ts";
import { agedArrival } from "../../lib/job/priority.ts";
import { childEnvironment } from "../../lib/pool/child-environment.ts";
import { Intake, type Waiting } from "../../lib/pool/intake.ts";
import { RunningJobs } from "../../lib/services/running-jobs.ts";

const kind = (name: string, soft: number, hard: number, queue = "heavy"): PoolKindSpec => ({
  name,
  argv: ["x"],
  env: {},
  timeoutSeconds: 60,
  soft,
  hard,
  queue,
  maxAttempts: 3,
});
let seq = 0;
const msg = (k: string, critical = false, queue = "heavy", agedAt = 0): Waiting => ({
  record: { messageId: `m${++seq}`, body: "{}", receiptHandle: `r${seq}` },
  queue,
  kind: k,
  critical,
  receivedAt: 0,
  agedAt,
});

describe("Intake: the pool takes only what its children can start", () => {
  test("idle: every soft child plus one probe while the kind can grow", () => {
    const intake = new Intake([kind("a", 2, 4)]);
    expect(intake.room("heavy", () => 0)).toBe(3);
  });

  test("all soft children busy: one probe, and none once a normal message waits for a child", () => {
    const intake = new Intake([kind("a", 2, 4)]);
    let busy = 0;
    for (let i = 0; i < 2; i++) {
      intake.hold(msg("a"));
      intake.take(intake.head("a") as Waiting);
      busy++;
    }
    expect(intake.room("heavy", () => busy)).toBe(1);
    intake.hold(msg("a"));
    expect(intake.room("heavy", () => busy)).toBe(0);
  });

  test("critical work grows to hard, one probe at a time, and no further", () => {
    const intake = new Intake([kind("a", 1, 3)]);
    let busy = 0;
    const run = (w: Waiting) => {
      intake.hold(w);
      expect(intake.head("a")).toBe(w);
      intake.take(w);
      busy++;
    };
    run(msg("a"));
    expect(intake.room("heavy", () => busy)).toBe(1);
    run(msg("a", true));
    expect(intake.room("heavy", () => busy)).toBe(1);
    run(msg("a", true));
    expect(intake.room("heavy", () => busy)).toBe(0);
    intake.release("heavy");
    busy--;
    expect(intake.room("heavy", () => busy)).toBe(1);
  });

  test("a kind with soft = hard gets no probe; queues are counted apart", () => {
    const intake = new Intake([kind("a", 2, 2), kind("b", 1, 2, "other")]);
    expect(intake.room("heavy", () => 0)).toBe(2);
    expect(intake.room("other", () => 0)).toBe(2);
    intake.hold(msg("b", false, "other"));
    expect(intake.room("heavy", () => 0)).toBe(2);
    expect(intake.room("other", () => 0)).toBe(0);
  });

  test("critical messages leave the line first; drain gives every waiting message back", () => {
    const intake = new Intake([kind("a", 1, 2)]);
    const normal = msg("a");
    const critical = msg("a", true);
    intake.hold(normal);
    intake.hold(critical);
    expect(intake.criticalWaiting("a")).toBe(true);
    expect(intake.head("a")).toBe(critical);
    expect(intake.drain()).toEqual([critical, normal]);
    expect(intake.head("a")).toBeUndefined();
    expect(intake.room("heavy", () => 0)).toBe(2);
  });

  test("behind the critical ones, messages leave by their aged enqueue time, ties in arrival order", () => {
    const intake = new Intake([kind("a", 4, 4)]);
    const t = 1_700_000_000_000;
    // Received in this order; aged as a priority-3 job at t, a priority-5 job at t + 30 s (aged to
    // t - 30 s), a priority-1 job at t - 90 s (aged to t - 30 s: after the 5, which came first), a
    // second priority-3 at t.
    const p3 = msg("a", false, "heavy", agedArrival(t, 3));
    const p5 = msg("a", false, "heavy", agedArrival(t + 30_000, 5));
    const p1 = msg("a", false, "heavy", agedArrival(t - 90_000, 1));
    const p3b = msg("a", false, "heavy", agedArrival(t, "normal"));
    const critical = msg("a", true, "heavy", agedArrival(t + 3_600_000, "critical"));
    for (const w of [p3, p5, p1, p3b, critical]) intake.hold(w);
    const order: Waiting[] = [];
    for (let w = intake.head("a"); w; w = intake.head("a")) {
      intake.take(w);
      order.push(w);
    }
    expect(order).toEqual([critical, p5, p1, p3, p3b]);
  });

  test("a message for a kind the pool doesn't serve is held but not lined up", () => {
    const intake = new Intake([kind("a", 1, 1)]);
    expect(intake.hold(msg("zzz"))).toBe(false);
    expect(intake.room("heavy", () => 0)).toBe(0);
  });
});

describe("what children inherit", () => {
  test("only PATH, HOME, LANG, TZ and TMPDIR of the pool's environment, then the kind's env", () => {
    const env = childEnvironment(
      {
        PATH: "/usr/bin",
        LANG: "C.UTF-8",
        AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: "/v2/credentials/x",
        AWS_ACCESS_KEY_ID: "AKIA",
        AWS_PROFILE: "admin",
        ECS_CONTAINER_METADATA_URI_V4: "http://169.254.170.2/v4/x",
        SKYFORGE_TABLE: "jobs",
        GITHUB_TOKEN: "ghp_x",
        NODE_OPTIONS: "--require /tmp/x.js",
      },
      { BOOT_DELAY_MS: "0" },
    );
    expect(env).toEqual({ PATH: "/usr/bin", LANG: "C.UTF-8", BOOT_DELAY_MS: "0" });
  });

  test("a child with a home of its own gets it as HOME and TMPDIR", () => {
    const env = childEnvironment({ PATH: "/bin", HOME: "/root", TMPDIR: "/tmp" }, {}, { home: "/tmp/c/7" });
    expect(env).toEqual({ PATH: "/bin", HOME: "/tmp/c/7", TMPDIR: "/tmp/c/7" });
  });
});

describe("RunningJobs.close", () => {
  test("aborts every run now, and a run that registers afterwards at once", () => {
    const running = new RunningJobs();
    const causes: string[] = [];
    running.register("a", (c) => causes.push(`a:${c}`));
    expect(running.close("shutdown")).toBe(1);
    running.register("late", (c) => causes.push(`late:${c}`));
    expect(causes).toEqual(["a:shutdown", "late:shutdown"]);
    // The late run was told at once and never joined the registry; only "a" awaits its unregister.
    expect(running.size).toBe(1);
  });
});
