import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineSplitter, splitLines } from "../../lib/pool/line-splitter.ts";

/** A splitter that records what it reports: lines, and overlong lines as their head and bound. */
function recorder(maxBytes: number | (() => number) = 1024) {
  const seen: (string | { overlong: string; maxBytes: number })[] = [];
  const splitter = new LineSplitter({
    maxBytes,
    onLine: (line) => seen.push(line),
    onOverlong: (head, max) => seen.push({ overlong: head.toString("utf8"), maxBytes: max }),
  });
  const push = (...chunks: (string | Buffer)[]) => {
    for (const c of chunks) splitter.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  };
  return { seen, splitter, push };
}

describe("LineSplitter", () => {
  it("ends lines at \\n only: U+2028, U+2029, a lone \\r, U+0085 and form feeds are text", () => {
    const { seen, push } = recorder();
    push('{"t":"a\u2028b\u2029c\rd\u0085e\ff"}\n{"t":"next"}\n');
    expect(seen).toEqual(['{"t":"a\u2028b\u2029c\rd\u0085e\ff"}', '{"t":"next"}']);
  });

  it("keeps a character whole when its UTF-8 bytes arrive in different chunks", () => {
    const bytes = Buffer.from("x\u2028y€z😀\n");
    const { seen, push } = recorder();
    // Every byte its own chunk: each multi-byte sequence is cut at every point.
    push(...[...bytes].map((b) => Buffer.from([b])));
    expect(seen).toEqual(["x\u2028y€z😀"]);
  });

  it("reads lines spread over chunks and several lines in one chunk", () => {
    const { seen, push } = recorder();
    push("al", "pha\nbe", "ta\n", "\ngam", "ma\ndelta\n");
    expect(seen).toEqual(["alpha", "beta", "", "gamma", "delta"]);
  });

  it('drops one "\\r" right before "\\n" (a child that ends lines "\\r\\n"), even split across chunks', () => {
    const { seen, push } = recorder();
    push("one\r\ntwo\r", "\nthree\r\r\n");
    expect(seen).toEqual(["one", "two", "three\r"]);
  });

  it("counts bytes after the last \\n as a last line when the stream ends (a child that exits without one)", () => {
    const { seen, push, splitter } = recorder();
    push('{"id":"a"}\n{"id":', '"b"}');
    expect(seen).toEqual(['{"id":"a"}']);
    splitter.end();
    expect(seen).toEqual(['{"id":"a"}', '{"id":"b"}']);
  });

  it("ends with no extra line when the stream ends right after a \\n", () => {
    const { seen, push, splitter } = recorder();
    push("a\n");
    splitter.end();
    expect(seen).toEqual(["a"]);
  });

  it("reports a line over the bound once, with its head, skips the rest of it and reads on", () => {
    const { seen, push } = recorder(8);
    push("12345678\n", "abcdef", "ghij", "klmnop", "qrs\nafter\n");
    expect(seen).toEqual(["12345678", { overlong: "abcdefgh", maxBytes: 8 }, "after"]);
  });

  it("reports an overlong line as soon as it passes the bound, not at its end: nothing more is held", () => {
    const { seen, push, splitter } = recorder(1024);
    push(Buffer.alloc(600, 0x61));
    expect(seen).toEqual([]);
    push(Buffer.alloc(600, 0x62));
    expect(seen).toEqual([{ overlong: "a".repeat(600) + "b".repeat(424), maxBytes: 1024 }]);
    for (let i = 0; i < 64; i++) push(Buffer.alloc(64 * 1024, 0x63));
    splitter.end();
    expect(seen).toHaveLength(1);
  });

  it("asks the bound again for each chunk, so a reader may allow a bigger line while it expects one", () => {
    let max = 4;
    const { seen, push } = recorder(() => max);
    push("abcd\n");
    max = 10;
    push("abcdefghij\n");
    max = 4;
    push("abcdef\n");
    expect(seen).toEqual(["abcd", "abcdefghij", { overlong: "abcd", maxBytes: 4 }]);
  });
});

describe("splitLines", () => {
  it("reads a stream's chunks and its last unterminated line at the end", async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const { promise, resolve } = Promise.withResolvers<void>();
    splitLines(stream, { maxBytes: 100, onLine: (l) => lines.push(l), onOverlong: () => {} });
    stream.on("close", () => resolve());
    const bytes = Buffer.from("é\u2028\nlast");
    stream.write(bytes.subarray(0, 1));
    stream.write(bytes.subarray(1, 3));
    stream.write(bytes.subarray(3));
    stream.end();
    await promise;
    expect(lines).toEqual(["é\u2028", "last"]);
  });
});
