import type { Engine } from "../services/engine-services.ts";
import { type ApiRoute, json, pathParam, queryParams, readJsonBody, route } from "./http.ts";
import { jobId } from "./job-id.ts";

/**
 * POST /jobs/{id}/subscriptions (docs/guide/realtime.md): an operator's backend mints a read-only
 * token for one job, safe to hand to a browser. `from` may come in the body or the query.
 * POST /queues/{name}/subscriptions: the same for a queue's tail.
 */
export function subscriptionRoutes(engine: Pick<Engine, "realtime">): ApiRoute[] {
  return [
    route("POST", "/jobs/{id}/subscriptions", async (event) => {
      const id = jobId(event);
      const body = event.body ? readJsonBody(event) : {};
      const from = queryParams(event).from;
      const request =
        from === undefined || typeof body !== "object" || body === null
          ? body
          : { ...body, from: /^\d+$/.test(from) ? Number(from) : from };
      return json(201, await engine.realtime.subscribe(id, request));
    }),
    // A queue's tail (docs/guide/realtime.md): a token for the queue's status events, nothing else.
    route("POST", "/queues/{name}/subscriptions", async (event) =>
      json(
        201,
        await engine.realtime.subscribeQueue(pathParam(event, "name"), event.body ? readJsonBody(event) : {}),
      ),
    ),
  ];
}
