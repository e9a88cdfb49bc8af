import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Sandbox } from "../../../src/pool/index.js";
import { bundle, hook, startSandbox, task } from "./helpers.js";

/**
 * Two bundles share a worker: a `system`-trust hook starts a vcp.fetch and returns at once; the reply
 * arrives while another bundle's hook runs on the same worker. If the late reply still ran guest code
 * (here: code that aborts the whole process), the crash would happen under the other hook's slot
 * record and that innocent bundle would be blamed. Guest code must run only inside its own hook.
 */
describe("sandbox pool: a vcp.fetch reply that arrives after its hook returned", () => {
  let server: Server;
  let url: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    server = createServer((req, res) => setTimeout(() => res.end("late"), req.url === "/slower" ? 1500 : 300));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
    sandbox = await startSandbox({ threads: 1, fetch: { allowHosts: ["127.0.0.1"], denyLlmHosts: [] } });
  });
  afterAll(async () => {
    await sandbox?.close();
    server?.close();
  });

  test("runs no guest code: no crash under the next bundle's hook, nobody quarantined", async () => {
    const leaver = bundle(
      "leaver",
      `var __vcp_bundle = { act(input) {
        vcp.fetch(${JSON.stringify(url)}).then(() => { globalThis.n = '1'.repeat(2 ** 28).split('').length; });
        return { status: "continue" };
      } };`,
      { trust: "system", memoryMb: 64 },
    );
    // Awaits its own (slower) fetch: the worker's event loop, where the first reply lands, is free meanwhile.
    const bystander = bundle(
      "bystander",
      `var __vcp_bundle = { async act(input) { await vcp.fetch(${JSON.stringify(url.replace("/slow", "/slower"))}); return { status: "continue" }; } };`,
      { trust: "system" },
    );
    await sandbox.loadBundle(leaver);
    await sandbox.loadBundle(bystander);

    const first = await sandbox.runChain(task([hook("leave", leaver, { trust: "system", timeout_ms: 3000 })], 1));
    expect(first.result.hook_results[0]!.outcome).toBe("ok");
    // The same (only) worker now runs the bystander while the fetch reply arrives.
    const second = await sandbox.runChain(task([hook("stay", bystander, { trust: "system", timeout_ms: 5000 })], 2));
    expect(sandbox.stats().quarantined).not.toContain(bystander.digest);
    expect(second.result.hook_results[0]!.outcome).toBe("ok");
    expect(sandbox.stats().restarts).toBe(0);
  });
});
