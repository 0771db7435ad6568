import type { AppNames } from "../lib/declarations/app-names.ts";
import { flowKey, flowKeyPath } from "../lib/job/flow-key.ts";
import type { GroupChildrenPage, GroupView } from "../lib/job/group-schemas.ts";
import type { JobSummary, JobView } from "../lib/job/schemas.ts";
import { type AnswerShape, answerShapes, checkAnswer } from "./answer-shapes.ts";
import type { AppTypes, AppTypesNames } from "./app-types.ts";
import { durableCalls } from "./durable-calls.ts";
import { enqueueInBatches } from "./enqueue-many.ts";
import { environmentTransport } from "./environment-transport.ts";
import { errorForAnswer, SkyforgeApiError } from "./errors.ts";
import type {
  BusiestKeys,
  CancelOutcome,
  Enqueued,
  FlowKeyView,
  JobPage,
  ListOptions,
  QueueView,
  ReplayAnswer,
  ScheduleView,
  SearchOptions,
  SkyforgeClient,
  SubscriptionAnswer,
  SubscriptionOptions,
} from "./skyforge-client.ts";
import { traceHeadersFor } from "./trace-context.ts";
import type { ApiRequest, ApiResponse, Transport } from "./transport.ts";
import { type EnqueueCheck, enqueueCheck } from "./validate.ts";

export interface ClientOptions<A extends AppNames> {
  /**
   * How requests reach the API: httpTransport (SigV4-signed HTTP) or invokeTransport (Lambda
   * Invoke). Left out: the HTTP API at SKYFORGE_ENDPOINT (client/environment-transport.ts).
   */
  transport?: Transport;
  /**
   * The app value (app/index.ts). With it, every payload is also checked by its kind's schema (and
   * the request by the API's own schema) before sending: a bad one throws the API's error
   * (`validation_error`, `unknown_kind`) and nothing is sent. Without it, only the types check.
   */
  app?: A;
}

/**
 * The typed producer and operator client:
 * `createClient<typeof app>({ transport })`, or `createClient({ app, transport })` to also validate
 * payloads before sending; `createClient<typeof app>()` sends to SKYFORGE_ENDPOINT. An error answer throws SkyforgeApiError with the API's code; no answer,
 * or one that is not the API's, throws SkyforgeTransportError (client/errors.ts).
 */
export function createClient<A extends AppNames>(options?: ClientOptions<A>): SkyforgeClient<A>;
/**
 * `createClient<SkyforgeApp>({ transport })` with the interface `npx skyforge types` writes, in a
 * project without the app's source (client/app-types.ts): the same checks of kinds, payloads and
 * queues at compile time; none before sending (the API checks).
 */
export function createClient<A extends AppTypes>(options?: {
  transport?: Transport;
}): SkyforgeClient<AppTypesNames<A>>;
export function createClient<A extends AppNames>(options: ClientOptions<A> = {}): SkyforgeClient<A> {
  const transport = options.transport ?? environmentTransport();
  const check: EnqueueCheck | undefined = options.app ? enqueueCheck(options.app) : undefined;

  async function call(request: ApiRequest): Promise<ApiResponse> {
    const answer = await transport.send(request);
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw errorForAnswer(answer.status, answer.body);
  }
  /**
   * A call whose answer is a JSON object of the route's shape (every route but DELETE's 204);
   * anything else did not come from the API (client/answer-shapes.ts).
   */
  async function object<T>(request: ApiRequest, shape: AnswerShape): Promise<T> {
    const { status, body } = await call(request);
    return checkAnswer(request, status, body, shape) as T;
  }
  const subscription = (id: string, body: SubscriptionOptions = {}) =>
    object<SubscriptionAnswer>(
      { method: "POST", path: `/jobs/${segment(id)}/subscriptions`, body },
      answerShapes.subscription,
    );
  const refuseIfInvalid = async (request: unknown) => {
    const refused = await check?.(request);
    if (refused) throw refused;
  };

  return {
    async enqueue(kind, payload, enqueueOptions = {}) {
      const { traceparent, tracestate, ...rest } = enqueueOptions;
      const request = { ...rest, kind, payload };
      // Read before the check's await: the caller's active trace context holds only until then.
      const headers = traceHeadersFor({ traceparent, tracestate });
      await refuseIfInvalid(request);
      const { duplicate, debounced, ...job } = await object<
        JobView & { duplicate: boolean; debounced?: boolean }
      >({ method: "POST", path: "/jobs", body: request, headers }, answerShapes.enqueued);
      return { job, duplicate, ...(debounced ? { debounced } : {}) } satisfies Enqueued;
    },
    enqueueMany: (jobs) => {
      // The caller's trace context, read before any await (each batch's request goes out after one).
      const headers = traceHeadersFor();
      return enqueueInBatches(
        jobs,
        (batch) =>
          object({ method: "POST", path: "/jobs/batch", body: { jobs: batch }, headers }, answerShapes.batch),
        check,
      );
    },
    get: async (id) => object<JobView>({ method: "GET", path: `/jobs/${segment(id)}` }, answerShapes.job),
    // One implementation for list's overloads: which of them fits is the API's `view`, not this code's.
    list: (async (listOptions: ListOptions<A> = {}) => {
      const { limit, ...rest } = listOptions;
      return object<JobPage<JobView | JobSummary>>(
        {
          method: "GET",
          path: "/jobs",
          query: { ...rest, ...(limit !== undefined ? { limit: String(limit) } : {}) },
        },
        answerShapes.jobPage,
      );
    }) as SkyforgeClient<A>["list"],
    jobs: {
      search: (async (options: SearchOptions<A> = {}) => {
        const { limit, createdAfter, createdBefore, ...rest } = options;
        const iso = (t: Date | string | undefined) => (t instanceof Date ? t.toISOString() : t);
        return object<JobPage<JobView | JobSummary>>(
          {
            method: "GET",
            path: "/jobs",
            query: {
              ...rest,
              createdAfter: iso(createdAfter),
              createdBefore: iso(createdBefore),
              ...(limit !== undefined ? { limit: String(limit) } : {}),
            },
          },
          answerShapes.jobPage,
        );
      }) as SkyforgeClient<A>["jobs"]["search"],
    },
    cancel: async (id) =>
      object<JobView & { cancel: CancelOutcome }>(
        { method: "POST", path: `/jobs/${segment(id)}/cancel` },
        answerShapes.cancelled,
      ),
    retry: async (id) =>
      object<JobView>({ method: "POST", path: `/jobs/${segment(id)}/retry` }, answerShapes.job),
    resume: async (id, options = {}) =>
      object<JobView>(
        { method: "POST", path: `/jobs/${segment(id)}/resume`, body: options },
        answerShapes.job,
      ),
    subscription,
    async *subscribe(id, subscriptionOptions = {}) {
      const { url, token } = await subscription(id, subscriptionOptions);
      // MQTT.js is loaded by the first subscription only: a producer that never follows a job never loads it.
      const realtime = await import("./realtime.ts");
      const from = subscriptionOptions.from;
      yield* realtime.subscribe({ url, token, ...(from !== undefined ? { from } : {}) });
    },
    replay: async (request) =>
      object<ReplayAnswer>({ method: "POST", path: "/jobs/replay", body: request }, answerShapes.replay),
    ...durableCalls({ object, segment }),
    queues: {
      list: async () =>
        (await object<{ items: QueueView[] }>({ method: "GET", path: "/queues" }, answerShapes.queueList))
          .items,
      pause: async (name) =>
        object<QueueView>({ method: "POST", path: `/queues/${segment(name)}/pause` }, answerShapes.queue),
      resume: async (name) =>
        object<QueueView>({ method: "POST", path: `/queues/${segment(name)}/resume` }, answerShapes.queue),
      update: async (name, patch) =>
        object<QueueView>(
          { method: "PATCH", path: `/queues/${segment(name)}`, body: patch },
          answerShapes.queue,
        ),
    },
    keys: {
      busiest: async (queue, limit) =>
        object<BusiestKeys>(
          {
            method: "GET",
            path: "/keys",
            query: { queue, ...(limit !== undefined ? { limit: String(limit) } : {}) },
          },
          answerShapes.busiestKeys,
        ),
      get: async (kind, key, limit) =>
        object<FlowKeyView>(
          {
            method: "GET",
            path: flowKeyPath(flowKey(kind, key), segment),
            ...(limit !== undefined ? { query: { limit } } : {}),
          },
          answerShapes.flowKey,
        ),
    },
    schedules: {
      list: async () =>
        (
          await object<{ items: ScheduleView[] }>(
            { method: "GET", path: "/schedules" },
            answerShapes.scheduleList,
          )
        ).items,
      async put(name, schedule) {
        // The API checks a schedule's kind, payload and queue exactly as an enqueue of its job.
        await refuseIfInvalid({
          kind: schedule.kind,
          payload: schedule.payload ?? null,
          ...(schedule.queue !== undefined ? { queue: schedule.queue } : {}),
        });
        return object<ScheduleView>(
          { method: "PUT", path: `/schedules/${segment(name)}`, body: schedule },
          answerShapes.schedule,
        );
      },
      async remove(name) {
        await call({ method: "DELETE", path: `/schedules/${segment(name)}` });
      },
    },
    groups: {
      async create(request) {
        const headers = traceHeadersFor();
        // Each child and the completion job pass the checks an enqueue of them would.
        for (const child of request.children) await refuseIfInvalid(child);
        await refuseIfInvalid(request.onComplete);
        return object({ method: "POST", path: "/groups", body: request, headers }, answerShapes.createdGroup);
      },
      get: async (id) =>
        object<GroupView>({ method: "GET", path: `/groups/${segment(id)}` }, answerShapes.group),
      children: async (id, query = {}) => {
        const { limit, ...rest } = query;
        return object<GroupChildrenPage>(
          {
            method: "GET",
            path: `/groups/${segment(id)}/children`,
            query: { ...rest, ...(limit !== undefined ? { limit: String(limit) } : {}) },
          },
          answerShapes.childrenPage,
        );
      },
      async add(id, children, addOptions = {}) {
        for (const child of children) refuseIfInvalid(child);
        return object<GroupView>(
          { method: "POST", path: `/groups/${segment(id)}/children`, body: { children, ...addOptions } },
          answerShapes.group,
        );
      },
      seal: async (id) =>
        object<GroupView>({ method: "POST", path: `/groups/${segment(id)}/seal` }, answerShapes.group),
      cancel: async (id) =>
        object<GroupView>({ method: "POST", path: `/groups/${segment(id)}/cancel` }, answerShapes.group),
    },
  };
}

/**
 * A path parameter, escaped. "", "." and ".." can't be one: URLs fold them away ("/jobs/.." is "/"),
 * so the request would reach another route. Refused as the API refuses a name it can't use.
 */
function segment(value: string): string {
  if (value === "" || value === "." || value === "..") {
    throw SkyforgeApiError.refused(
      "validation_error",
      `"${value}" can't name a job, queue, schedule, kind or key`,
      [{ path: "(path)", message: "empty, . and .. are not names" }],
    );
  }
  return encodeURIComponent(value);
}
