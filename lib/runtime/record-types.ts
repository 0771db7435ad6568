import type { Engine } from "../services/engine-services.ts";

/** What a record processor uses of the engine (the worker and the pool hand it theirs). */
export type WorkerDeps = Pick<
  Engine,
  | "store"
  | "claims"
  | "transport"
  | "producer"
  | "groups"
  | "durable"
  | "flow"
  | "coalesce"
  | "registry"
  | "queues"
  | "clock"
  | "metrics"
  | "log"
> &
  Partial<Pick<Engine, "running" | "random" | "rateLimiter" | "runner" | "realtime">>;

export interface InboundRecord {
  messageId: string;
  body: string;
  receiptHandle: string;
  /** SQS's ApproximateReceiveCount: the attempt of a lane that takes no claim (docs/architecture.md §16). */
  receiveCount?: number;
}

/** true: the message is finished with (delete it); false: leave it on the queue (batch item failure). */
export type Ack = boolean;
