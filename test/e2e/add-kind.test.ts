import { afterAll, beforeAll, expect, it } from "vitest";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { addKind, copyProject, type ProjectCopy } from "../support/project-copy.ts";
import { stackHttp } from "../support/stack-http.ts";

/**
 * The README's promise: adding a kind is one new file in app/kinds/ and one line in app/index.ts.
 * A copy of the project gets exactly that, and its `npm start` runs the new kind.
 */
const shoutKind = `import * as z from "zod";
import { defineKind } from "../define.ts";

export const shout = defineKind({
  name: "shout",
  payload: z.object({ text: z.string().min(1) }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ text }, ctx) => {
    ctx.log.info("shouting", { length: text.length });
    return { shouted: text.toUpperCase(), attempt: ctx.attempt };
  },
});
`;

let copy: ProjectCopy;
let stack: StackProcess;
let indexAfter: string;

beforeAll(async () => {
  copy = copyProject("skyforge-add-kind-");
  indexAfter = addKind(copy, "shout.ts", "shout", shoutKind);
  stack = await startStackProcess({}, copy.dir);
}, 90_000);

afterAll(async () => {
  await stack?.interrupt();
  copy?.remove();
});

const { call, untilStatus } = stackHttp(() => stack.url);

it("a new file in app/kinds/ and one line in app/index.ts make a kind npm start runs", async () => {
  expect(indexAfter.split("\n").length - copy.indexBefore.split("\n").length).toBe(1);
  expect(stack.output()).toMatch(/kinds\s+echo, shout, /);

  const created = await call("POST", "/jobs", { kind: "shout", payload: { text: "hello" } });
  expect(created.status).toBe(201);
  const done = await untilStatus(created.body.id, "done");
  expect(done).toMatchObject({ kind: "shout", queue: "default", result: { shouted: "HELLO", attempt: 1 } });

  // The kind's schema guards it like any other.
  const refused = await call("POST", "/jobs", { kind: "shout", payload: { text: "" } });
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe("validation_error");
});
