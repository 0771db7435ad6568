import { errorFields, type Log } from "../observability/log.ts";
import type { Waiting } from "./intake.ts";

/** Work on received messages, in flight; `messages` drops to 0 when they are given back unstarted. */
export interface InFlight {
  messages: number;
}

/**
 * The pool's work in flight (single deliveries and batch calls): each piece's end frees its
 * messages' room (`onSettled`), and the drain waits for all of them.
 */
export class InFlightWork {
  private readonly work = new Map<Promise<void>, InFlight>();

  private readonly log: Log;
  private readonly onSettled: (messages: readonly Waiting[]) => void;

  constructor(log: Log, onSettled: (messages: readonly Waiting[]) => void) {
    this.log = log;
    this.onSettled = onSettled;
  }

  /**
   * Runs work on received messages in flight. It never rejects: a failure nothing else caught is
   * logged with its stack, and SQS redelivers the messages once their hold lapses.
   */
  track(
    messages: readonly Waiting[],
    work: () => Promise<void>,
    entry: InFlight = { messages: messages.length },
  ): Promise<void> {
    const done = work()
      .catch((err: unknown) =>
        this.log.error("pool run failed unexpectedly; SQS will redeliver it", {
          messageIds: messages.map((w) => w.record.messageId),
          ...errorFields(err),
        }),
      )
      .finally(() => {
        this.work.delete(done);
        this.onSettled(messages);
      });
    this.work.set(done, entry);
    return done;
  }

  /**
   * The drain: waits for the work until `deadlineMs`, then has `handBack` abort what still runs
   * (it returns how many runs it stopped) and waits for that to settle too.
   */
  async drain(deadlineMs: number, handBack: () => number): Promise<{ finished: number; handedBack: number }> {
    const started = this.messages();
    let handedBack = 0;
    if (!(await this.settledWithin(deadlineMs))) {
      handedBack = handBack();
      await this.settled();
    }
    return { finished: started - handedBack, handedBack };
  }

  /** The messages the work in flight carries (a call's given-back items no longer count). */
  private messages(): number {
    let n = 0;
    for (const { messages } of this.work.values()) n += messages;
    return n;
  }

  /** Resolves once every piece of work now in flight has settled. */
  private async settled(): Promise<void> {
    await Promise.allSettled([...this.work.keys()]);
  }

  /** Waits for the work to settle, at most `deadlineMs`; whether it all settled in time. */
  private async settledWithin(deadlineMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((r) => {
      timer = setTimeout(() => r(false), deadlineMs);
    });
    const all = await Promise.race([this.settled().then(() => true), deadline]);
    clearTimeout(timer);
    return all;
  }
}
