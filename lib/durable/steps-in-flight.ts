/**
 * One run's steps still in flight (docs/architecture.md §22, Suspend). A sleep or a wait beside a
 * step ends the run only once that step has settled and been recorded, so a step's function runs
 * once per job; and steps side by side share the inline budget, each holding its result's bytes
 * from the moment it chose to go inline until its record is written.
 */
export class StepsInFlight {
  private readonly running = new Set<Promise<unknown>>();
  /** Set by the run's first sleep or wait that must wait. */
  suspending = false;
  /** Once the run's suspension is handed over: no new step function starts. */
  ended = false;
  /** Bytes of inline results chosen and not yet recorded. */
  inlineHeld = 0;

  /** Keeps `running` among the steps in flight until it settles. */
  track<T>(running: Promise<T>): Promise<T> {
    const settled = () => this.running.delete(running);
    this.running.add(running);
    running.then(settled, settled);
    return running;
  }

  /**
   * The run's first wait calls `end` once every step in flight has settled (later ones do nothing:
   * they are met again after the wake). A turn of the event loop before each look lets steps
   * started in the wait's tick join, and lets a handler that doesn't catch a step's error fail the
   * attempt with it first, as any step's error does.
   */
  endAfterSteps(end: () => void): void {
    if (this.suspending) return;
    this.suspending = true;
    void this.settled().then(() => {
      this.ended = true;
      end();
    });
  }

  private async settled(): Promise<void> {
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await turn();
    while (this.running.size > 0) {
      await Promise.allSettled(this.running);
      await turn();
    }
  }
}
