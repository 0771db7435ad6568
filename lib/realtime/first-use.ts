/**
 * `load`, run on the first call, its promise shared by every call after, so a cold start that never
 * needs it (a package, a secret) doesn't pay for it. A load that fails is not kept: the next call
 * runs it again.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
}
