// How a Node child reads the pool's requests: one JSON request a line, a line ending at "\n" and
// nowhere else. Not node:readline, which also ends a line at "\r", U+2028 and U+2029: those may
// sit raw inside a JSON string (the pool escapes them, but a child shouldn't count on it), and
// cutting there would tear a request in two. Plain JavaScript, so any Node version runs it.

/**
 * The longest request line the pool writes (lib/pool/child-protocol.ts MAX_LINE_BYTES: a batch
 * call of many items; one job's line is at most 4 MiB). A longer one can't be a request.
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

export class LineTooLongError extends Error {}

/**
 * The lines of `input`, decoded as UTF-8 once whole (a character split across chunks stays whole),
 * without their "\n" or a "\r" right before it. Bytes after the last "\n" at the end of the input
 * are a last line. Throws LineTooLongError, holding no more than `maxBytes`, for a longer line.
 */
export async function* readLines(input, maxBytes = MAX_LINE_BYTES) {
  let parts = [];
  let size = 0;
  const take = () => {
    const line = Buffer.concat(parts, size);
    parts = [];
    size = 0;
    return line;
  };
  for await (const chunk of input) {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      if (size + piece.length > maxBytes) throw new LineTooLongError(`a request line is over ${maxBytes} bytes`);
      parts.push(piece);
      size += piece.length;
      if (newline === -1) break;
      let line = take();
      if (line.at(-1) === 0x0d) line = line.subarray(0, -1);
      yield line.toString("utf8");
      start = newline + 1;
    }
  }
  if (size > 0) yield take().toString("utf8");
}
