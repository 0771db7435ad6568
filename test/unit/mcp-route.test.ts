import { describe, expect, it } from "vitest";
import { isLoopbackPeer } from "../../local/mcp-route.ts";

/** /mcp answers peers on this machine only (docs/guide/mcp.md, "Who may call /mcp"), whatever the stack listens on. */
describe("isLoopbackPeer", () => {
  it.each(["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])("%s is on this machine", (address) => {
    expect(isLoopbackPeer(address)).toBe(true);
  });

  it.each([
    "10.0.0.7",
    "192.168.1.20",
    "::ffff:10.0.0.7",
    "fe80::1",
    "128.0.0.1",
    "127.0.0.1.evil",
    "::ffff:127.0.0.1:80",
    "",
    undefined,
  ])("%s is not", (address) => {
    expect(isLoopbackPeer(address)).toBe(false);
  });
});
