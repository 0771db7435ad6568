import { QueueAdmin } from "../ops/queue-admin.ts";
import type { Engine } from "../services/engine-services.ts";
import { type ApiRoute, json, pathParam, readJsonBody, route } from "./http.ts";

/** Queue controls (docs/architecture.md §6; the README's routes table): list with live counts, pause, resume, change settings. */
export function queueRoutes(engine: Engine): ApiRoute[] {
  const admin = new QueueAdmin(engine);
  return [
    route("GET", "/queues", async () => json(200, { items: await admin.list() })),
    route("POST", "/queues/{name}/pause", async (e) => json(200, await admin.pause(pathParam(e, "name")))),
    route("POST", "/queues/{name}/resume", async (e) => json(200, await admin.resume(pathParam(e, "name")))),
    route("PATCH", "/queues/{name}", async (e) =>
      json(200, await admin.patch(pathParam(e, "name"), readJsonBody(e))),
    ),
  ];
}
