import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/**
 * What usePoll answers: the last good data, the last error, when the last call ended, a way to call
 * now, and a way to rest the timer (`pause(true)`: a live subscription shows the same data,
 * console/live-job.js) and start it again.
 * @template T
 * @typedef {PollState<T> & { refresh: () => Promise<void>, pause: (paused: boolean) => void }} Poll
 */
/**
 * @template T
 * @typedef {{ data: T | undefined, error: unknown, at: Date | undefined }} PollState
 */

/**
 * Calls `load` now and every `everyMs` while the page is visible (a hidden tab costs the API
 * nothing), and again whenever `deps` change. Answers { data, error, at, refresh }: the last good
 * data stays on screen while a later call fails. A slow call is never overlapped by the next one.
 *
 * Only the latest call counts: a call that `deps` changed under, or that a refresh started over, is
 * left to finish unseen, and no longer holds the timer back (the call that replaced it does).
 * @template T
 * @param {() => Promise<T>} load
 * @param {number} everyMs
 * @param {unknown[]} [deps]
 * @returns {Poll<T>}
 */
export function usePoll(load, everyMs, deps = []) {
  const [state, setState] = useState(
    /** @type {PollState<T>} */ ({ data: undefined, error: undefined, at: undefined }),
  );
  /**
   * The call in flight whose answer will be shown; undefined when none is.
   * @type {import("preact").RefObject<object | undefined>}
   */
  const latest = useRef(undefined);
  /**
   * The `run` of the current deps: a refresh kept from before they changed starts nothing.
   * @type {import("preact").RefObject<(() => Promise<void>) | undefined>}
   */
  const live = useRef(undefined);
  /** Read by the timer: resting needs no new timer. */
  const paused = useRef(false);

  const run = useCallback(async function poll() {
    if (live.current !== poll) return;
    const mine = {};
    latest.current = mine;
    try {
      const data = await load();
      if (latest.current === mine) setState({ data, error: undefined, at: new Date() });
    } catch (error) {
      if (latest.current === mine) setState((s) => ({ ...s, error, at: new Date() }));
    } finally {
      if (latest.current === mine) latest.current = undefined;
    }
  }, deps);

  useEffect(() => {
    live.current = run;
    setState((s) => ({ ...s, data: undefined, error: undefined }));
    run();
    const idle = () =>
      !paused.current && latest.current === undefined && document.visibilityState === "visible";
    const timer = setInterval(() => idle() && run(), everyMs);
    const onVisible = () => idle() && run();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      // What is in flight was asked for the old deps (or for a page that is gone): shown nowhere.
      live.current = undefined;
      latest.current = undefined;
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [run, everyMs]);

  const pause = useCallback((/** @type {boolean} */ rest) => {
    paused.current = rest;
  }, []);
  return { ...state, refresh: run, pause };
}
