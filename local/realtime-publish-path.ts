import type { IncomingMessage, ServerResponse } from "node:http";
import { groupTopic, isTopicSegment, jobTopic, queueTopic } from "../lib/job/realtime-wire.ts";
import { emulatorRefusal, refuse } from "./emulator-guard.ts";
import { LOCAL_AWS } from "./emulator-servers.ts";

/**
 * The local broker's publish path for the stack's other processes (the pool's): the shape of IoT
 * Core's data-plane Publish (`POST /topics/<topic>`, the payload as the body), so the pool publishes
 * through the same publisher as on AWS (lib/realtime/iot-publisher.ts, its endpoint pointed here).
 * As the emulators, it answers only this project's SDK calls: no Origin (no web page), its own Host,
 * SigV4 with the local access key id. And as the pool's role on AWS, it publishes to the stack's
 * job, group and queue topics only.
 */
const MAX_PAYLOAD_BYTES = 128 * 1024;

export function isPublishRequest(req: IncomingMessage): boolean {
  return req.method === "POST" && (req.url ?? "").startsWith("/topics/");
}

export function servePublish(
  req: IncomingMessage,
  res: ServerResponse,
  own: { port: number; prefix: string },
  publish: (topic: string, payload: string) => Promise<void>,
): void {
  const refusal = emulatorRefusal(req, own.port, LOCAL_AWS.credentials.accessKeyId);
  if (refusal !== undefined) {
    refuse(req, res, refusal);
    return;
  }
  const topic = decodeURIComponent(new URL(req.url ?? "/", "http://local").pathname.slice("/topics/".length));
  if (!publishable(own.prefix, topic)) {
    refuse(
      req,
      res,
      `the stack's processes publish to ${own.prefix}/jobs/<id>, /groups/<id> and /queues/<name> only`,
    );
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_PAYLOAD_BYTES) req.destroy();
    else chunks.push(chunk);
  });
  req.on("end", () => {
    publish(topic, Buffer.concat(chunks).toString("utf8")).then(
      () => res.writeHead(200, { "content-type": "application/json" }).end("{}"),
      () => res.writeHead(503, { "content-type": "application/json" }).end('{"message":"not published"}'),
    );
  });
}

function publishable(prefix: string, topic: string): boolean {
  const id = topic.slice(topic.lastIndexOf("/") + 1);
  return (
    isTopicSegment(id) &&
    (topic === jobTopic(prefix, id) || topic === groupTopic(prefix, id) || topic === queueTopic(prefix, id))
  );
}
