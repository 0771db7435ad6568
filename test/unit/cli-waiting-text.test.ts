import { expect, it } from "vitest";
import { waitingText } from "../../cli/commands/durable.ts";

it("`jobs steps` names a race's wait as one, not as a sleep", () => {
  const until = "2026-12-02T03:00:00.000Z";
  expect(waitingText({ for: "any", until })).toMatch(/^the first branch of a race until /);
  expect(waitingText({ for: "sleep", until })).toMatch(/^sleep until /);
});
