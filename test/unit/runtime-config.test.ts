import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { engineFromEnv, poolProcessFromEnv, workerQueueFromEnv } from "../../functions/engine-config.ts";
import {
  handlerSettingsFromEnv,
  localStackSettingsFromEnv,
  requiredSetting,
} from "../../functions/env-settings.ts";
import { ConfigError } from "../../lib/errors.ts";

/** The functions' one checked reading of the environment: a bad value is a ConfigError naming its variable. */
function configError(read: () => unknown): ConfigError {
  try {
    read();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("no ConfigError");
}

/** Each row: a reader given `variable` = `value` alone is refused with "`variable` must be `rule`, got "`value`"". */
function expectRefused(rows: [(env: Record<string, string>) => unknown, string, string, string][]): void {
  for (const [read, variable, value, rule] of rows) {
    expect(configError(() => read({ [variable]: value })).message).toBe(
      `${variable} must be ${rule}, got "${value}"`,
    );
  }
}

const engineEnv = {
  SKYFORGE_TABLE: "skyforge-jobs",
  SKYFORGE_CLAIMS_BUCKET: "skyforge-claims",
  SKYFORGE_QUEUE_URLS: JSON.stringify({ default: "https://sqs.example/default" }),
};

describe("functions' configuration", () => {
  test("unset settings take their defaults", () => {
    expect(handlerSettingsFromEnv({})).toEqual({ tickMs: 60_000, cleanupSweepItemsPerRun: 0 });
    const pool = poolProcessFromEnv({});
    expect(pool).toMatchObject({ drainSeconds: 25, metricsEverySeconds: 60 });
    expect(pool.runner).toMatchObject({ waitSeconds: 20, childUsers: { separate: "preferred" } });
  });

  test("set settings are read as numbers", () => {
    const env = { SKYFORGE_TICK_SECONDS: "5", SKYFORGE_CLEANUP_SWEEP_ITEMS: "5000" };
    expect(handlerSettingsFromEnv(env)).toEqual({ tickMs: 5_000, cleanupSweepItemsPerRun: 5_000 });
    expect(
      poolProcessFromEnv({ SKYFORGE_POOL_DRAIN_SECONDS: "0", SKYFORGE_POOL_WAIT_SECONDS: "1" }),
    ).toMatchObject({
      drainSeconds: 0,
      runner: { waitSeconds: 1 },
    });
  });

  test("a missing required value names its variable", () => {
    expect(configError(() => workerQueueFromEnv(app, {})).message).toBe("SKYFORGE_WORKER_QUEUE is not set");
    expect(configError(() => requiredSetting({ SKYFORGE_TABLE: "" }, "SKYFORGE_TABLE")).message).toBe(
      "SKYFORGE_TABLE is not set",
    );
    const { SKYFORGE_TABLE: _, ...noTable } = engineEnv;
    expect(configError(() => engineFromEnv(app, "test", {}, noTable)).message).toBe(
      "SKYFORGE_TABLE is not set",
    );
  });

  test("a non-numeric value names its variable and the value", () => {
    expectRefused([
      [handlerSettingsFromEnv, "SKYFORGE_TICK_SECONDS", "soon", "a number above 0"],
      [poolProcessFromEnv, "SKYFORGE_POOL_DRAIN_SECONDS", "25s", "a number from 0 up"],
    ]);
  });

  test("an out-of-range value names its variable and the range", () => {
    expectRefused([
      [poolProcessFromEnv, "SKYFORGE_POOL_WAIT_SECONDS", "30", "a whole number from 0 to 20"],
      [handlerSettingsFromEnv, "SKYFORGE_CLEANUP_SWEEP_ITEMS", "-1", "a whole number from 0 up"],
      [handlerSettingsFromEnv, "SKYFORGE_TICK_SECONDS", "0", "a number above 0"],
      [poolProcessFromEnv, "SKYFORGE_POOL_METRICS_SECONDS", "-5", "a number above 0"],
    ]);
  });

  test("a worker queue the app doesn't declare, and a queue map that isn't one, are refused by name", () => {
    expect(configError(() => workerQueueFromEnv(app, { SKYFORGE_WORKER_QUEUE: "nowhere" })).message).toBe(
      "SKYFORGE_WORKER_QUEUE names an undeclared queue: nowhere",
    );
    const declared = app.queues[0]?.name as string;
    expect(workerQueueFromEnv(app, { SKYFORGE_WORKER_QUEUE: declared })).toBe(declared);
    const badMap = { ...engineEnv, SKYFORGE_QUEUE_URLS: "default=https://sqs.example/default" };
    expect(configError(() => engineFromEnv(app, "test", {}, badMap)).message).toMatch(
      /^SKYFORGE_QUEUE_URLS must be a JSON object of names to strings/,
    );
  });

  test("SKYFORGE_API_URL: the base of durable jobs' token urls (a trailing slash dropped); unset, none; not an http(s) URL, refused by name", () => {
    const base = "https://abc123.execute-api.us-east-1.amazonaws.com";
    expect(
      engineFromEnv(app, "test", {}, { ...engineEnv, SKYFORGE_API_URL: `${base}/` }).engine.tokenUrlBase,
    ).toBe(base);
    expect(engineFromEnv(app, "test", {}, engineEnv).engine.tokenUrlBase).toBeUndefined();
    for (const bad of ["execute-api.example", "ftp://api.example", `${base}?secret=x`])
      expect(
        configError(() => engineFromEnv(app, "test", {}, { ...engineEnv, SKYFORGE_API_URL: bad })).message,
      ).toBe(`SKYFORGE_API_URL must be an http(s) URL without a query, got "${bad}"`);
  });

  test("npm start's settings: defaults, its values read and checked, a bad one refused by name", () => {
    expect(localStackSettingsFromEnv({})).toEqual({
      port: 3000,
      tickSeconds: 60,
      dataDir: undefined,
      logLevel: "WARN",
    });
    expect(
      localStackSettingsFromEnv({
        PORT: "0",
        SKYFORGE_TICK_SECONDS: "1",
        SKYFORGE_DATA_DIR: "/d",
        LOG_LEVEL: "debug",
      }),
    ).toEqual({ port: 0, tickSeconds: 1, dataDir: "/d", logLevel: "DEBUG" });
    expectRefused([
      [localStackSettingsFromEnv, "PORT", "70000", "a whole number from 0 to 65534"],
      [localStackSettingsFromEnv, "SKYFORGE_TICK_SECONDS", "-1", "a number above 0"],
      [
        localStackSettingsFromEnv,
        "LOG_LEVEL",
        "loud",
        "one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT",
      ],
    ]);
  });
});
