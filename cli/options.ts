import { InvalidArgumentError } from "commander";

/**
 * Parsers for option values, in commander's shape `(value, previous) => parsed`: a bad value throws
 * InvalidArgumentError, which commander reports naming the option ("option '--limit <n>' argument
 * 'x' is invalid. …"), and the CLI exits 2 before anything is sent.
 */

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = /^[+-]?\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected a whole number, got "${value}".`);
    if (n < min || n > max) throw new InvalidArgumentError(`expected ${min}..${max}, got ${n}.`);
    return n;
  };
}

/** A job's priority as the API takes it: 1..5, or "normal" (3) or "critical" (5; the pool grows for it). */
export function priority(value: string): number | "normal" | "critical" {
  if (value === "normal" || value === "critical") return value;
  if (/^[1-5]$/.test(value.trim())) return Number(value);
  throw new InvalidArgumentError(`expected 1..5, "normal" or "critical", got "${value}".`);
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError(`expected a positive number, got "${value}".`);
  }
  return n;
}

/** Any JSON value: `--payload '{"a":1}'`, `--payload 42`, `--payload '"text"'`. */
export function jsonValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (err) {
    throw new InvalidArgumentError(
      `not JSON (${(err as Error).message}). Quote it for your shell: '{"a":1}'.`,
    );
  }
}

/** An ISO 8601 time with its offset, as the API takes `runAt`. */
export function isoTime(value: string): string {
  return checkedIsoTime(value, "");
}

function checkedIsoTime(value: string, also: string): string {
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  if (!ok || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError(
      `expected an ISO time with its offset, like 2030-01-01T09:00:00Z${also}; got "${value}".`,
    );
  }
  return value;
}

/** An http(s) URL, without a trailing slash. */
export function endpointUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`not a URL: "${value}".`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidArgumentError(`expected an http:// or https:// URL, got "${value}".`);
  }
  return value.replace(/\/+$/, "");
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A time as an ISO 8601 time with its offset, or a duration ago (`90s`, `30m`, `1h`, `2d`): the
 * ISO time that long before now.
 */
export function timeOrAgo(now: () => number = Date.now) {
  return (value: string): string => {
    const ago = /^(\d+)([smhd])$/.exec(value.trim());
    if (!ago) return checkedIsoTime(value, ", or a duration ago: 90s, 30m, 1h, 2d");
    const at = new Date(now() - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS]);
    if (Number.isNaN(at.getTime())) throw new InvalidArgumentError(`too long ago: "${value}".`);
    return at.toISOString();
  };
}
