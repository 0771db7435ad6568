import { Command, Option } from "commander";
import type { ScheduleInput, ScheduleView } from "../../client/skyforge-client.ts";
import { type AppNames, misfirePolicies } from "../../client/vocabulary.ts";
import { action } from "../context.ts";
import { jsonValue } from "../options.ts";
import { inlineJson, shortTime, table } from "../output.ts";

interface PutOptions {
  cron: string;
  kind: string;
  payload?: unknown;
  timezone?: string;
  queue?: string;
  disabled?: boolean;
  misfire?: (typeof misfirePolicies)[number];
}

/** `skyforge schedules ls|put|rm`: GET /schedules, PUT /schedules/{name}, DELETE /schedules/{name}. */
export function schedulesCommand(): Command {
  const schedules = new Command("schedules").description(
    "list, create or replace, and remove cron schedules",
  );

  schedules
    .command("ls")
    .description("every schedule, from code and from the API, with its next fire (GET /schedules)")
    .action(
      action<[], object>(async ({ client, output }) => {
        const items = await client.schedules.list();
        output.result({ items }, () => (items.length === 0 ? "no schedules" : scheduleTable(items)));
        return undefined;
      }),
    );

  schedules
    .command("put")
    .description(
      "create a schedule or replace one (PUT /schedules/{name}); the API checks the cron, kind and payload",
    )
    .argument("<name>", "the schedule's name")
    .requiredOption("--cron <expression>", 'when it fires: 5 or 6 fields, e.g. "0 */5 * * * *"')
    .requiredOption("--kind <kind>", "the kind of job it enqueues")
    .option("--payload <json>", "the payload of each job, as JSON", jsonValue)
    .option("--timezone <zone>", "the cron's time zone (IANA name; default UTC)")
    .option("--queue <name>", "the queue (default: the kind's)")
    .option("--disabled", "store it without firing it")
    .addOption(
      new Option(
        "--misfire <policy>",
        "fires missed by more than the grace: skip them, or run once for all",
      ).choices(misfirePolicies),
    )
    .action(
      action<[string], PutOptions>(async ({ client, output }, name, o) => {
        const schedule = {
          cron: o.cron,
          kind: o.kind,
          ...(o.payload !== undefined ? { payload: o.payload } : {}),
          ...(o.timezone !== undefined ? { timezone: o.timezone } : {}),
          ...(o.queue !== undefined ? { queue: o.queue } : {}),
          enabled: o.disabled !== true,
          ...(o.misfire !== undefined ? { misfire: o.misfire } : {}),
        } as ScheduleInput<AppNames>;
        const saved = await client.schedules.put(name, schedule);
        output.result(
          saved,
          () => `${saved.name} saved; next fire ${shortTime(saved.nextRunAt as string) ?? "none"}`,
        );
        return undefined;
      }),
    );

  schedules
    .command("rm")
    .description(
      "remove a schedule made through the API (DELETE /schedules/{name}); one declared in code is a 409",
    )
    .argument("<name>", "the schedule's name")
    .action(
      action<[string], object>(async ({ client, output }, name) => {
        await client.schedules.remove(name);
        output.result({ name, removed: true }, () => `${name} removed`);
        return undefined;
      }),
    );

  return schedules;
}

function scheduleTable(items: readonly ScheduleView[]): string {
  return table(
    ["NAME", "CRON", "TIMEZONE", "KIND", "QUEUE", "ENABLED", "NEXT FIRE", "SOURCE", "PAYLOAD", "LAST ERROR"],
    items.map((s) => [
      s.name,
      s.cron as string,
      s.timezone as string,
      s.kind as string,
      s.queue as string | undefined,
      s.enabled === true ? "yes" : "no",
      shortTime(s.nextRunAt as string | undefined),
      s.source as string,
      inlineJson(s.payload, 40),
      s.lastError as string | undefined,
    ]),
  );
}
