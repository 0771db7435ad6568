import { SkyforgeError } from "../errors.ts";
import type { AnyKind } from "./kind.ts";

/**
 * Kinds whose schema and handler load on first use (docs/architecture.md §13, LazyKindInput): a
 * function's init holds their declarations only; the first job that needs a kind's payload schema
 * or handler loads its module, once per process. The module's `payload` and `handler` are set on
 * the kind itself, so every holder of the kind (the registry, a producer, a runner) sees them from
 * then on. A load that fails is not kept: the next job of the kind tries again.
 */

/** A kind's module threw while loading, or its default export is not `{ payload, handler }`. */
export class KindLoadError extends SkyforgeError {
  override readonly name = "KindLoadError";
  readonly kind: string;

  constructor(kind: string, module: string, cause: unknown) {
    const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`kind "${kind}": its module ${module} failed to load: ${reason}`.slice(0, 1000), { cause });
    this.kind = kind;
  }
}

const pending = new WeakMap<AnyKind, Promise<AnyKind>>();

/** A kind declared with `load` whose module hasn't loaded yet. */
export function awaitsLoad(kind: AnyKind): boolean {
  return kind.load !== undefined && kind.handler === undefined;
}

/**
 * How a kind names its module in an error: the specifier its `load` imports, as its source shows it
 * (`() => import("./echo.job.ts")`, or a test runner's rewrite of it). A bundle inlines the module
 * and leaves no specifier: then "(its load())", and the kind's declaration says which module it is.
 */
export function moduleLabel(kind: AnyKind): string {
  const specifier = /import\w*\(\s*["'`]([^"'`]+)["'`]\s*\)/.exec(String(kind.load))?.[1];
  return specifier ? `"${specifier}"` : "(its load())";
}

/** The kind with its schema and handler: at once when it has them, else after its module loads. */
export function kindReady<K extends AnyKind | undefined>(kind: K): Promise<K> {
  if (kind === undefined || !awaitsLoad(kind)) return Promise.resolve(kind);
  let loading = pending.get(kind);
  if (!loading) {
    loading = loadModule(kind).finally(() => pending.delete(kind));
    pending.set(kind, loading);
  }
  return loading as Promise<K>;
}

async function loadModule(kind: AnyKind): Promise<AnyKind> {
  const load = kind.load as NonNullable<AnyKind["load"]>;
  let module: unknown;
  try {
    module = (await load()).default;
  } catch (err) {
    throw new KindLoadError(kind.name, moduleLabel(kind), err);
  }
  const { payload, handler } = (module ?? {}) as Partial<Pick<AnyKind, "payload" | "handler">>;
  if (typeof payload?.safeParse !== "function" || typeof handler !== "function") {
    const shape = new Error("its default export is not { payload, handler } (the app's defineJob)");
    throw new KindLoadError(kind.name, moduleLabel(kind), shape);
  }
  Object.assign(kind, { payload, handler });
  return kind;
}
