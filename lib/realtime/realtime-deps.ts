import type { Clock } from "../clock.ts";
import type { Log } from "../observability/log.ts";
import type { JobMetrics } from "../observability/metrics.ts";
import type { StoreContext } from "../store/context.ts";
import type { PublishQueue } from "./publish-queue.ts";

/** What realtime uses (lib/engine.ts wires it). */
export interface RealtimeDeps {
  store: StoreContext;
  clock: Clock;
  metrics: JobMetrics;
  log: Log;
  queue: PublishQueue;
  /** Whether a publisher is configured; without one, no status or step event is built at all. */
  publishing: boolean;
  /** Each running job's streams' last sequence numbers in this process, told with its end. */
  positions: Map<string, Record<string, number>>;
  /** The declared queues: a queue token is minted only for one of them. */
  queues: readonly { name: string }[];
  /** Every topic of this stack starts with it (one IoT endpoint serves a whole account and region). */
  prefix: string;
  /** Signs subscription tokens; undefined when realtime is not configured (no subscriptions then). */
  secret: RealtimeSecret | undefined;
  /** Where subscribers connect (wss://… on AWS, ws://127.0.0.1:… locally), read when a token is minted. */
  url: () => string | undefined;
}

/** The token secret: the value (locally), or its reader (on AWS: the SecureString, read on first need). */
export type RealtimeSecret = string | (() => Promise<string>);
