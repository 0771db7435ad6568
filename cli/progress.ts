import cliProgress from "cli-progress";

/** How far a bulk enqueue has got: lines whose outcome is known, and what it was. */
export interface ProgressCounts {
  done: number;
  enqueued: number;
  duplicate: number;
  failed: number;
}

export interface Progress {
  update(counts: ProgressCounts): void;
  stop(): void;
}

export interface ProgressOptions {
  stream: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Lines in the file, when known (not for stdin). */
  total: number | undefined;
  enabled: boolean;
  now?: () => number;
}

/**
 * Progress on stderr, never on stdout (which `--json` keeps for its one document). On a terminal, a
 * bar redrawn in place; otherwise (a pipe, a CI log) a plain line at each tenth of the file, or every
 * 1000 lines when the total is unknown, so a log gets a few lines instead of thousands of redraws.
 */
export function createProgress(options: ProgressOptions): Progress {
  if (!options.enabled) return { update: () => {}, stop: () => {} };
  const tty = (options.stream as NodeJS.WriteStream).isTTY === true;
  return tty && options.total !== undefined
    ? barProgress(options.stream, options.total)
    : lineProgress(options.stream, options.total, options.now ?? Date.now);
}

function barProgress(stream: NodeJS.WritableStream, total: number): Progress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format:
        "enqueue [{bar}] {percentage}% {value}/{total} lines | {enqueued} enqueued, {duplicate} duplicate, {failed} failed | {eta_formatted}",
      hideCursor: true,
      clearOnComplete: false,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { enqueued: 0, duplicate: 0, failed: 0 });
  return {
    update: (c) => bar.update(c.done, { enqueued: c.enqueued, duplicate: c.duplicate, failed: c.failed }),
    stop: () => bar.stop(),
  };
}

function lineProgress(stream: NodeJS.WritableStream, total: number | undefined, now: () => number): Progress {
  const started = now();
  let lastStep = 0;
  const step = (done: number) => (total ? Math.floor((done * 10) / total) : Math.floor(done / 1000));
  const print = (c: ProgressCounts) => {
    const of = total
      ? `${c.done}/${total} lines (${Math.floor((c.done * 100) / total)}%)`
      : `${c.done} lines`;
    const seconds = ((now() - started) / 1000).toFixed(1);
    stream.write(
      `enqueue: ${of}, ${c.enqueued} enqueued, ${c.duplicate} duplicate, ${c.failed} failed, ${seconds} s\n`,
    );
  };
  return {
    update: (c) => {
      const s = step(c.done);
      if (s > lastStep) {
        lastStep = s;
        print(c);
      }
    },
    stop: () => {},
  };
}

/** How far a job-by-job operation in steps has got (bulk replay: jobs sent of the matched). */
export interface StepProgress {
  update(done: number, extra: string): void;
  stop(): void;
}

/**
 * Progress of `total` jobs handled a step at a time, on stderr: a bar on a terminal, otherwise a
 * plain line at each tenth. `label` starts each line ("replay"); `extra` follows the counts.
 */
export function createStepProgress(options: {
  stream: NodeJS.WriteStream | NodeJS.WritableStream;
  total: number;
  label: string;
  enabled: boolean;
}): StepProgress {
  const { stream, total, label } = options;
  if (!options.enabled) return { update: () => {}, stop: () => {} };
  if ((stream as NodeJS.WriteStream).isTTY === true) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${label} [{bar}] {percentage}% {value}/{total} jobs | {extra} | {eta_formatted}`,
        hideCursor: true,
        clearOnComplete: false,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { extra: "" });
    return { update: (done, extra) => bar.update(done, { extra }), stop: () => bar.stop() };
  }
  let lastStep = 0;
  return {
    update: (done, extra) => {
      const step = Math.floor((done * 10) / total);
      if (step <= lastStep) return;
      lastStep = step;
      stream.write(`${label}: ${done}/${total} jobs (${Math.floor((done * 100) / total)}%), ${extra}\n`);
    },
    stop: () => {},
  };
}
