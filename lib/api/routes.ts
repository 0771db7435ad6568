import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { listedJobView, loadJobView } from "../claims/job-bodies.ts";
import { ClientError, issuesOf } from "../errors.ts";
import { EnqueueBatchRequest, type JobView, ListJobsQuery } from "../job/schemas.ts";
import { MAX_ENQUEUE_BODY_BYTES } from "../limits.ts";
import { cancelJob } from "../ops/cancel-job.ts";
import { replayJobs } from "../ops/replay-jobs.ts";
import { redriveJob } from "../producer/redrive.ts";
import { resumePausedJob } from "../producer/resume-paused.ts";
import type { Engine } from "../services/engine-services.ts";
import { type JobItem, toJobView } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { searchJobs } from "../store/search-ops.ts";
import { durableRoutes } from "./durable-routes.ts";
import { groupRoutes } from "./group-routes.ts";
import {
  type ApiRoute,
  clip,
  errorResponder,
  type HttpEvent,
  type HttpResult,
  json,
  methodNotAllowed,
  queryParams,
  readJsonBody,
  route,
  withoutBody,
} from "./http.ts";
import { jobId } from "./job-id.ts";
import { keyRoutes } from "./key-routes.ts";
import { queueRoutes } from "./queue-routes.ts";
import { routeMatcher } from "./route-keys.ts";
import { scheduleRoutes } from "./schedule-routes.ts";
import { subscriptionRoutes } from "./subscription-routes.ts";
import { requestTrace } from "./trace-header.ts";
import { waitingCounts } from "./waiting-counts.ts";

/**
 * A job without its payload and result: neither is parsed, and a payload kept in its own item is not
 * read. What pollers list with (tail, the console's chart).
 */
function toJobSummary(item: JobItem): Omit<JobView, "payload" | "result"> {
  const { payload: _payload, result: _result, ...fields } = item;
  const { payload: _none, ...summary } = toJobView(fields);
  return summary;
}

/** Every route of the HTTP API (the README's routes table); infra declares the same list (lib/api/route-keys.ts). */
export function apiRoutes(engine: Engine): ApiRoute[] {
  const { producer, store, queues } = engine;
  const health = async () => json(200, { ok: true, queues: queues.map((q) => q.name) });

  return [
    route("GET", "/health", health),
    route("HEAD", "/health", withoutBody(health)),
    route("POST", "/jobs", async (event) => {
      const trace = requestTrace(event);
      const { job, duplicate, debounced } = await producer.enqueue(
        readJsonBody(event, MAX_ENQUEUE_BODY_BYTES),
        trace === undefined ? {} : { job: { trace } },
      );
      return json(duplicate ? 200 : 201, { ...job, duplicate, ...(debounced ? { debounced } : {}) });
    }),
    route("POST", "/jobs/batch", async (event) => {
      const parsed = EnqueueBatchRequest.safeParse(readJsonBody(event));
      if (!parsed.success) {
        throw new ClientError(
          "validation_error",
          "expected { jobs: [1..100 requests] }",
          issuesOf(parsed.error),
        );
      }
      return json(200, { results: await producer.enqueueBatch(parsed.data.jobs, requestTrace(event)) });
    }),
    route("GET", "/jobs", async (event) => {
      const parsed = ListJobsQuery.safeParse(queryParams(event));
      if (!parsed.success)
        throw new ClientError("validation_error", "invalid list query", issuesOf(parsed.error));
      const { view, waiting, limit, cursor, ...filter } = parsed.data;
      if (waiting) return json(200, await waitingCounts(engine, queryParams(event)));
      // Newest first whatever the filters (docs/guide/finding-runs.md); an empty cursor is none.
      const page = await searchJobs(store, filter, { limit, ...(cursor ? { cursor } : {}) });
      const items =
        view === "summary"
          ? page.items.map(toJobSummary)
          : await Promise.all(page.items.map((item) => listedJobView(store, item)));
      return json(200, {
        items,
        ...(page.cursor ? { cursor: page.cursor } : {}),
        ...(page.truncated ? { truncated: true } : {}),
      });
    }),
    route("GET", "/jobs/{id}", async (event) => {
      const id = jobId(event);
      const item = await getJob(store, id);
      if (!item) throw new ClientError("not_found", `job ${id} not found`);
      return json(200, await loadJobView(store, engine.claims, item));
    }),
    route("POST", "/jobs/{id}/cancel", async (event) => {
      // "requested": the job is running and stops at its next heartbeat, unless it finishes first.
      // "tombstoned": no job had an item; one still queued on a lean kind is dropped unrun.
      const { outcome, item } = await cancelJob(engine, jobId(event));
      return json(200, { ...(await loadJobView(store, engine.claims, item)), cancel: outcome });
    }),
    route("POST", "/jobs/replay", async (event) => json(200, await replayJobs(engine, readJsonBody(event)))),
    route("POST", "/jobs/{id}/retry", async (event) => json(200, await redriveJob(engine, jobId(event)))),
    // A paused job (onExhausted "pause") runs again, optionally with a new payload (§21).
    route("POST", "/jobs/{id}/resume", async (event) =>
      json(200, await resumePausedJob(engine, jobId(event), event.body ? readJsonBody(event) : {})),
    ),
    ...subscriptionRoutes(engine),
    ...groupRoutes(engine),
    ...durableRoutes(engine),
    ...queueRoutes(engine),
    ...keyRoutes(engine),
    ...scheduleRoutes(engine, engine.app.schedules),
  ];
}

/**
 * An API handler as middy makes it, on a plain Lambda context: named, so the package's declarations
 * don't spell out middy's inferred context, which names a type of the durable execution SDK.
 */
export type HttpHandler = middy.MiddyfiedHandler<HttpEvent, HttpResult, Error, Context>;

/**
 * The HTTP API as one middy handler over API Gateway v2 events. A request runs the handler of the
 * route key API Gateway matched (event.routeKey) only when its path is exactly that route's: no
 * route runs under `$default` or for a path variant (`/jobs/`, `/queues//pause`), which answer 404,
 * or 405 naming the methods when the path is one some route serves with another method.
 */
export function createApiHandler(engine: Engine): HttpHandler {
  return serveRoutes(engine, apiRoutes(engine));
}

/**
 * `routes` as one middy handler over API Gateway v2 events, matched exactly (createApiHandler): the
 * API's, or the token callback's one route (lib/handlers/token-callback.ts).
 */
export function serveRoutes(
  engine: Pick<Engine, "log" | "metrics">,
  routes: readonly ApiRoute[],
): HttpHandler {
  const handlers = new Map(routes.map((r) => [`${r.method} ${r.path}`, r.handler]));
  const matcher = routeMatcher([...handlers.keys()]);
  return middy<HttpEvent, HttpResult, Error, Context>()
    .use(errorResponder(engine.log))
    .use({ after: async () => engine.metrics.flush(), onError: async () => engine.metrics.flush() })
    .handler(async (event) => {
      const method = event.requestContext?.http?.method ?? "";
      const path = event.requestContext?.http?.path ?? event.rawPath ?? "";
      const target = matcher.find(method, path);
      const handler =
        target && target.routeKey === event.routeKey ? handlers.get(target.routeKey) : undefined;
      if (!target || !handler) {
        const allowed = target ? [] : matcher.methods(path);
        if (allowed.length > 0) return methodNotAllowed(method, path, allowed);
        throw new ClientError("not_found", `no route for ${clip(method)} ${clip(path)}`);
      }
      // API Gateway's own path parameters (if any) win, as they are what it authorized.
      return handler({ ...event, pathParameters: { ...target.pathParameters, ...event.pathParameters } });
    });
}
