import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { compileTypoFixture } from "../support/typo-fixture.ts";

/**
 * The client is typed by the app: a wrong payload, an unknown kind or a misspelled queue (or status,
 * or priority) fails to compile, through createClient<typeof app> and createClient({ app }) alike.
 * The fixture marks each line that must fail.
 */
const fixture = fileURLToPath(new URL("../fixtures/client-typos/typos.ts", import.meta.url));

test("every typo in the fixture is a compile error, and nothing else is", () => {
  const { lines, marked, failing } = compileTypoFixture(fixture);
  expect(marked.length).toBe(22);
  expect([...failing.keys()].sort((a, b) => a - b)).toEqual(marked);
  const messageAt = (needle: string) => failing.get(lines.findIndex((l) => l.includes(needle)) + 1)?.join();
  expect(messageAt(`enqueue("flakey"`)).toMatch(
    /'"flakey"' is not assignable to parameter of type 'KindName</,
  );
  expect(messageAt(`kind: "flakey" }`)).toMatch(/"flakey".*Did you mean '"flaky"'/);
  expect(messageAt(`pause("defualt")`)).toMatch(/"defualt".*'"default" \| "batch" \| "heavy"'/);
  expect(messageAt(`{ failTimes: "2" }`)).toMatch(/'string' is not assignable to type 'number'/);
}, 60_000);
