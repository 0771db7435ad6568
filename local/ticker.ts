import { errorFields, type Log } from "../lib/observability/log.ts";

export interface ScheduledTask {
  name: string;
  run(): Promise<object>;
}

/**
 * EventBridge Scheduler, locally: runs each scheduled function every `intervalMs`. A run that is
 * still going when the next is due is not doubled up (on AWS overlap is possible and each function
 * is safe under it; here there is no reason to add load). Reports with any non-zero count are logged.
 */
export class Ticker {
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();

  private readonly tasks: readonly ScheduledTask[];
  private readonly intervalMs: number;
  private readonly log: Log;

  constructor(tasks: readonly ScheduledTask[], intervalMs: number, log: Log) {
    this.tasks = tasks;
    this.intervalMs = intervalMs;
    this.log = log;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** Runs every task once now (unless it is already running) and resolves when all have finished. */
  async tick(): Promise<void> {
    await Promise.all(this.tasks.map((task) => this.runOnce(task)));
  }

  /** Runs one task by name now (the scale bench runs the reaper alone); an unknown name is a caller's mistake. */
  async run(name: string): Promise<void> {
    const task = this.tasks.find((t) => t.name === name);
    if (!task)
      throw new Error(`no scheduled task "${name}" (tasks: ${this.tasks.map((t) => t.name).join(", ")})`);
    await this.runOnce(task);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled(this.inFlight.values());
  }

  private runOnce(task: ScheduledTask): Promise<void> {
    const running = this.inFlight.get(task.name);
    if (running) return running;
    const run = task
      .run()
      .then((report) => {
        if (Object.values(report).some((v) => typeof v === "number" && v > 0))
          this.log.info(`${task.name} ran`, { report });
      })
      .catch((err) => this.log.error(`${task.name} failed; the next tick tries again`, errorFields(err)))
      .finally(() => this.inFlight.delete(task.name));
    this.inFlight.set(task.name, run);
    return run;
  }
}
