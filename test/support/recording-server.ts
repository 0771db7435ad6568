import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { forFile } from "./for-file.ts";

const LOOPBACK = "127.0.0.1";

/** One request as it arrived, its body read whole. */
export interface ReceivedRequest {
  method: string;
  target: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RecordingServer {
  url: string;
  /** Every request so far, oldest first. */
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that records each request and answers it 200 with the JSON text `answer`
 * gives for it: a stand-in for the API or its function, whose requests a test reads back.
 */
export async function recordingServer(
  answer: (request: ReceivedRequest) => string,
): Promise<RecordingServer> {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const request = { method: req.method ?? "", target: req.url ?? "", headers: req.headers, body };
      received.push(request);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answer(request));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  return {
    url: `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A recording server for the whole file, started before its first test and closed after its last. */
export function recordingServerForFile(answer: (request: ReceivedRequest) => string): () => RecordingServer {
  return forFile(
    "the recording server",
    () => recordingServer(answer),
    (server) => server.close(),
  );
}
