import type { API_ROUTE_KEYS } from "../api/route-keys.ts";

/**
 * What `link: [jobs]` grants a producer's function (infra/skyforge.ts getSSTLink), as data: enqueue,
 * and nothing else. Over HTTP, execute-api:Invoke on the two enqueue routes of the component's API
 * (the client's `enqueue` and `enqueueMany`); by Lambda Invoke, the enqueue function. Not the API
 * function: invoking it directly passes by the routes' IAM auth, so it answers every route, the
 * operator's included. check:deploy holds every linked role to exactly these statements.
 */
export const PRODUCER_ROUTE_KEYS = [
  "POST /jobs",
  "POST /jobs/batch",
] as const satisfies readonly (typeof API_ROUTE_KEYS)[number][];

/** The stage SST gives an HTTP API: its routes' ARNs name it. */
export const HTTP_API_STAGE = "$default";

export const PRODUCER_ACTIONS = {
  /** On each producer route: `<api execution arn>/$default/POST/jobs`. */
  api: "execute-api:Invoke",
  /** On the enqueue function. */
  enqueue: "lambda:InvokeFunction",
} as const;

/** Each producer route as the tail of its execute-api ARN: "$default/POST/jobs". */
export function producerRoutePaths(): string[] {
  return PRODUCER_ROUTE_KEYS.map((key) => {
    const [method, path] = key.split(" ");
    return `${HTTP_API_STAGE}/${method}${path}`;
  });
}
