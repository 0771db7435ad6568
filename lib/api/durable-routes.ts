import { ClientError } from "../errors.ts";
import { eventKeyProblem } from "../job/durable.ts";
import { MAX_PAYLOAD_BYTES } from "../job/schemas.ts";
import type { Engine } from "../services/engine-services.ts";
import { type ApiRoute, type HttpEvent, json, pathParam, queryParams, readJsonBody, route } from "./http.ts";
import { jobId } from "./job-id.ts";

/** A token's completion body: `{ "data": … }` of at most 1 MiB, with room for the wrapper. */
const MAX_TOKEN_BODY_BYTES = MAX_PAYLOAD_BYTES + 1024;

/** The body's `data` (null when left out); any other shape is the caller's mistake. */
function dataOf(body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new ClientError("validation_error", 'expected { "data": … }');
  const extra = Object.keys(body).filter((k) => k !== "data");
  if (extra.length)
    throw new ClientError(
      "validation_error",
      'expected { "data": … }',
      extra.map((path) => ({ path, message: "unknown field" })),
    );
  return (body as { data?: unknown }).data ?? null;
}

/**
 * POST /events' name and match, refused with a 400 naming the field when the table can't hold them
 * as its waiters' key (eventKeyProblem): checked here, at the request's edge, before delivery reads
 * anything. A body of another shape is left for the delivery's own schema to name.
 */
function checkEventKeys(body: unknown): unknown {
  if (typeof body !== "object" || body === null) return body;
  const { name, match } = body as { name?: unknown; match?: unknown };
  if (typeof name !== "string" || typeof match !== "string") return body;
  const found = eventKeyProblem(name, match);
  if (!found) return body;
  const field = found.at === "event" ? "name" : found.at;
  if (field === "both")
    throw new ClientError("validation_error", `the event's name and match can't be stored as its key`, [
      { path: "(root)", message: `the key of its name and match ${found.problem}` },
    ]);
  throw new ClientError("validation_error", `the event's ${field} can't be stored as its key`, [
    { path: field, message: `its ${field} ${found.problem}` },
  ]);
}

/**
 * Durable jobs' routes (docs/architecture.md §22), each one call on the engine's durable service
 * after the request's own checks. `POST /tokens/{id}` is the one route deployed
 * without IAM auth (lib/api/route-keys.ts): it completes the token its url names, with that url's
 * secret, and does nothing else.
 */
export function durableRoutes(engine: Engine): ApiRoute[] {
  return [
    route("GET", "/jobs/{id}/steps", async (event) => json(200, await engine.durable.stepsOf(jobId(event)))),
    route("GET", "/tokens/{id}", async (event) =>
      json(200, await engine.durable.tokenView(pathParam(event, "id"))),
    ),
    route("POST", "/tokens/{id}", async (event: HttpEvent) => {
      const id = pathParam(event, "id");
      const { secret } = queryParams(event);
      const data = dataOf(readJsonBody(event, MAX_TOKEN_BODY_BYTES));
      return json(200, await engine.durable.completeToken(id, secret, data));
    }),
    route("POST", "/events", async (event) =>
      json(202, await engine.durable.deliverEvent(checkEventKeys(readJsonBody(event, MAX_TOKEN_BODY_BYTES)))),
    ),
  ];
}
