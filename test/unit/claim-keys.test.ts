import { describe, expect, it } from "vitest";
import {
  CLAIMS_PREFIX,
  claimKey,
  claimLifecycleRules,
  eventDataKey,
  isClaimKeyOf,
  isDurableKeyOf,
  isEventDataKey,
  isResultKeyOf,
  needsClaimCheck,
  RETENTION_CLASSES_DAYS,
} from "../../lib/claims/claim-keys.ts";
import { jobMessageProblem, parseJobMessage } from "../../lib/transport/job-message.ts";

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

describe("a job's own keys", () => {
  const J = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
  const other = "01BX5ZZKBKACTAV9WEVGEMMVRZ";

  it("are exactly what claimKey gives it, under any retention class", () => {
    for (const days of [0, 6, 100, 40_000]) {
      expect(isClaimKeyOf(claimKey(J, "payload", now, now + days * DAY), J, "payload")).toBe(true);
      const result = claimKey(J, "result-3", now, now + days * DAY);
      expect(isResultKeyOf(result, J)).toBe(true);
      expect(isClaimKeyOf(result, J, "payload")).toBe(false);
    }
  });

  it("are never another job's, a variant spelling, or a key outside claims/", () => {
    for (const key of [
      `${CLAIMS_PREFIX}8d/${other}/payload`,
      `${CLAIMS_PREFIX}9d/${J}/payload`,
      `${CLAIMS_PREFIX}08d/${J}/payload`,
      `${CLAIMS_PREFIX}8d/${J}/payload/`,
      `${CLAIMS_PREFIX}8d/${J}/payload/../../${other}/payload`,
      `${CLAIMS_PREFIX}8d//${J}/payload`,
      `${CLAIMS_PREFIX}8d/${J}`,
      `/${CLAIMS_PREFIX}8d/${J}/payload`,
      `secrets/8d/${J}/payload`,
    ]) {
      expect(isClaimKeyOf(key, J, "payload"), key).toBe(false);
    }
    for (const key of [
      `${CLAIMS_PREFIX}8d/${other}/result-1`,
      `${CLAIMS_PREFIX}8d/${J}/result-01`,
      `${CLAIMS_PREFIX}8d/${J}/result-0`,
      `${CLAIMS_PREFIX}8d/${J}/payload`,
    ]) {
      expect(isResultKeyOf(key, J), key).toBe(false);
    }
  });

  it("are the only payloadObject a job message may name", () => {
    const message = (payloadObject: string) =>
      JSON.stringify({
        v: 1,
        id: J,
        kind: "k",
        queue: "q",
        maxAttempts: 1,
        priority: "normal",
        createdAt: now,
        runAt: now,
        payloadObject,
      });
    expect(parseJobMessage(message(`${CLAIMS_PREFIX}8d/${J}/payload`))?.payloadObject).toBe(
      `${CLAIMS_PREFIX}8d/${J}/payload`,
    );
    const foreign = message(`${CLAIMS_PREFIX}8d/${other}/payload`);
    expect(parseJobMessage(foreign)).toBeUndefined();
    expect(jobMessageProblem(foreign)).toMatch(
      /^payloadObject: payloadObject is not this job's own payload object/,
    );
    expect(jobMessageProblem("{")).toBe("not JSON");
  });
});

describe("an event's data key", () => {
  const digest = "n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg";
  const J = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

  it("is the data's digest under events/, in the class that outlives its keep time, and no job's key", () => {
    const key = eventDataKey(digest, now, now + 400 * DAY);
    expect(key).toBe(`${CLAIMS_PREFIX}545d/events/${digest}`);
    expect(isEventDataKey(key)).toBe(true);
    expect(isDurableKeyOf(key, J)).toBe(false);
    // A token's object, named by its completion: its job's own.
    expect(isDurableKeyOf(claimKey(J, `token-tok_${J}-abcdefghijkl`, now, now + DAY), J)).toBe(true);
  });

  it("is never a variant: another prefix, class, length or path", () => {
    for (const key of [
      `${CLAIMS_PREFIX}9d/events/${digest}`,
      `${CLAIMS_PREFIX}545d/events/${digest}x`,
      `${CLAIMS_PREFIX}545d/events/${digest.slice(1)}`,
      `${CLAIMS_PREFIX}545d/events/../${J}/payload`,
      `${CLAIMS_PREFIX}545d/${J}/${digest}`,
      `secrets/545d/events/${digest}`,
    ])
      expect(isEventDataKey(key), key).toBe(false);
  });
});
