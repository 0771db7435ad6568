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

  async describe(queue: string): Promise<EventSourceState | undefined> {
    const poller = this.pollers.get(queue);
    return poller ? { ...poller.describe(), state: "local" } : undefined;
  }
}
