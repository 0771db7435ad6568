/**
 * One JSON line per API request in the stage's access log. Every route but the token callback is
 * IAM-authorized, so the caller's ARN (`$context.identity.userArn`, the user or assumed role that
 * signed the request) is what says who paused a queue or cancelled a job; SST's default format
 * leaves it out (an unsigned `POST /tokens/{id}` logs no ARN, only its ip and user agent). SST's
 * format also wraps each value in an extra pair of escaped quotes; this one writes plain JSON strings.
 *
 * A token's url carries its secret in the query string (`?secret=`: docs/guide/security.md). None of
 * these fields holds a query string: `$context.path` is the path alone, `$context.routeKey` the
 * route's template (`POST /tokens/{id}`), and an HTTP API has no context variable for the query.
 * Adding one (or logging the whole event in a function) would write every live token's secret to
 * the logs: don't.
 */
export const apiAccessLogFormat = JSON.stringify({
  requestTime: "$context.requestTime",
  requestId: "$context.requestId",
  httpMethod: "$context.httpMethod",
  path: "$context.path",
  routeKey: "$context.routeKey",
  status: "$context.status",
  responseLatency: "$context.responseLatency",
  integrationRequestId: "$context.integration.requestId",
  integrationStatus: "$context.integration.status",
  integrationLatency: "$context.integration.latency",
  integrationServiceStatus: "$context.integration.integrationStatus",
  ip: "$context.identity.sourceIp",
  userAgent: "$context.identity.userAgent",
  callerArn: "$context.identity.userArn",
});
