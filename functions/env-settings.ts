import { ConfigError } from "../lib/errors.ts";
import type { HandlerSettings } from "../lib/handlers/handler-settings.ts";

/**
 * The environment readers that need no app: each value checked when read (a bad one is a
 * ConfigError naming its variable). engine-config.ts reads the rest with the app it is given.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** A value that must be set; an empty one counts as unset. */
export function requiredSetting(env: Env, name: string): string {
  const value = env[name];
  if (!value) throw new ConfigError(`${name} is not set`);
  return value;
}

export interface NumberRange {
  /** Used when the variable is unset or empty. */
  fallback: number;
  min: number;
  max?: number;
  /** Whole numbers only. */
  whole?: boolean;
  /** The smallest value is excluded (a positive number: min 0, above true). */
  above?: boolean;
}

/** A number within its range, or the fallback when unset; anything else is a ConfigError naming the variable. */
export function numberSetting(env: Env, name: string, range: NumberRange): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return range.fallback;
  const value = Number(raw);
  const inRange =
    Number.isFinite(value) &&
    (range.above ? value > range.min : value >= range.min) &&
    (range.max === undefined || value <= range.max) &&
    (!range.whole || Number.isInteger(value));
  if (inRange) return value;
  const what = range.whole ? "a whole number" : "a number";
  const lower = range.above ? `above ${range.min}` : `from ${range.min}`;
  const upper = range.max === undefined ? (range.above ? "" : " up") : ` to ${range.max}`;
  throw new ConfigError(`${name} must be ${what} ${lower}${upper}, got "${raw}"`);
}

/**
 * The scheduled handlers' settings: SKYFORGE_TICK_SECONDS (60, EventBridge Scheduler's rate; the
 * fault suite shortens it) and SKYFORGE_CLEANUP_SWEEP_ITEMS (0: DynamoDB's TTL removes ended jobs,
 * so the sweep, which reads the table, is opt-in).
 */
export function handlerSettingsFromEnv(env: Env = process.env): HandlerSettings {
  const tickSeconds = numberSetting(env, "SKYFORGE_TICK_SECONDS", { fallback: 60, min: 0, above: true });
  return {
    tickMs: tickSeconds * 1000,
    cleanupSweepItemsPerRun: numberSetting(env, "SKYFORGE_CLEANUP_SWEEP_ITEMS", {
      fallback: 0,
      min: 0,
      whole: true,
    }),
  };
}

/** The highest PORT the local stack takes: its realtime broker listens on the next one. */
export const MAX_LOCAL_PORT = 65534;

/** What `npm start` reads (scripts/start.ts): its port, the ticks' period, where it keeps data, and its log level. */
export interface LocalStackSettings {
  port: number;
  tickSeconds: number;
  /** SKYFORGE_DATA_DIR, when set; the caller's default otherwise. */
  dataDir: string | undefined;
  logLevel: (typeof LOG_LEVELS)[number];
}

/** Powertools' levels; LOG_LEVEL picks one for the local stack (WARN by default). */
const LOG_LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "CRITICAL", "SILENT"] as const;

export function localStackSettingsFromEnv(env: Env = process.env): LocalStackSettings {
  const level = (env.LOG_LEVEL ?? "WARN").toUpperCase();
  const logLevel = LOG_LEVELS.find((l) => l === level);
  if (!logLevel)
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${env.LOG_LEVEL}"`);
  return {
    port: numberSetting(env, "PORT", { fallback: 3000, min: 0, max: MAX_LOCAL_PORT, whole: true }),
    tickSeconds: handlerSettingsFromEnv(env).tickMs / 1000,
    dataDir: env.SKYFORGE_DATA_DIR || undefined,
    logLevel,
  };
}
