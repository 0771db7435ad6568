import { marshall } from "@aws-sdk/util-dynamodb";
import { describe, expect, it } from "vitest";
import { itemBytes } from "../../bench/write-ledger.ts";
import { CLAIM_CHECK_BYTES, claimKey } from "../../lib/claims/claim-keys.ts";
import { stepPart } from "../../lib/claims/durable-bodies.ts";
import {
  JOURNAL_LIMITS,
  JournalBounds,
  MAX_STEP_NAMES_BYTES,
  MAX_STEPS_PER_JOB,
} from "../../lib/job/journal-bounds.ts";
import { INLINE_STEPS_BYTES, type StepRecord } from "../../lib/store/step-record.ts";

/** DynamoDB refuses an item over 400 KB, its attribute names included. */
const DYNAMODB_ITEM_LIMIT = 400 * 1024;

/**
 * The journal's documented bounds keep a job's item under DynamoDB's limit, sized here for the worst
 * case the bounds allow (the integration tests play the bounds themselves at a smaller size).
 */
describe("a journal at its bounds", () => {
  it("the documented bounds: 1 000 records, 128 KiB of names", () => {
    expect(JOURNAL_LIMITS).toEqual({ steps: 1_000, nameBytes: 128 * 1024 });
  });

  it("every record at the longest a step's can be, names filling their bytes and results their inline budget: under 400 KB", () => {
    const jobId = "01M8TAGMC3N07PM40E3QVCSQAA";
    const now = Date.parse("2026-12-02T00:00:00Z");
    const yearOn = now + 365 * 86_400_000;
    const nameBytes = Math.floor(MAX_STEP_NAMES_BYTES / MAX_STEPS_PER_JOB);
    // The inline budget spent in results just under the claim check's threshold, the rest in the bucket.
    const inline = Math.floor(INLINE_STEPS_BYTES / (CLAIM_CHECK_BYTES - 1));
    const steps: Record<string, StepRecord> = {};
    const bounds = new JournalBounds([]);
    for (let i = 0; i < MAX_STEPS_PER_JOB; i++) {
      const name = `${i}-`.padEnd(nameBytes, "x");
      expect(bounds.admit(name)).toBeUndefined();
      // A token step, the longest record: its token's id, its timeout and its data.
      const body =
        i < inline
          ? { v: "v".repeat(CLAIM_CHECK_BYTES - 1) }
          : { o: claimKey(jobId, stepPart(name, yearOn), now, yearOn) };
      steps[name] = { n: i, a: 25, t: now, until: yearOn, token: jobId, ...body };
    }
    expect(bounds.admit("one more")).toMatch(/at most 1000 steps/);
    const item = marshall({ pk: `job#${jobId}`, sk: "job", steps }, { removeUndefinedValues: true });
    // Room left for the job's other fields: its payload inline (under 8 KiB) and the rest.
    expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_LIMIT - 32 * 1024);
  });
});
