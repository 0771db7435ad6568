import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { type DocRequest, docRequests, shownFields, shownKeys } from "../support/doc-curl.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The curl examples of the README and the guides, run as written against `npm start` (one stack for
 * the file, the blocks in document order): each request's answer must have the status and the
 * fields the document shows (an id or a time shown by example aside). A GET whose answer doesn't
 * match yet (a job still running) is asked again until it does, within a bound. Every block marked
 * `<!-- checked by test/e2e/doc-examples.test.ts … -->` in these documents runs here.
 */
const DOCS = [
  "README.md",
  "docs/guide/enqueue.md",
  "docs/guide/batch-kinds.md",
  "docs/guide/flow-control.md",
  "docs/guide/groups.md",
  "docs/guide/operations.md",
  "docs/guide/pool.md",
];
const MARK = "checked by test/e2e/doc-examples.test.ts";

// biome-ignore lint/suspicious/noExplicitAny: answers are JSON, searched key by key.
type Json = any;

/** The first value of `key` in `value`, depth first (the top level before what it holds). */
function find(value: Json, key: string): Json {
  if (value === null || typeof value !== "object") return undefined;
  if (!Array.isArray(value) && key in value) return value[key];
  for (const inner of Object.values(value)) {
    const found = find(inner, key);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Every value at `path` in `value`, an array's items each searched (a list's rows). */
function valuesAt(value: Json, path: readonly string[]): Json[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesAt(item, path));
  if (path.length === 0) return [value];
  if (value === null || typeof value !== "object" || !((path[0] as string) in value)) return [];
  return valuesAt(value[path[0] as string], path.slice(1));
}

/** Why an answer is not the one the document shows, or undefined when it is. */
function mismatch(request: DocRequest, status: number, body: Json): string | undefined {
  const { expect: shown } = request;
  if (shown.status !== undefined ? status !== shown.status : status < 200 || status > 299)
    return `status ${status}, the document shows ${shown.status ?? "2xx"}`;
  if (!shown.json) return undefined;
  for (const key of shownKeys(shown.json))
    if (find(body, key) === undefined) return `no "${key}" in ${JSON.stringify(body).slice(0, 300)}`;
  for (const [path, value] of shownFields(shown.json)) {
    // A quoted fragment (`"result":{…}`) may start below the answer's top: its path is found where it is.
    const found = valuesAt(body, path).concat(valuesAt(find(body, path[0] as string), path.slice(1)));
    if (!found.includes(value))
      return `"${path.join(".")}" is ${JSON.stringify(found[0])}, the document shows ${JSON.stringify(value)}`;
  }
  return undefined;
}

let stack: StackProcess;
beforeAll(async () => {
  stack = await startStackProcess({ SKYFORGE_TICK_SECONDS: "1" });
}, 60_000);
afterAll(() => stack?.interrupt());

/** What the answers so far gave, for the placeholders of later paths: each field's last string value. */
const seen = new Map<string, string>();
function remember(body: Json) {
  const walk = (value: Json) => {
    if (value === null || typeof value !== "object") return;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string") seen.set(k, v);
      else walk(v);
    }
  };
  walk(body);
  // `<id>` is the answer's own id, not the last id inside it.
  if (typeof body?.id === "string") seen.set("id", body.id);
}
const fill = (path: string) =>
  path
    .replace(/01[A-Z]…/g, () => seen.get("id") ?? "")
    .replace(/<(?:id|one of the ids)>/g, () => seen.get("id") ?? "")
    .replace(/<(\w+)>/g, (_, field: string) => seen.get(field) ?? "");

async function send(request: DocRequest): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${stack.url}${fill(request.path)}`, {
    method: request.method,
    headers: { "content-type": "application/json" },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

const runs = DOCS.flatMap((doc) =>
  docBlocks(doc)
    .filter((b) => b.marker?.startsWith(MARK))
    .map((b) => ({ name: `${doc}:${b.line}`, requests: docRequests(b.text) })),
);

describe("the documents' curl examples on npm start", () => {
  it("finds a block in each document it names", () => {
    for (const doc of DOCS)
      expect(
        runs.some((r) => r.name.startsWith(`${doc}:`)),
        doc,
      ).toBe(true);
  });

  it.each(runs)(
    "$name",
    async ({ requests }) => {
      expect(requests.length).toBeGreaterThan(0);
      for (const request of requests) {
        let last = "";
        const answer = await waitFor(
          async () => {
            const a = await send(request);
            last = mismatch(request, a.status, a.body) ?? "";
            // Only a read is asked again: a write's first answer is its answer.
            if (last && request.method === "GET") return undefined;
            return a;
          },
          `${request.method} ${request.path} to answer as documented`,
          30_000,
          200,
        ).catch((err: unknown) => {
          throw new Error(`${request.method} ${fill(request.path)}: ${last || String(err)}`);
        });
        expect(last, `${request.method} ${fill(request.path)}`).toBe("");
        remember(answer.body);
      }
    },
    90_000,
  );
});
