import * as z from "zod";
import { defineKind } from "../define.ts";

/**
 * A durable job (docs/architecture.md §22): an account is made once, the job sleeps, then waits for
 * a person's approval through a token's url, and sends the welcome once approved.
 */
export const onboard = defineKind({
  name: "onboard",
  description:
    "Onboards a user: makes the account, waits sleepSeconds, then waits for a person's approval (a token) and sends the welcome.",
  payload: z.object({ user: z.string().min(1), sleepSeconds: z.number().int().min(0).max(3600).optional() }),
  // What a person's approval carries, for whoever completes the token (the MCP server lists and checks it).
  tokens: { approval: z.object({ approved: z.boolean(), by: z.string().min(1).optional() }) },
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ user, sleepSeconds }, ctx) => {
    const { account } = await ctx.step("create-account", async () => ({ account: `acct-${user}` }));
    await ctx.sleep("cool-off", sleepSeconds ?? 2);
    const token = await ctx.createToken("approval", { timeoutSeconds: 600 });
    const approval = await ctx.waitForToken(token);
    const { sentAt } = await ctx.step("send-welcome", async () => ({ sentAt: new Date().toISOString() }));
    return { user, account, approval, sentAt };
  },
});
