import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { InvariantError } from "../errors.ts";
import type { Log } from "../observability/log.ts";
import {
  type ChildReply,
  type ChildRequest,
  type Exchange,
  MAX_JOB_LINE_BYTES,
  singleExchange,
} from "./child-protocol.ts";
import { splitLines } from "./line-splitter.ts";

export interface ChildLaunch {
  kind: string;
  argv: readonly string[];
  /** The whole environment of the child (the caller merges the process's own with the kind's). */
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Spawned through this argv prefix (setpriv's parent-death signal, see child-program.ts); none by default. */
  via?: readonly string[];
}

/** How one request ended. Anything but a reply leaves the child killed. */
export type ExchangeEnd<R = ChildReply> =
  | { reply: R }
  | { failure: "desync"; detail: string }
  | { failure: "exited"; detail: string }
  | { failure: "aborted"; cause: unknown };

type Pending = {
  id: string;
  maxReplyBytes: number;
  read(line: string): unknown;
  settle: (end: ExchangeEnd<unknown>) => void;
};

/** How long a dead child's stdout may stay open (held by a grandchild) before its death counts anyway. */
const STDOUT_DRAIN_MS = 1000;

/**
 * The longest stderr line logged whole, one log entry: a longer one is logged cut to this and the
 * rest of it dropped, so a child can't make the pool hold an endless line.
 */
export const STDERR_LINE_BYTES = 64 * 1024;

/**
 * One long-lived child process speaking the line protocol: one request in flight at a time, its
 * stdout read line by line, its stderr logged line by line under its kind, both split on "\n"
 * only (line-splitter.ts). A child that breaks step (an unsolicited line, a foreign id, garbage, a
 * line over its bound) is killed, never reused: a late line would otherwise be read as the next
 * job's answer.
 */
export class WarmChild {
  readonly pid: number | undefined;
  private readonly proc: ChildProcessWithoutNullStreams;
  private pending: Pending | undefined;
  private exitDetail: string | undefined;
  /** Set by kill() or the exit event: the death may take a moment to settle, but the child is never reused. */
  private gone = false;
  private readonly exited: Promise<void>;

  readonly launch: ChildLaunch;
  private readonly log: Log;

  constructor(launch: ChildLaunch, log: Log, onExit: (child: WarmChild) => void) {
    this.launch = launch;
    this.log = log;
    const [program, ...args] = [...(launch.via ?? []), ...launch.argv];
    this.proc = spawn(program as string, args, {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.pid = this.proc.pid;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.exited = promise;
    const ended = (detail: string) => {
      if (this.exitDetail !== undefined) return;
      this.exitDetail = detail;
      this.settle({ failure: "exited", detail });
      onExit(this);
      resolve();
    };
    this.proc.on("error", (err) => ended(`could not start ${JSON.stringify(program)}: ${err.message}`));
    this.proc.on("exit", (code, signal) => {
      this.gone = true;
      const detail = signal ? `child was killed by ${signal}` : `child exited with code ${code}`;
      // One SIGCHLD reaps every child that has exited, so "exit" can come before the lines the child
      // wrote last are read: a reply it sent just before exiting would be lost, and its job run again.
      // Its death counts once its stdout is closed, or after a bound if a grandchild holds the pipe.
      const stdout = this.proc.stdout;
      if (stdout.closed) return ended(detail);
      const timer = setTimeout(() => ended(detail), STDOUT_DRAIN_MS).unref();
      stdout.once("close", () => {
        clearTimeout(timer);
        ended(detail);
      });
    });
    // A write to a child that has closed its stdin fails with EPIPE. The failure itself tells us
    // nothing we act on: a child that exits is reported by "exit", and one that lives on without
    // reading is caught by the job's timeout.
    this.proc.stdin.on("error", () => {});
    splitLines(this.proc.stdout, {
      // A line nobody asked for is a desync whatever its length: one job's bound keeps it small.
      maxBytes: () => this.pending?.maxReplyBytes ?? MAX_JOB_LINE_BYTES,
      onLine: (line) => this.onLine(line),
      onOverlong: (_, maxBytes) => this.onOverlong(maxBytes),
    });
    const logLine = (line: string, cut?: true) =>
      log.info("child stderr", { kind: launch.kind, pid: this.pid, line, ...(cut ? { cut } : {}) });
    splitLines(this.proc.stderr, {
      maxBytes: STDERR_LINE_BYTES,
      onLine: (line) => logLine(line),
      onOverlong: (head) => logLine(head.toString("utf8"), true),
    });
  }

  get alive(): boolean {
    return this.exitDetail === undefined && !this.gone;
  }

  /**
   * Sends one request and waits for its one reply line, the child's death, or `signal` (timeout,
   * cancel, lost lease, shutdown), which kills the child.
   */
  exchange(request: ChildRequest, signal: AbortSignal): Promise<ExchangeEnd> {
    return this.send(singleExchange(request), signal);
  }

  /** Writes one request (a job's or a batch call's) and waits for the line that answers it, as `exchange`. */
  send<R>(exchange: Exchange<R>, signal: AbortSignal): Promise<ExchangeEnd<R>> {
    if (!this.alive) {
      return Promise.resolve({ failure: "exited", detail: this.exitDetail ?? "child was killed" });
    }
    if (this.pending) throw new InvariantError(`child ${this.pid} is already serving ${this.pending.id}`);
    if (signal.aborted) return Promise.resolve({ failure: "aborted", cause: signal.reason });
    const { promise, resolve } = Promise.withResolvers<ExchangeEnd<R>>();
    const onAbort = () => {
      this.settle({ failure: "aborted", cause: signal.reason });
      this.kill();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    this.pending = {
      id: exchange.id,
      maxReplyBytes: exchange.maxReplyBytes,
      read: (line) => exchange.read(line),
      settle: (end) => {
        signal.removeEventListener("abort", onAbort);
        resolve(end as ExchangeEnd<R>);
      },
    };
    this.proc.stdin.write(exchange.line);
    return promise;
  }

  kill(): void {
    if (!this.alive) return;
    this.gone = true;
    this.proc.kill("SIGKILL");
  }

  /** Closes stdin (a well-behaved child exits at EOF) and kills it if it is still there after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    if (this.exitDetail !== undefined) return;
    this.proc.stdin.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private onLine(line: string): void {
    const pending = this.pending;
    if (!pending) {
      this.log.warn("child wrote a line nobody asked for; killing it", {
        kind: this.launch.kind,
        pid: this.pid,
        line: line.slice(0, 200),
      });
      this.kill();
      return;
    }
    const parsed = pending.read(line);
    if (typeof parsed === "object" && parsed !== null && "desync" in parsed) {
      this.settle({ failure: "desync", detail: String(parsed.desync) });
      this.kill();
      return;
    }
    this.settle({ reply: parsed });
  }

  private onOverlong(maxBytes: number): void {
    const detail = `reply line is over ${maxBytes} bytes`;
    if (this.pending) this.settle({ failure: "desync", detail });
    else
      this.log.warn("child wrote a line nobody asked for; killing it", {
        kind: this.launch.kind,
        pid: this.pid,
        line: detail,
      });
    this.kill();
  }

  private settle(end: ExchangeEnd<unknown>): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.settle(end);
  }
}
