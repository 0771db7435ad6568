/**
 * One JSON line per API request in the stage's access log. Every route is IAM-authorized, so the
 * caller's ARN (`$context.identity.userArn`, the user or assumed role that signed the request) is
 * what says who paused a queue or cancelled a job; SST's default format leaves it out. SST's format
 * also wraps each value in an extra pair of escaped quotes; this one writes plain JSON strings.
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
