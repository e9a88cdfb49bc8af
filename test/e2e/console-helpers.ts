/**
 * The console's end-to-end harness: a real runtime and the real server (as helpers.ts), with the
 * console options the tests need (a security-report directory, a faster stream heartbeat), plus a
 * reader for the decision stream and the bundle the console tests fire.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime } from "../../src/index.js";
import { createServer, type VcpServer } from "../../src/server/app.js";
import type { ConsoleOptions } from "../../src/server/console-routes.js";
import { ALLOWLIST, keys, LIMITS, settings } from "./helpers.js";

export interface ConsoleHarness {
  url: string;
  server: VcpServer;
  runtime: Awaited<ReturnType<typeof createRuntime>>;
  reportDir: string;
  close(): Promise<void>;
}

export async function startConsoleHarness(consoleOptions: ConsoleOptions = {}): Promise<ConsoleHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), "vcp-console-"));
  const reportDir = mkdtempSync(join(tmpdir(), "vcp-console-report-"));
  const runtime = await createRuntime({
    dataDir,
    keyring: { keys: [{ key_id: "ops", public_key: keys.ops.publicKeyPem, max_trust: "deployment" }] },
    requireSignatures: true,
    maxBundleBytes: LIMITS.bundle_bytes,
    sessionHookAllowlist: [...ALLOWLIST],
    sandbox: { threads: 2 },
  } as never);
  const server = await createServer({ runtime, settings: settings(), console: { securityReportDir: reportDir, ...consoleOptions } });
  const url = await server.listen("127.0.0.1", 0);
  return {
    url,
    server,
    runtime,
    reportDir,
    async close() {
      await server.close();
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(reportDir, { recursive: true, force: true });
    },
  };
}

/** Guest text an attacker controls, shown by the console: it must appear as text, never as markup. */
export const XSS = "<img src=x onerror=alert(1)>";

/** A bundle whose pre_inject hook redacts an e-mail address and annotates with hostile text. */
export const CONSOLE_CODE = `var __vcp_bundle = {
  redact: function (input) {
    var ctx = JSON.parse(JSON.stringify(input.context));
    ctx.note = String(ctx.note || "").replace(/[\\w.+-]+@[\\w-]+\\.[\\w.]+/g, "[email]");
    return { status: "modify", modified_context: ctx, annotations: { label: ${JSON.stringify(XSS)}, seen: "Bearer abcdefghijklmnop" } };
  }
};`;

export function consoleManifest(version = "1.0.0") {
  return { bundle: "console-demo", version, trust: "deployment", hooks: [{ name: "redact_note", type: "pre_inject", action: "redact", priority: 50, timeout_ms: 1000 }] };
}

/** Reads SSE events from a fetch body (as the console does), one at a time. */
export async function openStream(url: string, token: string, query = "") {
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/decisions/stream${query}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    res,
    /** The next event named `name` (others are skipped). */
    async next(name: string): Promise<any> {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === name && data !== undefined) return JSON.parse(data);
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before a '${name}' event`);
        buffer += value;
      }
    },
    /** Resolves true when the server ends the stream. */
    async ended(): Promise<boolean> {
      for (;;) {
        const { done } = await reader.read();
        if (done) return true;
      }
    },
    close: () => controller.abort(),
  };
}
