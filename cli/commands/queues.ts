import { Command } from "commander";
import type { QueuePatch, QueueView } from "../../client/skyforge-client.ts";
import { action } from "../context.ts";
import { UsageError } from "../exit-codes.ts";
import { integer } from "../options.ts";
import { table } from "../output.ts";

interface SetOptions {
  maxConcurrency?: number;
  backoffBase?: number;
  backoffMax?: number;
  retentionDone?: number;
  retentionDead?: number;
}

/** `skyforge queues ls|pause|resume|set`: GET /queues, POST /queues/{name}/pause|resume, PATCH /queues/{name}. */
export function queuesCommand(): Command {
  const queues = new Command("queues").description(
    "list queues with live counts; pause, resume, change settings",
  );

  queues
    .command("ls")
    .description("every queue: settings in force, paused or not, live message counts (GET /queues)")
    .action(
      action<[], object>(async ({ client, output }) => {
        const items = await client.queues.list();
        output.result({ items }, () => queueTable(items));
        return undefined;
      }),
    );

  for (const verb of ["pause", "resume"] as const) {
    queues
      .command(verb)
      .description(
        verb === "pause"
          ? "stop starting this queue's jobs (running ones finish; enqueues still accepted)"
          : "start this queue's jobs again",
      )
      .argument("<name>", "the queue")
      .action(
        action<[string], object>(async ({ client, output }, name) => {
          const queue = await client.queues[verb](name);
          output.result(queue, () => `${queue.name}: ${queue.paused ? "paused" : "running"}`);
          return undefined;
        }),
      );
  }

  queues
    .command("set")
    .description("change a queue's settings (PATCH /queues/{name}); unset ones stay as they are")
    .argument("<name>", "the queue")
    .option("--max-concurrency <n>", "jobs run at once, 2..1000", integer(0))
    .option("--backoff-base <seconds>", "first retry delay", integer(0))
    .option("--backoff-max <seconds>", "longest retry delay", integer(0))
    .option("--retention-done <days>", "days a done job is kept", integer(0))
    .option("--retention-dead <days>", "days a dead job is kept", integer(0))
    .action(
      action<[string], SetOptions>(async ({ client, output }, name, o) => {
        const patch = queuePatch(o);
        if (!patch) {
          throw new UsageError(
            "nothing to change: give --max-concurrency, --backoff-base, --backoff-max, --retention-done or --retention-dead",
          );
        }
        const queue = await client.queues.update(name, patch);
        output.result(queue, () => `${queue.name} updated\n${queueTable([queue])}`);
        return undefined;
      }),
    );

  return queues;
}

/** The PATCH body for the options given, or undefined when none was. The API checks the ranges. */
export function queuePatch(o: SetOptions): QueuePatch | undefined {
  const backoff = {
    ...(o.backoffBase !== undefined ? { baseSeconds: o.backoffBase } : {}),
    ...(o.backoffMax !== undefined ? { maxSeconds: o.backoffMax } : {}),
  };
  const retentionDays = {
    ...(o.retentionDone !== undefined ? { done: o.retentionDone } : {}),
    ...(o.retentionDead !== undefined ? { dead: o.retentionDead } : {}),
  };
  const patch: QueuePatch = {
    ...(o.maxConcurrency !== undefined ? { maxConcurrency: o.maxConcurrency } : {}),
    ...(Object.keys(backoff).length ? { backoff } : {}),
    ...(Object.keys(retentionDays).length ? { retentionDays } : {}),
  };
  return Object.keys(patch).length ? patch : undefined;
}

type Counts = { visible?: number; inFlight?: number; delayed?: number; dlq?: number };

function queueTable(items: readonly QueueView[]): string {
  return table(
    ["NAME", "STATE", "CONCURRENCY", "BACKOFF", "RETENTION", "VISIBLE", "IN FLIGHT", "DELAYED", "DLQ"],
    items.map((q) => {
      const backoff = q.backoff as { baseSeconds?: number; maxSeconds?: number } | undefined;
      const retention = q.retentionDays as { done?: number; dead?: number } | undefined;
      const counts = (q.counts ?? {}) as Counts;
      const cooldown = typeof q.cooldownUntil === "string" ? ` (cooling down until ${q.cooldownUntil})` : "";
      return [
        q.name,
        `${q.paused ? "paused" : "running"}${cooldown}`,
        q.maxConcurrency as number | undefined,
        backoff ? `${backoff.baseSeconds}s..${backoff.maxSeconds}s` : undefined,
        retention ? `done ${retention.done}d, dead ${retention.dead}d` : undefined,
        counts.visible,
        counts.inFlight,
        counts.delayed,
        counts.dlq,
      ];
    }),
  );
}
