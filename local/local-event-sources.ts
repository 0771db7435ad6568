import type {
  EventSourceControl,
  EventSourceIntent,
  EventSourceState,
} from "../lib/queue-control/event-source-control.ts";
import type { EventSourcePoller } from "./event-source-poller.ts";

/** The local stack's event sources: its pollers, controlled like Lambda's mappings. */
export class LocalEventSources implements EventSourceControl {
  private readonly pollers = new Map<string, EventSourcePoller>();

  add(queue: string, poller: EventSourcePoller): void {
    this.pollers.set(queue, poller);
  }

  async apply(queue: string, intent: EventSourceIntent): Promise<void> {
    this.pollers.get(queue)?.configure(intent);
  }

  /** Handler invocations a queue's poller has made (the bench prices Lambda requests by them). */
  invocations(queue: string): number {
    return this.pollers.get(queue)?.invocations ?? 0;
  }

  async describe(queue: string): Promise<EventSourceState | undefined> {
    const poller = this.pollers.get(queue);
    return poller ? { ...poller.describe(), state: "local" } : undefined;
  }
}
