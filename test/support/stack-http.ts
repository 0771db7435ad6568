import { waitFor } from "./wait.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field.
export type Json = Record<string, any>;

/** JSON over HTTP against a running local stack, and a bounded wait for a job's status. */
export function stackHttp(baseUrl: () => string) {
  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  }

  const untilStatus = (id: string, status: string, timeoutMs = 30_000) =>
    waitFor(
      async () => {
        const r = await call("GET", `/jobs/${id}`);
        return r.body.status === status ? r.body : undefined;
      },
      `job ${id} to be ${status}`,
      timeoutMs,
    );

  return { call, untilStatus };
}
