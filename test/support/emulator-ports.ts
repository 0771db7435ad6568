import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, request } from "node:http";
import type { AddressInfo } from "node:net";

/** A request to an emulator's port as the emulator-security tests send it, written out. */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The emulator endpoints `npm start` names in its banner. */
export function bannerEndpoints(output: string): { dynamodb: string; sqs: string } {
  const find = (label: string) => {
    const m = new RegExp(`^ +${label} +(http://127\\.0\\.0\\.1:\\d+)`, "m").exec(output);
    if (!m) throw new Error(`no ${label} endpoint in the banner:\n${output}`);
    return m[1] as string;
  };
  return { dynamodb: find("DynamoDB"), sqs: find("SQS") };
}

export const portOf = (url: string) => Number(new URL(url).port);

/**
 * SigV4 headers as the SDK sends them, naming `accessKeyId`. The signature is zeros: neither
 * emulator checks one, and the guard reads the credential's name only.
 */
export function sigV4(accessKeyId: string, service: string): Record<string, string> {
  return {
    "x-amz-date": "20260101T000000Z",
    authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/20260101/us-east-1/${service}/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`,
  };
}

/** One request to `endpoint`, sent as written: any Host (Node sends the given one), any method. */
export function rawCall(endpoint: string, r: RawRequest): Promise<RawAnswer> {
  const url = new URL(endpoint);
  return new Promise((done, fail) => {
    const req = request(
      { host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.headers },
      (res) => {
        let body = "";
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", fail);
    req.end(r.body);
  });
}

/**
 * The TCP ports on which a process of the group `pgid` listens, from /proc (Linux): the sockets
 * its processes hold, matched against the kernel's table of listening ones.
 */
export function listeningPorts(pgid: number): Set<number> {
  const inodes = new Set<string>();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After "(command)", which may hold spaces: state, ppid, pgrp, …
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) !== pgid) continue;
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (socket) inodes.add(socket[1] as string);
      }
    } catch {
      // A process (or a descriptor) that went away while being read holds no listening socket.
    }
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").trim().split("\n").slice(1)) {
      // sl, local address (hex ip:port), remote address, state (0A: LISTEN), …, inode (10th).
      const [, local = "", , state, , , , , , inode = ""] = line.trim().split(/\s+/);
      if (state === "0A" && inodes.has(inode)) ports.add(Number.parseInt(local.split(":")[1] ?? "", 16));
    }
  }
  return ports;
}

/** A loopback server answering an empty page on every path: the origin of an attacking page. */
export async function blankPageServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>some page</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
