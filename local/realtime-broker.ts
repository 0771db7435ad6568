import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Aedes, type Client } from "aedes";
import { WebSocketServer } from "ws";
import { parseReplayTopic } from "../lib/job/realtime-wire.ts";
import { type Grant, grantFor, mayUse } from "../lib/realtime/policy.ts";
import { answerReplay, readReplayRequest } from "../lib/realtime/replay-answer.ts";
import type { RealtimePublisher, RealtimeService } from "../lib/services/realtime-service.ts";
import { mqttStreamOf } from "./mqtt-ws-stream.ts";
import { isPublishRequest, servePublish } from "./realtime-publish-path.ts";

/**
 * The local stack's realtime endpoint (docs/guide/realtime.md): MQTT over WebSocket, served by aedes
 * on loopback, the protocol IoT Core speaks on AWS, so the client is the same code in both places.
 * Its hooks enforce the one policy (lib/realtime/policy.ts) IoT Core's authorizer returns there: a
 * connection authenticates with its subscription token alone (a browser's page on any origin: no
 * cookie or ambient credential counts), subscribes to its grant's topics only, publishes only its
 * own replay requests, and is closed when its token expires. Anything but MQTT closes it (aedes's
 * parser refuses the frame).
 */
export interface RealtimeBroker {
  /** ws://127.0.0.1:<port>/mqtt */
  url: string;
  secret: string;
  prefix: string;
  /** Where the stack's other processes (the pool) publish, as to IoT's data plane (realtime-publish-path.ts). */
  publishUrl: string;
  /** The engine's publisher: straight into the broker. */
  publisher: RealtimePublisher;
  close(): Promise<void>;
}

export interface RealtimeBrokerOptions {
  host: string;
  port?: number;
  prefix: string;
  /** Where the token secret is kept across restarts; a fresh one per start without it. */
  dataDir?: string;
  now: () => number;
  /** The engine's realtime, read per request (a reload changes it). */
  realtime: () => RealtimeService;
}

const grants = new WeakMap<Client, Grant>();
/** Connections whose replay request is being answered. */
const replaying = new WeakSet<Client>();

export async function startRealtimeBroker(options: RealtimeBrokerOptions): Promise<RealtimeBroker> {
  const { prefix } = options;
  const secret = localSecret(options.dataDir);
  const timers = new Set<NodeJS.Timeout>();
  const broker = await Aedes.createBroker({
    authenticate: (client, _username, password, done) => {
      const answer = grantFor(password?.toString("utf8") ?? "", client.id, {
        secret,
        prefix,
        now: options.now(),
      });
      if (!answer.ok) {
        const error = Object.assign(new Error(answer.reason), { returnCode: 4 as const });
        return done(error, false);
      }
      grants.set(client, answer.grant);
      // The token's expiry ends the connection, as IoT Core's disconnectAfterInSeconds does.
      const timer = setTimeout(() => client.close(), Math.max(0, answer.grant.expiresAt - options.now()));
      timer.unref();
      timers.add(timer);
      client.conn.once?.("close", () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      done(null, true);
    },
    authorizeSubscribe: (client, subscription, done) => {
      const grant = grants.get(client);
      // A topic outside the grant is refused in the SUBACK (0x80); the connection stays.
      done(null, grant && mayUse(grant.subscribe, subscription.topic) ? subscription : null);
    },
    authorizePublish: (client, packet, done) => {
      const grant = client ? grants.get(client) : undefined;
      if (!client || !grant || !mayUse(grant.publish, packet.topic))
        return done(new Error(`not authorized to publish to ${packet.topic}`));
      const call = readReplayRequest(prefix, { topic: packet.topic, payload: packet.payload.toString() });
      if (!call) return done(new Error("not a replay request"));
      // One read-back at a time per connection (the client never asks twice at once): a flood of
      // requests costs the table one Query at a time, the rest are dropped.
      if (replaying.has(client)) return done(null);
      replaying.add(client);
      // Answered on the client's own reply topic; the request itself goes to no one else.
      void answerReplay(options.realtime(), prefix, call, { publish })
        .catch(() => client.close())
        .finally(() => replaying.delete(client));
      done(null);
    },
    // A replay request reaches no subscriber (none may subscribe to a replay topic anyway).
    authorizeForward: (_client, packet) => (parseReplayTopic(prefix, packet.topic) ? null : packet),
  });
  const publish = (topic: string, payload: string) =>
    new Promise<void>((resolve, reject) =>
      broker.publish(
        { cmd: "publish", topic, payload: Buffer.from(payload), qos: 0, retain: false, dup: false },
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  const http = createServer((req, res) => {
    // The pool's publishes (realtime-publish-path.ts); anything else is for MQTT over WebSocket.
    if (isPublishRequest(req)) return servePublish(req, res, { port: portOf(), prefix }, publish);
    res.writeHead(426, { "content-type": "text/plain" }).end("MQTT over WebSocket only\n");
  });
  const portOf = () => (http.address() as AddressInfo | null)?.port ?? 0;
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, options.host, () => resolve());
  });
  // Attached once the port is ours: ws re-emits its server's errors on itself, and a port in use,
  // emitted there with no listener, crashed `npm start` with a trace instead of its one-line answer.
  const wss = new WebSocketServer({ server: http, maxPayload: 256 * 1024 });
  wss.on("connection", (socket, req) => {
    broker.handle(mqttStreamOf(socket), req);
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `ws://${options.host}:${port}/mqtt`,
    publishUrl: `http://${options.host}:${port}`,
    secret,
    prefix,
    publisher: { publish },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The data directory's own token secret (0600), made on its first start; in memory without one. */
function localSecret(dataDir: string | undefined): string {
  if (!dataDir) return randomBytes(32).toString("base64url");
  const file = join(dataDir, "realtime-secret");
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    const secret = randomBytes(32).toString("base64url");
    writeFileSync(file, secret, { mode: 0o600, flag: "wx" });
    return secret;
  }
}
