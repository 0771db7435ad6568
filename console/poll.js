import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/**
 * Calls `load` now and every `everyMs` while the page is visible (a hidden tab costs the API
 * nothing), and again whenever `deps` change. Answers { data, error, at, refresh }: the last good
 * data stays on screen while a later call fails. A slow call is never overlapped by the next one.
 */
export function usePoll(load, everyMs, deps = []) {
  const [state, setState] = useState({ data: undefined, error: undefined, at: undefined });
  const generation = useRef(0);
  const busy = useRef(false);

  const run = useCallback(async () => {
    const mine = generation.current;
    busy.current = true;
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, error: undefined, at: new Date() });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ ...s, error, at: new Date() }));
    } finally {
      busy.current = false;
    }
  }, deps);

  useEffect(() => {
    generation.current += 1;
    setState((s) => ({ ...s, data: undefined, error: undefined }));
    run();
    const timer = setInterval(() => {
      if (!busy.current && document.visibilityState === "visible") run();
    }, everyMs);
    const onVisible = () => document.visibilityState === "visible" && run();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [run, everyMs]);

  return { ...state, refresh: run };
}
