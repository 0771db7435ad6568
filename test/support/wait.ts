/** Polls `probe` until it returns a value, failing after `timeoutMs`. Never used to wait out time itself. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** `promise`, or a failure naming `what` once `boundMs` pass first: a bound on a hang, never a wait for state. */
export function withinMs<T>(promise: Promise<T>, what: string, boundMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${boundMs} ms`)), boundMs);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}
