import { type IncomingMessage, type Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { foreignRequest } from "../http/request-guard.ts";

/**
 * The emulators (dynalite; fauxqs for SQS and S3) check no signature and, left alone, answer any web
 * page the developer has open: dynalite grants every Origin CORS access, fauxqs takes browser form
 * uploads and a text/plain `POST ?delete`, and both answer a rebinding Host. Their only rightful
 * callers are AWS SDK clients of this project, which send no Origin, a Host of the loopback endpoint
 * they were given, and SigV4 with the local access key id. Anything else is refused with 403 before
 * the emulator sees the request, so it has no effect at all.
 *
 * The secret is public (it is in the source): this keeps out browsers and stray real credentials, not
 * another user of the machine, who can reach loopback anyway.
 */
export function guardEmulator(server: Server, accessKeyId: string): void {
  const emit = server.emit;
  server.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (typeof event === "string" && REQUEST_EVENTS.has(event)) {
      const [req, reply] = args as [IncomingMessage, ServerResponse | Duplex];
      const address = server.address() as AddressInfo | null; // null: closed meanwhile, so no port is its own
      const refusal = emulatorRefusal(req, address?.port ?? 0, accessKeyId);
      if (refusal !== undefined) {
        refuse(req, reply, refusal);
        return true;
      }
    }
    return emit.apply(this, [event, ...args] as Parameters<Server["emit"]>);
  } as Server["emit"];
}

/*
 * Every event through which node:http hands a request to its listeners. The emit itself is taken
 * over, not the listeners present at this moment, so a listener the emulator adds later (or a
 * future version's `upgrade` handler) is behind the guard too. Node destroys `upgrade` and `connect`
 * sockets that nobody listens for, without emitting anything.
 */
const REQUEST_EVENTS = new Set(["request", "checkContinue", "checkExpectation", "upgrade", "connect"]);

/** Why this request is not one of the project's own SDK calls, or undefined when it is. */
export function emulatorRefusal(req: IncomingMessage, port: number, accessKeyId: string): string | undefined {
  // Only a browser sends Origin, preflights included; the SDK never does.
  if (req.headers.origin !== undefined) return "a request from a web page (it carries Origin) is refused";
  if (req.headers.host === undefined) return "a request without a Host is refused";
  const foreign = foreignRequest(req, { port });
  if (foreign !== undefined) return foreign;
  const credential = `AWS4-HMAC-SHA256 Credential=${accessKeyId}/`;
  if (!req.headers.authorization?.startsWith(credential))
    return `only requests signed (SigV4, Authorization header) with the local access key id "${accessKeyId}" are answered`;
  return undefined;
}

export function refuse(req: IncomingMessage, reply: ServerResponse | Duplex, reason: string): void {
  const body = JSON.stringify({ __type: "AccessDeniedException", message: reason });
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-amzn-errortype": "AccessDeniedException",
    // The connection ends with this answer: no later request rides on a refused one.
    connection: "close",
  };
  if (reply instanceof ServerResponse) {
    req.resume(); // its body is read into nothing, so the caller gets the 403 rather than a reset
    reply.writeHead(403, headers);
    reply.end(body);
    return;
  }
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  reply.end(`HTTP/1.1 403 Forbidden\r\n${head.join("")}\r\n${body}`);
}
