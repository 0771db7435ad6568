import type { AppNames } from "../lib/declarations/app-names.ts";
import { type AnswerShape, answerShapes } from "./answer-shapes.ts";
import { SkyforgeApiError } from "./errors.ts";
import type {
  JobSteps,
  SkyforgeClient,
  TokenCompleted,
  TokenView,
  WaitingCounts,
} from "./skyforge-client.ts";
import type { ApiRequest } from "./transport.ts";

type DurableCalls = Pick<
  SkyforgeClient<AppNames>,
  "steps" | "waitingCounts" | "token" | "completeToken" | "sendEvent"
>;

/** How create-client.ts makes a call: one request, its answer checked against the route's shape. */
export interface CallTools {
  object<T>(request: ApiRequest, shape: AnswerShape): Promise<T>;
  /** A path parameter, escaped (and refused when it can't name anything). */
  segment(value: string): string;
}

/**
 * A token as completeToken was given it: a url (absolute, or a bare path when the engine had no
 * base URL), or an id. From a url, the id is the segment after its last `/tokens/` and the secret its
 * `secret` parameter. The request goes through the client's own transport, never to the url's host:
 * a url is anyone's text, and the client's credentials are not sent where a text says.
 */
export function tokenTarget(urlOrId: string, secret: string | undefined): { id: string; secret?: string } {
  if (!urlOrId.includes("/")) return { id: urlOrId, ...(secret !== undefined ? { secret } : {}) };
  let url: URL;
  try {
    url = new URL(urlOrId, "http://token.invalid");
  } catch {
    throw refused(`"${urlOrId.slice(0, 80)}" is not a token's url`);
  }
  const at = url.pathname.lastIndexOf("/tokens/");
  const id = at < 0 ? "" : decodeURIComponent(url.pathname.slice(at + "/tokens/".length));
  if (!id || id.includes("/"))
    throw refused(`"${urlOrId.slice(0, 80)}" names no token: expected …/tokens/<id>`);
  const fromUrl = url.searchParams.get("secret") ?? undefined;
  const chosen = secret ?? fromUrl;
  return { id, ...(chosen !== undefined ? { secret: chosen } : {}) };
}

function refused(message: string): SkyforgeApiError {
  return SkyforgeApiError.refused("validation_error", message, [{ path: "urlOrId", message }]);
}

/** The durable jobs' calls (docs/guide/durable-jobs.md): steps, tokens and events. */
export function durableCalls({ object, segment }: CallTools): DurableCalls {
  return {
    steps: async (jobId) =>
      object<JobSteps>({ method: "GET", path: `/jobs/${segment(jobId)}/steps` }, answerShapes.jobSteps),
    waitingCounts: async (options = {}) =>
      object<WaitingCounts>(
        { method: "GET", path: "/jobs", query: { waiting: "true", queue: options.queue } },
        answerShapes.waitingCounts,
      ),
    token: async (id) =>
      object<TokenView>({ method: "GET", path: `/tokens/${segment(id)}` }, answerShapes.token),
    async completeToken(urlOrId, data, options = {}) {
      const { id, secret } = tokenTarget(urlOrId, options.secret);
      return object<TokenCompleted>(
        {
          method: "POST",
          path: `/tokens/${segment(id)}`,
          ...(secret !== undefined ? { query: { secret } } : {}),
          body: { data: data ?? null },
        },
        answerShapes.tokenCompleted,
      );
    },
    async sendEvent(name, match, data) {
      // One call looks at the waiters it has time for; a `continuation` says where the same event
      // goes on (docs/guide/durable-jobs.md, Events).
      let resumed = 0;
      let continuation: string | undefined;
      do {
        const answer: { resumed: number; continuation?: string } = await object(
          {
            method: "POST",
            path: "/events",
            body: { name, match, data: data ?? null, ...(continuation ? { continuation } : {}) },
          },
          answerShapes.eventSent,
        );
        resumed += answer.resumed;
        // The same continuation twice would go round for ever: the answer is taken as the last.
        continuation = answer.continuation !== continuation ? answer.continuation : undefined;
      } while (continuation !== undefined);
      return { resumed };
    },
  };
}
