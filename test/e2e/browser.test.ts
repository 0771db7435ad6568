import { afterEach } from "vitest";
import { useConsoleBrowser } from "../support/console-browser.ts";

/**
 * Every test that drives Debian's chromium against a real `npm start`, on one stack and one
 * browser. The eight files below were test files of their own, each starting its own pair: about
 * two CPU seconds to start and stop one, and a fifth of a core for each second a pair stays up
 * idle (ticking every second, as here), up to four pairs side by side. Here they run one after
 * another, each file's tests in their own describe, reading the pair through consoleBrowser()
 * (test/support/console-browser.ts). To run one of them: `npx vitest run test/e2e/browser.test.ts
 * -t "<its describe>"`.
 *
 * Sharing the stack, a test makes its own jobs, tokens and probe items (fresh ids, or names with a
 * random part), looks only at those, and puts back what it changes (a queue it pauses, a job it
 * leaves running). The one test that needs the stack as it started is the first of console.ts,
 * whose README picture (docs/console.png) lists its three jobs and no others: so console.ts comes
 * first.
 */
const { http } = useConsoleBrowser();

// A test that fails between its pause of a queue and its resume would leave the queue paused for
// every test after it on the shared stack (each file had its own): every test starts with every
// queue running.
afterEach(async () => {
  for (const queue of (await http.call("GET", "/queues")).body.items as { name: string; paused: boolean }[])
    if (queue.paused) await http.call("POST", `/queues/${queue.name}/resume`);
});

// Imported after the hooks above are set, in this order (the tests run in the order they are declared).
await import("./browser/console.ts");
await import("./browser/console-timeline.ts");
await import("./browser/console-paused.ts");
await import("./browser/console-durable.ts");
await import("./browser/console-realtime.ts");
await import("./browser/console-security.ts");
await import("./browser/realtime-browser.ts");
await import("./browser/emulator-security.ts");
