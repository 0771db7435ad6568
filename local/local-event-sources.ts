import type { QueueDeclaration } from "../lib/declarations/queue-declaration.ts";
import type {
  EventSourceControl,
  EventSourceIntent,
  EventSourceState,
} from "../lib/queue-control/event-source-control.ts";
import { effectiveSettings } from "../lib/queue-control/settings.ts";
import type { StoreContext } from "../lib/store/context.ts";
import { getQueueState } from "../lib/store/queue-state.ts";
import type { EventSourcePoller } from "./event-source-poller.ts";

/** The local stack's event sources: its pollers, controlled like Lambda's mappings. */
export class LocalEventSources implements EventSourceControl {
  private readonly pollers = new Map<string, EventSourcePoller>();

  add(queue: string, poller: EventSourcePoller): void {
    this.pollers.set(queue, poller);
  }

  /**
   * Adds a queue's poller and starts it with the recorded pause and concurrency, as an event source
   * mapping keeps them: a kept data directory may hold a paused queue, whose messages must not be
   * received at all.
   */
  async start(store: StoreContext, queue: QueueDeclaration, poller: EventSourcePoller): Promise<void> {
    this.add(queue.name, poller);
    const settings = effectiveSettings(queue, await getQueueState(store, queue.name));
    poller.configure({ enabled: !settings.paused, maxConcurrency: settings.maxConcurrency });
    poller.start();
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
    // The local poller hands back exactly the records a worker names, as the deployed mapping does.
    return poller ? { ...poller.describe(), state: "local", reportsBatchItemFailures: true } : undefined;
  }
}
