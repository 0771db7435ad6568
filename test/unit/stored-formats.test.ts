import { describe, expect, it } from "vitest";
import { StoredFormatTooNew } from "../../lib/errors.ts";
import { type JobItem, toJobView } from "../../lib/store/job-item.ts";
import { checkFormat, formatVersionOf, readsFormat, STORED_FORMATS } from "../../lib/store/stored-formats.ts";
import { newerMessageVersion, parseJobMessage } from "../../lib/transport/job-message.ts";

/** Stored formats' versions (docs/architecture.md §24): what a reader does with each version it meets. */

const job: JobItem = {
  pk: "job#01J0000000000000000000000A",
  sk: "job",
  id: "01J0000000000000000000000A",
  kind: "echo",
  queue: "default",
  status: "queued",
  attempts: 0,
  maxAttempts: 3,
  priority: "normal",
  createdAt: 1_700_000_000_000,
  runAt: 1_700_000_000_000,
  payload: "{}",
};

describe("stored format versions", () => {
  it("an item written before versions (no fv) is version 1, and reads", () => {
    expect(formatVersionOf(job)).toBe(1);
    expect(readsFormat("job", job)).toBe(true);
    expect(toJobView(job).id).toBe(job.id);
  });

  it("an item of the current version reads", () => {
    const stamped = { ...job, fv: STORED_FORMATS.job };
    expect(checkFormat("job", stamped, "job")).toBe(stamped);
    expect(toJobView(stamped).status).toBe("queued");
  });

  it("an item of a newer version is refused with StoredFormatTooNew naming it, never misread", () => {
    const newer = { ...job, fv: STORED_FORMATS.job + 1 };
    expect(readsFormat("job", newer)).toBe(false);
    expect(() => toJobView(newer)).toThrow(StoredFormatTooNew);
    expect(() => toJobView(newer)).toThrow(
      `job ${job.id} is in job format v${STORED_FORMATS.job + 1}; this skyforge reads job formats up to v${STORED_FORMATS.job}`,
    );
  });

  it("a message of a newer version is named as such, not taken for junk", () => {
    const body = JSON.stringify({ v: STORED_FORMATS.message + 1, id: "x" });
    expect(parseJobMessage(body)).toBeUndefined();
    expect(newerMessageVersion(body)).toBe(STORED_FORMATS.message + 1);
    for (const junk of ["not json", "null", '{"v":"2"}', '{"v":1}', "[2]"])
      expect(newerMessageVersion(junk), junk).toBeUndefined();
  });
});
