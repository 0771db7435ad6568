import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { compileTypoFixture } from "../support/typo-fixture.ts";

/**
 * Names in the app are types: a misspelled queue, kind, schedule kind or rate-limit scope, or a
 * payload of the wrong shape, fails to compile. The fixture marks each line that must fail.
 */
const fixture = fileURLToPath(new URL("../fixtures/app-typos/typos.ts", import.meta.url));

test("every misspelled name in the fixture is a compile error, and nothing else is", () => {
  const { marked, failing } = compileTypoFixture(fixture);
  expect(marked.length).toBe(20);
  expect([...failing.keys()].sort((a, b) => a - b)).toEqual(marked);
  expect(failing.get(marked[0] as number)?.join()).toMatch(/"partner-apj".*"partner-api"/);
}, 60_000);
