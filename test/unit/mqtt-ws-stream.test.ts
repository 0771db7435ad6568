import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { mqttStreamOf } from "../../local/mqtt-ws-stream.ts";
import { deferred, withinMs } from "../support/wait.ts";

/** local/mqtt-ws-stream.ts: what the broker writes under one cork reaches the subscriber as one frame. */
let server: WebSocketServer | undefined;
afterEach(async () => {
  for (const client of server?.clients ?? []) client.terminate();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

it("buffers written under one cork go as one frame holding them all, in order", async () => {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  server = wss;
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  wss.on("connection", (socket) => {
    const stream = mqttStreamOf(socket);
    // As mqtt-packet writes a packet: corked, in pieces, uncorked on the next tick.
    stream.cork();
    stream.write(Buffer.from([0x30, 0x07]));
    stream.write(Buffer.from("topic"));
    stream.write("hi");
    process.nextTick(() => stream.uncork());
    // A second packet, after the first has gone: a frame of its own.
    setImmediate(() => stream.write(Buffer.from("next")));
  });
  const { port } = wss.address() as AddressInfo;
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  const frames: Buffer[] = [];
  const two = deferred();
  client.on("message", (data: Buffer) => {
    frames.push(data);
    if (frames.length === 2) two.resolve();
  });
  await withinMs(two.promise, "two frames", 10_000);
  client.close();
  expect(frames.map((f) => [...f])).toEqual([
    [0x30, 0x07, ...Buffer.from("topichi")],
    [...Buffer.from("next")],
  ]);
});
