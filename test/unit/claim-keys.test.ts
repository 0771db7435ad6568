import { describe, expect, it } from "vitest";
import {
  CLAIMS_PREFIX,
  claimKey,
  claimLifecycleRules,
  needsClaimCheck,
  RETENTION_CLASSES_DAYS,
} from "../../lib/claims/claim-keys.ts";

const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 23);

describe("claim keys", () => {
  it("name the job and the part under the shortest retention class that outlives the keep time", () => {
    expect(claimKey("J1", "payload", now, now + 7 * DAY)).toBe(`${CLAIMS_PREFIX}8d/J1/payload`);
    // A day of margin: the rule counts from the object's write, S3 rounds to the next midnight.
    expect(claimKey("J1", "result-2", now, now + 7 * DAY + 1)).toBe(`${CLAIMS_PREFIX}10d/J1/result-2`);
    expect(claimKey("J1", "payload", now, now - DAY)).toBe(`${CLAIMS_PREFIX}1d/J1/payload`);
    // Beyond the last class (a runAt a century out) the longest class is all there is.
    expect(claimKey("J1", "payload", now, now + 50_000 * DAY)).toBe(`${CLAIMS_PREFIX}36500d/J1/payload`);
  });

  it("never keep an object shorter than asked, nor past a week more than half as long again", () => {
    for (let days = 0; days <= 3640; days++) {
      const key = claimKey("J", "payload", now, now + days * DAY);
      const kept = Number(/^claims\/(\d+)d\//.exec(key)?.[1]);
      expect(kept, `${days} days`).toBeGreaterThanOrEqual(days + 1);
      if (days >= 7) expect(kept / (days + 1), `${days} days`).toBeLessThanOrEqual(1.5);
    }
  });

  it("have one lifecycle rule per class, each expiring its own prefix", () => {
    const rules = claimLifecycleRules();
    expect(rules.map((r) => r.expirationDays)).toEqual([...RETENTION_CLASSES_DAYS]);
    for (const r of rules) expect(r.prefix).toBe(`${CLAIMS_PREFIX}${r.expirationDays}d/`);
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
  });

  it("send a body to the bucket only past 8 KiB of UTF-8", () => {
    expect(needsClaimCheck("x".repeat(8192))).toBe(false);
    expect(needsClaimCheck("x".repeat(8193))).toBe(true);
    expect(needsClaimCheck("é".repeat(4097))).toBe(true);
  });
});
