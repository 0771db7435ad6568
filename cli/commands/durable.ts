import { Command } from "commander";
import type { JobSteps, TokenView, WaitingView } from "../../client/skyforge-client.ts";
import { action } from "../context.ts";
import { UsageError } from "../exit-codes.ts";
import { jsonValue } from "../options.ts";
import { inlineJson, keyValues, shortTime, table } from "../output.ts";

/**
 * Durable jobs from the command line (docs/guide/durable-jobs.md): `jobs steps <id>` (GET /jobs/{id}/steps),
 * `tokens show|complete` (GET and POST /tokens/{id}) and `events send` (POST /events).
 */

/** What a waiting job waits for, in one line: "token tok_… until 2026-…Z". */
export function waitingText(w: WaitingView | undefined): string | undefined {
  if (!w) return undefined;
  const what =
    w.for === "token"
      ? `token ${w.token ?? "?"}`
      : w.for === "event"
        ? `event ${w.event} (match ${w.match})`
        : w.for === "any"
          ? "the first branch of a race"
          : "sleep";
  return w.until ? `${what} until ${shortTime(w.until)}` : what;
}

function stepsText(answer: JobSteps): string {
  const head = `job ${answer.jobId}: ${answer.status}${answer.waiting ? `, waiting for ${waitingText(answer.waiting)}` : ""}`;
  if (answer.steps.length === 0) return `${head}\nno steps recorded`;
  const rows = answer.steps.map((s) => [
    s.name,
    s.type,
    s.status,
    s.attempt,
    shortTime(s.at),
    shortTime(s.until),
  ]);
  return `${head}\n${table(["NAME", "TYPE", "STATUS", "ATTEMPT", "AT", "UNTIL"], rows)}`;
}

export function stepsCommand(): Command {
  return new Command("steps")
    .description("a durable job's recorded steps in order, and what it waits for (GET /jobs/{id}/steps)")
    .argument("<id>", "the job's id")
    .action(
      action<[string], object>(async ({ client, output }, id) => {
        const answer = await client.steps(id);
        output.result(answer, () => stepsText(answer));
        return undefined;
      }),
    );
}

function tokenText(t: TokenView): string {
  return keyValues([
    ["id", t.id],
    ["job", t.jobId],
    ["step", t.step],
    ["status", t.status],
    ["created", shortTime(t.createdAt)],
    ["times out", shortTime(t.timeoutAt)],
    ["completed", shortTime(t.completedAt)],
    ["data", inlineJson(t.data, Number.POSITIVE_INFINITY)],
  ]);
}

/** Where `tokens complete ID` finds the secret when --secret isn't given: off argv, out of ps. */
export const TOKEN_SECRET_VARIABLE = "SKYFORGE_TOKEN_SECRET";

/** `tokens complete -`: the token's url (or id), the one line on stdin. */
async function tokenFromStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length !== 1) {
    throw new UsageError(
      `tokens complete -: expected the token's url as one line on stdin, got ${lines.length === 0 ? "nothing" : `${lines.length} lines`}`,
    );
  }
  return lines[0] as string;
}

interface CompleteOptions {
  secret?: string;
  data?: unknown;
}

export function tokensCommand(): Command {
  const tokens = new Command("tokens").description("show a durable job's wait token, or complete it");
  tokens
    .command("show")
    .description("a token's state: pending, completed, timed-out or cancelled (GET /tokens/{id})")
    .argument("<id>", "the token's id (tok_…)")
    .action(
      action<[string], object>(async ({ client, output }, id) => {
        const token = await client.token(id);
        output.result(token, () => tokenText(token));
        return undefined;
      }),
    );
  tokens
    .command("complete")
    .description(
      "complete a token with data, resuming its job (POST /tokens/{id}); its url carries the secret. Off the command line (where ps and shell history see it): '-' reads the url from stdin, and a bare id takes SKYFORGE_TOKEN_SECRET",
    )
    .argument(
      "<url-or-id>",
      "the token's url (from the job's token step), '-' to read it from stdin, or its id",
    )
    .option(
      "--secret <secret>",
      "the token's secret, with its id (visible to other users in ps: prefer SKYFORGE_TOKEN_SECRET)",
    )
    .option("--data <json>", "the data the job's waitForToken returns (JSON; default null)", jsonValue)
    .action(
      action<[string], CompleteOptions>(async ({ client, output }, given, o) => {
        const urlOrId = given === "-" ? await tokenFromStdin() : given;
        const secret = o.secret ?? (urlOrId.includes("/") ? undefined : process.env[TOKEN_SECRET_VARIABLE]);
        const done = await client.completeToken(
          urlOrId,
          o.data ?? null,
          secret !== undefined ? { secret } : {},
        );
        output.result(
          done,
          () =>
            `completed ${done.id}: job ${done.jobId} ${done.resumed ? "resumes now" : "resumes when its run ends"}`,
        );
        return undefined;
      }),
    );
  return tokens;
}

interface SendOptions {
  match: string;
  data?: unknown;
}

export function eventsCommand(): Command {
  const events = new Command("events").description("send an event to durable jobs waiting for it");
  events
    .command("send")
    .description(
      "resume every job waiting for this event name and match value (POST /events); it is kept for its lookback (5 minutes unless declared) for waits that begin later",
    )
    .argument("<name>", "the event's name (order.paid)")
    .requiredOption("--match <value>", "the value the waits match on (an order's id)")
    .option(
      "--data <json>",
      "the event's data, which each waitForEvent returns (JSON; default null)",
      jsonValue,
    )
    .action(
      action<[string], SendOptions>(async ({ client, output }, name, o) => {
        const sent = await client.sendEvent(name, o.match, o.data ?? null);
        output.result(
          sent,
          () => `${name} (match ${o.match}): resumed ${sent.resumed} job${sent.resumed === 1 ? "" : "s"}`,
        );
        return undefined;
      }),
    );
  return events;
}
