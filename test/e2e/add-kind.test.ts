import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { stackHttp } from "../support/stack-http.ts";

/**
 * The README's promise: adding a kind is one new file in app/kinds/ and one line in app/index.ts.
 * A copy of the project gets exactly that, and its `npm start` runs the new kind.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const copied = [
  "app",
  "lib",
  "functions",
  "local",
  "bench",
  "scripts",
  "children",
  "package.json",
  "tsconfig.json",
];

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

let dir: string;
let stack: StackProcess;
let indexBefore: string;
let indexAfter: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "skyforge-add-kind-"));
  for (const entry of copied) cpSync(join(root, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");

  writeFileSync(join(dir, "app/kinds/shout.ts"), shoutKind);
  indexBefore = readFileSync(join(dir, "app/index.ts"), "utf8");
  const echoLine = '  (await import("./kinds/echo.ts")).echo,\n';
  expect(indexBefore).toContain(echoLine);
  indexAfter = indexBefore.replace(echoLine, `${echoLine}  (await import("./kinds/shout.ts")).shout,\n`);
  writeFileSync(join(dir, "app/index.ts"), indexAfter);

  stack = await startStackProcess({}, dir);
}, 90_000);

afterAll(async () => {
  await stack?.interrupt();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const { call, untilStatus } = stackHttp(() => stack.url);

it("a new file in app/kinds/ and one line in app/index.ts make a kind npm start runs", async () => {
  expect(indexAfter.split("\n").length - indexBefore.split("\n").length).toBe(1);
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
