import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Log } from "../../lib/observability/log.ts";
import { INHERITED_NAMES } from "../../lib/pool/child-environment.ts";
import { DEFAULT_CHILD_UIDS } from "../../lib/pool/child-users.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { type PoolProcess, startPoolProcess } from "../../local/pool-process.ts";
import {
  type PoolProcessStage,
  poolOutputLog,
  poolProcessStage,
  refusal,
} from "../support/pool-process-stage.ts";
import { emulatorsForFile } from "../support/test-emulators.ts";
import { AS_UNPRIVILEGED, UNPRIVILEGED, uidOf } from "../support/unprivileged.ts";
import { waitFor } from "../support/wait.ts";

/**
 * What a pool child can reach, tried by a child program (test/fixtures/children/prober.mjs) under
 * the real pool process (functions/pool/main.ts, as `npm start` runs it, as root here). The pool's
 * environment holds secrets (a session token, a developer's token); one child holds another job's
 * mark in its memory while its sibling looks for both.
 */
const secret = (name: string) => `${name}-${randomBytes(12).toString("hex")}`;
const SECRETS = {
  AWS_SESSION_TOKEN: secret("session"),
  // (Not AWS_PROFILE: with it set, the pool's own SDK would skip the local keys it is given.)
  SKYFORGE_TEST_SECRET: secret("skyforge"),
  DEVELOPER_TOKEN: secret("developer"),
};
const KIND_ENV = { PROBER_SETTING: "from-the-kind" };
const configText = JSON.stringify({
  kinds: {
    prober: {
      argv: [process.execPath, "test/fixtures/children/prober.mjs"],
      soft: 2,
      hard: 2,
      env: KIND_ENV,
    },
  },
});

interface Probe {
  pid: number;
  uid: number;
  gid: number;
  groups: string;
  caps: Record<string, string>;
  envNames: string[];
  home: string;
  tmpdir: string;
  homeOwner: number;
  homeMode: string;
  homeWritable: string;
  homesListing: string;
  parentEnviron: string;
  parentMem: string;
  siblings: { pid: number; uid: number; environ: string; mem: string; markFound: boolean; home: string }[];
  secretsFound: string[];
}

const emulators = emulatorsForFile();
const stages: PoolProcessStage[] = [];
let dir: string;
let config: string;

beforeAll(() => {
  // Readable by the unprivileged pool below too.
  dir = mkdtempSync(join(tmpdir(), "skyforge-isolation-"));
  chmodSync(dir, 0o755);
  config = join(dir, "pool.json");
  writeFileSync(config, configText, { mode: 0o644 });
}, 60_000);
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  for (const stage of stages) stage.destroy();
});

/** A table and queues of its own for each test: a job one pool hands back never reaches the next. */
async function freshStage(): Promise<PoolProcessStage> {
  const stage = await poolProcessStage(emulators(), "iso", configText);
  stages.push(stage);
  return stage;
}

/** The pool process with the secrets in its environment; `prefix` runs it as another user. */
function startPool(
  { target }: PoolProcessStage,
  log: Log,
  env: Record<string, string> = {},
  prefix: string[] = [],
): PoolProcess {
  return startPoolProcess({
    command: [...prefix, process.execPath, "--import", "tsx", "functions/pool/main.ts"],
    baseEnv: { ...process.env, ...SECRETS, SKYFORGE_POOL_CONFIG: config, ...env },
    ...target,
    drainSeconds: 1,
    waitSeconds: 1,
    log,
  });
}

const settled = (engine: Engine, id: string) =>
  waitFor(
    async () => {
      const item = await getJob(engine.store, id);
      return item?.status === "done" || item?.lastError ? item : undefined;
    },
    `job ${id} to finish`,
    30_000,
  );

/** A child holding `mark` (busy for a while), then a probe on a second child while it holds it. */
async function holdAndProbe(
  { engine }: PoolProcessStage,
  mark: string,
): Promise<{ holder: { pid: number; uid: number }; probe: Probe }> {
  const hold = await engine.producer.enqueue({ kind: "prober", payload: { act: "hold", mark, ms: 30_000 } });
  await waitFor(
    async () => (await getJob(engine.store, hold.job.id))?.status === "running",
    "the holding job to run",
    30_000,
  );
  const { job } = await engine.producer.enqueue({
    kind: "prober",
    payload: { act: "probe", mark, secrets: Object.values(SECRETS) },
  });
  const done = await settled(engine, job.id);
  expect(done, done.lastError).toMatchObject({ status: "done" });
  const probe = JSON.parse(done.result ?? "{}") as Probe;
  const holder = probe.siblings[0] as { pid: number; uid: number };
  return { holder, probe };
}

describe("a pool child, under a pool that can switch users (root)", () => {
  it("runs as a uid of its own with no capabilities, and reads neither the pool's environment nor a sibling's memory", async ({
    annotate,
  }) => {
    const { lines, log } = poolOutputLog();
    const stage = await freshStage();
    const pool = startPool(stage, log);
    let probeHome = "";
    try {
      const mark = secret("payload");
      const { holder, probe } = await holdAndProbe(stage, mark);
      probeHome = probe.home;
      const poolPid = pool.pid as number;

      // Its own user: not the pool's, not its sibling's, from the configured range; no groups.
      expect(probe.siblings).toHaveLength(1);
      expect(probe.uid).not.toBe(uidOf(poolPid));
      expect(probe.uid).not.toBe(holder.uid);
      for (const uid of [probe.uid, holder.uid]) {
        expect(uid).toBeGreaterThanOrEqual(DEFAULT_CHILD_UIDS.firstUid);
        expect(uid).toBeLessThan(DEFAULT_CHILD_UIDS.firstUid + DEFAULT_CHILD_UIDS.uidCount);
      }
      expect(probe.gid).toBe(probe.uid);
      expect(probe.groups).toBe("");
      // No capability in any set, and no way to gain one (setuid binaries, file capabilities).
      expect(probe.caps).toEqual({
        CapInh: "0000000000000000",
        CapPrm: "0000000000000000",
        CapEff: "0000000000000000",
        CapBnd: "0000000000000000",
        CapAmb: "0000000000000000",
        NoNewPrivs: "1",
      });

      // The pool's environment (the task's credentials) and its memory: refused.
      expect(probe.parentEnviron).toBe("EACCES");
      expect(probe.parentMem).toBe("EACCES");
      // The sibling's memory (another job's payload) and environment: refused.
      expect(probe.siblings[0]).toMatchObject({ environ: "EACCES", mem: "EACCES", markFound: false });
      // No secret of the pool's anywhere the child can look.
      expect(probe.secretsFound).toEqual([]);

      // Only the allowlisted names, and the kind's own.
      const allowed = new Set<string>([...INHERITED_NAMES, ...Object.keys(KIND_ENV)]);
      expect(probe.envNames.filter((n) => !allowed.has(n))).toEqual([]);
      expect(probe.envNames).toEqual(expect.arrayContaining(["HOME", "PATH", "PROBER_SETTING", "TMPDIR"]));

      // HOME and TMPDIR: a directory of its own (0700) it can write; no one else's it can list or enter.
      expect(probe.tmpdir).toBe(probe.home);
      expect(probe).toMatchObject({ homeOwner: probe.uid, homeMode: "700", homeWritable: "read" });
      expect(probe.homesListing).toBe("EACCES");
      expect(probe.siblings[0]?.home).toBe("EACCES");
      expect(lines.filter((l) => l.includes("pool's own user"))).toEqual([]);
      await annotate(`pool uid ${uidOf(poolPid)}; children uids ${holder.uid} and ${probe.uid}`);
    } finally {
      await pool.stop();
    }
    // The homes go with the pool.
    expect(existsSync(dirname(probeHome))).toBe(false);
  }, 90_000);
});

describe("a pool that can't switch users (run as uid 65534)", () => {
  it("says once why, and runs its children as itself, with the allowlisted environment only", async () => {
    const { lines, log } = poolOutputLog();
    const stage = await freshStage();
    const pool = startPool(stage, log, {}, AS_UNPRIVILEGED);
    try {
      const { holder, probe } = await holdAndProbe(stage, secret("payload"));
      expect(uidOf(pool.pid as number)).toBe(UNPRIVILEGED);
      expect([probe.uid, holder.uid]).toEqual([UNPRIVILEGED, UNPRIVILEGED]);
      const said = lines.filter((l) => l.includes("pool children run as the pool's own user"));
      // Two children started; one line, naming what the pool lacks.
      expect(said).toHaveLength(1);
      expect(said[0]).toContain("lacks CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP");
      const allowed = new Set<string>([...INHERITED_NAMES, ...Object.keys(KIND_ENV)]);
      expect(probe.envNames.filter((n) => !allowed.has(n))).toEqual([]);
      // Its parent, the pool, runs as the same user here, so its environ is readable: it holds none
      // of the secrets either, for the pool takes the children's allowlist from the environment it
      // was started with (local/pool-process.ts), not all of it.
      expect(probe.parentEnviron).not.toBe("EACCES");
      expect(probe.secretsFound).toEqual([]);
    } finally {
      await pool.stop();
    }
  }, 90_000);

  it("refuses to start at all when its children must run as users of their own (the Fargate setting): exit 78", async () => {
    const { lines, log } = poolOutputLog();
    const pool = startPool(
      await freshStage(),
      log,
      { SKYFORGE_POOL_CHILD_USERS: "required" },
      AS_UNPRIVILEGED,
    );
    await refusal(lines, "the pool to refuse to start");
    expect(await pool.stop()).toBe(78);
    expect(pool.restarts).toBe(0);
    expect(lines.join("\n")).toContain("the pool must run its children as users of their own and can't");
  }, 60_000);
});
