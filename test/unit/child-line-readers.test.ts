import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MAX_JOB_LINE_BYTES, MAX_LINE_BYTES } from "../../lib/pool/child-protocol.ts";
import { STDERR_LINE_BYTES } from "../../lib/pool/warm-child.ts";

// The demo children's line readers, one per language, held to the rules the pool's splitter
// follows (line-splitter.test.ts): "\n" ends a line and nothing else, a "\r" before it is dropped,
// a line past the bound is refused, bytes after the last "\n" are a last line. And the bound they
// use, docs/guide/pool.md's too, is the one lib/pool/child-protocol.ts defines.

const CHILDREN = new URL("../../children/", import.meta.url);

interface NodeReader {
  MAX_LINE_BYTES: number;
  LineTooLongError: new (message: string) => Error;
  readLines(input: AsyncIterable<Buffer>, maxBytes?: number): AsyncGenerator<string>;
}
const nodeReaderPath: string = new URL("protocol-lines.mjs", CHILDREN).href;
const node = (await import(nodeReaderPath)) as NodeReader;

/** Everything Node's reader yields for these chunks, or the error it ends with. */
async function nodeRead(chunks: Buffer[], maxBytes: number): Promise<(string | { error: string })[]> {
  async function* input() {
    yield* chunks;
  }
  const out: (string | { error: string })[] = [];
  try {
    for await (const line of node.readLines(input(), maxBytes)) out.push(line);
  } catch (err) {
    if (!(err instanceof node.LineTooLongError)) throw err;
    out.push({ error: err.message });
  }
  return out;
}

const PY_DRIVER = `
import json, sys
sys.path.insert(0, sys.argv[1])
from digest import request_lines, LineTooLong, MAX_LINE_BYTES
if sys.argv[2] == "max":
    print(MAX_LINE_BYTES)
    sys.exit(0)
out = []
try:
    for line in request_lines(sys.stdin.buffer, int(sys.argv[2])):
        out.append(line)
except LineTooLong as err:
    out.append({"error": str(err)})
print(json.dumps(out))
`;

/** Everything children/digest.py's request_lines yields for these bytes on stdin (a real pipe). */
function pythonRead(bytes: Buffer, maxBytes: number | "max"): unknown {
  const run = spawnSync("python3", ["-c", PY_DRIVER, fileURLToPath(CHILDREN), String(maxBytes)], {
    input: bytes,
  });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr}`);
  return JSON.parse(run.stdout.toString("utf8"));
}

const readers = {
  "children/protocol-lines.mjs (Node)": async (chunks: Buffer[], max: number) => nodeRead(chunks, max),
  "children/digest.py (Python)": async (chunks: Buffer[], max: number) =>
    pythonRead(Buffer.concat(chunks), max),
};

/** Each byte its own chunk: a multi-byte character is cut at every point. */
const byteByByte = (s: string) => [...Buffer.from(s)].map((b) => Buffer.from([b]));

describe.each(Object.entries(readers))("%s", (_, read) => {
  it("ends lines at \\n only: U+2028, U+2029 and a lone \\r stay inside the line, whole across chunks", async () => {
    const lines = await read(byteByByte('{"t":"a\u2028b\u2029c\rd😀"}\n{"t":"e"}\n'), 1024);
    expect(lines).toEqual(['{"t":"a\u2028b\u2029c\rd😀"}', '{"t":"e"}']);
  });

  it('drops a "\\r" right before "\\n", and reads bytes after the last "\\n" as a last line', async () => {
    const lines = await read([Buffer.from('{"n":1}\r\n'), Buffer.from('{"n":'), Buffer.from("2}")], 1024);
    expect(lines).toEqual(['{"n":1}', '{"n":2}']);
  });

  it("refuses a line over the bound, and reads one exactly at it", async () => {
    const lines = await read([Buffer.from(`${"x".repeat(8)}\n${"y".repeat(9)}\nnever\n`)], 8);
    expect(lines).toEqual(["x".repeat(8), { error: "a request line is over 8 bytes" }]);
  });
});

describe("the bound the children and the pool guide give", () => {
  it("is lib/pool/child-protocol.ts's MAX_LINE_BYTES in both demo children", () => {
    expect(node.MAX_LINE_BYTES).toBe(MAX_LINE_BYTES);
    expect(pythonRead(Buffer.alloc(0), "max")).toBe(MAX_LINE_BYTES);
  });

  it("is the one docs/guide/pool.md's child protocol states, per job and per line", () => {
    const guide = readFileSync(new URL("../../docs/guide/pool.md", import.meta.url), "utf8");
    const section = guide
      .slice(guide.indexOf("## The child protocol"), guide.indexOf("## Add a child program"))
      .replace(/\s+/g, " ");
    const mib = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;
    expect(section).toContain(`at most ${mib(MAX_JOB_LINE_BYTES)}`);
    expect(section).toContain(`never over ${mib(MAX_LINE_BYTES)}`);
    expect(section).toContain(`over ${STDERR_LINE_BYTES / 1024} KiB is logged cut`);
    expect(section).toMatch(/U\+2028/);
  });
});
