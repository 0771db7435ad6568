import type { IncomingMessage } from "node:http";

/** What reading a request body came to. `aborted`: the client went away or broke the framing mid-body. */
export type BodyRead =
  | { kind: "ok"; body: Buffer }
  | { kind: "too_large"; bytes: number }
  | { kind: "aborted" };

/**
 * Reads a request body up to `maxBytes`. An oversized body is reported as soon as it is known (from
 * Content-Length, or once the cap is passed), so the answer goes out at once; the rest is read and
 * dropped, because a client still writing would otherwise see a reset instead of the answer.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.resolve({ kind: "too_large", bytes: declared });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        resolve({ kind: "too_large", bytes: size });
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve({ kind: "ok", body: Buffer.concat(chunks) }));
    req.on("error", () => resolve({ kind: "aborted" }));
    req.on("close", () => {
      if (!req.complete) resolve({ kind: "aborted" });
    });
  });
}
