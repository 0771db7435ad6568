/** Work on received messages, in flight; `messages` drops to 0 when they are given back unstarted. */
export interface InFlight {
  messages: number;
}

/** The pool's work in flight (single deliveries and batch calls): what its drain waits for. */
export class InFlightWork {
  private readonly work = new Map<Promise<void>, InFlight>();

  add(done: Promise<void>, entry: InFlight): void {
    this.work.set(done, entry);
  }

  delete(done: Promise<void>): void {
    this.work.delete(done);
  }

  /** The messages the work in flight carries (a call's given-back items no longer count). */
  messages(): number {
    let n = 0;
    for (const { messages } of this.work.values()) n += messages;
    return n;
  }

  /** Resolves once every piece of work now in flight has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.work.keys()]);
  }

  /** Waits for the work to settle, at most `deadlineMs`; whether it all settled in time. */
  async settledWithin(deadlineMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((r) => {
      timer = setTimeout(() => r(false), deadlineMs);
    });
    const all = await Promise.race([this.settled().then(() => true), deadline]);
    clearTimeout(timer);
    return all;
  }
}
