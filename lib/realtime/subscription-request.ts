import * as z from "zod";

/** POST /jobs/{id}/subscriptions' body (docs/guide/realtime.md): all optional. */
export const SubscriptionRequest = z.strictObject({
  /** Also the job's group's topic: its children's ends. */
  group: z.boolean().default(false),
  /** How long the token connects: 5 minutes (IoT Core's shortest connection) to 1 day, an hour unless asked. */
  expiresInSeconds: z.number().int().min(300).max(86_400).default(3_600),
  /** The stream position the caller has seen; checked here so a bad cursor fails before a browser holds it. */
  from: z.number().int().min(0).optional(),
});

/** POST /queues/{name}/subscriptions' body: a queue's tail has no cursor and no group. */
export const QueueSubscriptionRequest = SubscriptionRequest.pick({ expiresInSeconds: true });
