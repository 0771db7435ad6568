// The default export: MQTT.js's browser build has no named ones, its Node build both.
import mqtt, { type MqttClient } from "mqtt";

/**
 * One subscriber's MQTT-over-WebSocket connection (docs/guide/realtime.md), shared by `subscribe`
 * (a job's events) and `tailQueue` (a queue's): the token is the password, the connection is never
 * reopened by MQTT.js itself (a caller resumes with its own cursor), and every message lands in an
 * Inbox the caller reads in order.
 */
export function openConnection(
  url: string,
  token: string,
  clientId: string,
  inbox: Inbox,
  closedMessage: string,
): MqttClient {
  const client = mqtt.connect(url, {
    clientId,
    username: "token",
    password: token,
    protocolVersion: 4,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 15_000,
  });
  client.on("message", (topic, payload) => inbox.push({ topic, text: payload.toString() }));
  client.on("error", (error) => inbox.fail(error));
  client.on("close", () => inbox.fail(new Error(closedMessage)));
  return client;
}

export function connected(client: MqttClient): Promise<void> {
  return new Promise((resolve, reject) => {
    client.once("connect", () => resolve());
    client.once("error", reject);
    client.once("close", () => reject(new Error("subscribe: the endpoint refused the connection")));
  });
}

export function randomHex(bytes: number): string {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(bytes)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");
}

/** Messages in arrival order for one async reader; a failure or finish ends its reads. */
export class Inbox {
  private readonly items: { topic: string; text: string }[] = [];
  private waiter: (() => void) | undefined;
  private error: Error | undefined;
  private done = false;

  push(item: { topic: string; text: string }) {
    this.items.push(item);
    this.wake();
  }
  fail(error: Error) {
    this.error ??= error;
    this.wake();
  }
  finish() {
    this.done = true;
    this.wake();
  }
  async next(): Promise<{ topic: string; text: string } | undefined> {
    for (;;) {
      if (this.done) return undefined;
      const item = this.items.shift();
      if (item) return item;
      if (this.error) throw this.error;
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }
  private wake() {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}
