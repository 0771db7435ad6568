import {
  describeIssues,
  MAX_SCHEDULES,
  ScheduleInput,
  ScheduleName,
  scheduleWrite,
  toScheduleView,
} from "../cron/schedule.ts";
import type { ScheduleDeclaration } from "../declarations/schedule-declaration.ts";
import { ClientError, issuesOf } from "../errors.ts";
import { MAX_SCHEDULE_BODY_BYTES } from "../limits.ts";
import { kindsReadyFor, validateEnqueue } from "../producer/validate.ts";
import type { Engine } from "../services/engine-services.ts";
import { deleteSchedule, listSchedules, putSchedule } from "../store/schedule-ops.ts";
import { type ApiRoute, type HttpEvent, json, pathParam, readJsonBody, route } from "./http.ts";

function scheduleName(event: HttpEvent): string {
  const name = pathParam(event, "name");
  const parsed = ScheduleName.safeParse(name);
  if (!parsed.success) {
    throw new ClientError(
      "validation_error",
      `invalid schedule name "${name}"`,
      issuesOf(parsed.error, ["name"]),
    );
  }
  return parsed.data;
}

/**
 * The body as a schedule whose fires this deployment can actually queue: its kind, payload and queue
 * pass exactly the checks an enqueue of the same job would (a pool kind on a Lambda queue, a payload
 * the kind refuses, an unknown kind or queue are the same 400s as POST /jobs gives).
 */
async function validSchedule(
  engine: Pick<Engine, "registry" | "queues">,
  raw: unknown,
): Promise<ScheduleInput> {
  const parsed = ScheduleInput.safeParse(raw);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    throw new ClientError("validation_error", `invalid schedule: ${describeIssues(issues)}`, issues);
  }
  const input = parsed.data;
  await kindsReadyFor(engine.registry, [input]);
  validateEnqueue(
    {
      kind: input.kind,
      payload: input.payload ?? null,
      ...(input.queue !== undefined ? { queue: input.queue } : {}),
    },
    engine.registry,
    engine.queues,
  );
  return input;
}

/** GET/PUT/DELETE /schedules (docs/architecture.md §7; the README's routes table), in the route shape of lib/api/routes.ts. */
export function scheduleRoutes(
  engine: Pick<Engine, "store" | "registry" | "queues" | "clock">,
  declared: readonly ScheduleDeclaration[],
): ApiRoute[] {
  const ctx = engine.store;
  const declaredNames = new Set(declared.map((d) => d.name));

  return [
    route("GET", "/schedules", async () => {
      const items = (await listSchedules(ctx)).sort((a, b) => a.name.localeCompare(b.name));
      return json(200, { items: items.map(toScheduleView) });
    }),
    route("PUT", "/schedules/{name}", async (event) => {
      const name = scheduleName(event);
      const input = await validSchedule(engine, readJsonBody(event, MAX_SCHEDULE_BODY_BYTES));
      // A declared name not yet synced is created as a code schedule, so the sync still applies it.
      const source = declaredNames.has(name) ? "code" : "api";
      const existing = await listSchedules(ctx);
      if (existing.length >= MAX_SCHEDULES && !existing.some((s) => s.name === name)) {
        throw new ClientError(
          "conflict",
          `there are already ${existing.length} schedules, the most this deployment keeps (${MAX_SCHEDULES}); delete one first`,
        );
      }
      const now = engine.clock.now();
      const { created, item } = await putSchedule(ctx, name, scheduleWrite(input, now), { source }, now);
      return json(created ? 201 : 200, toScheduleView(item));
    }),
    route("DELETE", "/schedules/{name}", async (event) => {
      const name = scheduleName(event);
      const result = await deleteSchedule(ctx, name, "api");
      if (result.deleted) return { statusCode: 204 };
      if (!result.current) throw new ClientError("not_found", `schedule "${name}" not found`);
      throw new ClientError(
        "conflict",
        `schedule "${name}" is declared in code: disable it with PUT enabled=false, or remove it from app/schedules.ts`,
      );
    }),
  ];
}
