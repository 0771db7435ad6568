import { expect, it } from "vitest";
import { MAX_STREAM_POSITIONS, rememberPosition } from "../../lib/realtime/stream-writer.ts";

/** lib/realtime/stream-writer.ts: the streams' positions of runs that end elsewhere don't pile up. */
it("keeps each run's last number per stream, and at most MAX_STREAM_POSITIONS runs, the longest idle first out", () => {
  const positions = new Map<string, Record<string, number>>();
  rememberPosition(positions, "job-0", "tokens", 1);
  rememberPosition(positions, "job-0", "log", 1);
  rememberPosition(positions, "job-0", "tokens", 2);
  expect(positions.get("job-0")).toEqual({ tokens: 2, log: 1 });
  // Runs whose end never comes here (their lease lost): the map stays bounded.
  for (let i = 1; i <= MAX_STREAM_POSITIONS + 5; i++) rememberPosition(positions, `job-${i}`, "tokens", 1);
  expect(positions.size).toBe(MAX_STREAM_POSITIONS);
  // job-0 wrote longest ago: it went first; the newest are kept.
  expect(positions.has("job-0")).toBe(false);
  expect(positions.has(`job-${MAX_STREAM_POSITIONS + 5}`)).toBe(true);
  // A run still writing moves to the back, so an old but busy run isn't the next to go.
  rememberPosition(positions, "job-6", "tokens", 2);
  rememberPosition(positions, "job-new", "tokens", 1);
  expect(positions.has("job-6")).toBe(true);
  expect(positions.has("job-7")).toBe(false);
});
