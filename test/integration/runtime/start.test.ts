// A start on a busy node (issue 27: replicas crash-looped at load 20): the sandbox host's start and
// the reload of the installed bundles retry with backoff within pool.start_timeout_ms instead of
// failing at the first slow or failed attempt. The slowness is injected: a preload (NODE_OPTIONS)
// that makes the real sandbox host die or stall while starting, and a backend whose first load runs
// past its budget.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { createRuntime, VcpError } from "../../../src/index.js";
import type { ChainBackend } from "../../../src/pool/backend.js";
import { silentLogger, type Logger } from "../../../src/observe/events.js";
import { startSandbox } from "../../../src/pool/index.js";
import { testBundle } from "../../support/bundles.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { bundle, CONTINUE_CODE, hook, task } from "../pool/helpers.js";

const dirs: string[] = [];
const savedNodeOptions = process.env["NODE_OPTIONS"];
afterEach(() => {
  if (savedNodeOptions === undefined) delete process.env["NODE_OPTIONS"];
  else process.env["NODE_OPTIONS"] = savedNodeOptions;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vcp-start-"));
  dirs.push(dir);
  return dir;
}

/** Warnings and errors logged, by message. */
function recordingLogger(): Logger & { messages: string[] } {
  const messages: string[] = [];
  const record = (_obj: unknown, msg?: string) => void messages.push(String(msg));
  return { ...silentLogger, warn: record, error: record, messages } as Logger & { messages: string[] };
}

/**
 * Every sandbox host forked from now on loads a preload that counts the host starts in a file and, on
 * the attempts `plan` names, exits before it is ready (a host killed while starting) or blocks its
 * main thread for `ms` (a node too busy to start it quickly). Returns the file of counts.
 */
function injectHostStart(plan: { dieOnAttempts?: number[]; stallMs?: number }): string {
  const dir = tempDir();
  const counter = join(dir, "starts");
  const preload = join(dir, "host-start.mjs");
  writeFileSync(
    preload,
    `import { isMainThread } from "node:worker_threads";
     import { appendFileSync, existsSync, readFileSync } from "node:fs";
     if (isMainThread && (process.argv[1] ?? "").endsWith("host-main.js")) {
       const counter = ${JSON.stringify(counter)};
       const attempt = (existsSync(counter) ? readFileSync(counter, "utf8").length : 0) + 1;
       appendFileSync(counter, "x");
       if (${JSON.stringify(plan.dieOnAttempts ?? [])}.includes(attempt)) process.exit(70);
       if (${plan.stallMs ?? 0} > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${plan.stallMs ?? 0});
     }`,
  );
  process.env["NODE_OPTIONS"] = `${savedNodeOptions ?? ""} --import=${pathToFileURL(preload).href}`.trim();
  return counter;
}

const starts = (counter: string): number => (existsSync(counter) ? readFileSync(counter, "utf8").length : 0);

describe("the sandbox host's start (pool.start_timeout_ms)", () => {
  test("a host that dies while starting is started again after a backoff, and the sandbox runs chains", async () => {
    const counter = injectHostStart({ dieOnAttempts: [1, 2] });
    const logger = recordingLogger();
    const sandbox = await startSandbox({ threads: 1, logger });
    try {
      expect(starts(counter)).toBe(3);
      expect(logger.messages.filter((m) => m === "sandbox: host start failed; retrying")).toHaveLength(2);
      const b = bundle("ok", CONTINUE_CODE);
      await sandbox.loadBundle(b);
      const done = await sandbox.runChain(task([hook("ok", b)]));
      expect(done.result.hook_results.map((r) => r.outcome)).toEqual(["ok"]);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  test("a slow host is waited for while pool.start_timeout_ms lasts, then killed: SANDBOX_START_FAILED names the setting", async () => {
    const counter = injectHostStart({ stallMs: 6000 });
    const began = performance.now();
    const err = await startSandbox({ threads: 1, startTimeoutMs: 1500 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VcpError);
    expect(err).toMatchObject({ code: "SANDBOX_START_FAILED", message: expect.stringContaining("within pool.start_timeout_ms (1500 ms, 1 attempt)") });
    // Killed at the end of its time, not waited for until it woke up (6 s).
    expect(performance.now() - began).toBeLessThan(5500);
    expect(starts(counter)).toBe(1);
  }, 60_000);
});

describe("reloading the installed bundles at start (pool.load_timeout_ms)", () => {
  /** A runtime's data directory holding one installed bundle. */
  async function dataDirWithBundle(): Promise<string> {
    const dataDir = tempDir();
    const first = await createRuntime({ dataDir, backend: createVmBackend() });
    await first.bundles.install(testBundle("guard", [{ name: "mark", type: "pre_inject" }], { mark: "function () { return { status: 'continue' }; }" }));
    await first.close();
    return dataDir;
  }

  /** A backend whose first `slowLoads` loads run past their budget, as on a node too busy to finish them in time. */
  function slowLoadingBackend(slowLoads: number): ChainBackend & { loads: number } {
    const vm = createVmBackend();
    const backend = Object.assign(Object.create(vm) as ChainBackend, {
      loads: 0,
      async loadBundle(code: Parameters<ChainBackend["loadBundle"]>[0]) {
        backend.loads++;
        if (backend.loads <= slowLoads) {
          throw new VcpError("INVALID_BUNDLE", `bundle ${code.name}: top-level code did not finish within 1000 ms`, { bundle: code.name, timed_out: true });
        }
        return vm.loadBundle(code);
      },
    });
    return backend;
  }

  test("a reload that ran past its budget is tried again with backoff; the runtime starts with the bundle", async () => {
    const dataDir = await dataDirWithBundle();
    const backend = slowLoadingBackend(2);
    const logger = recordingLogger();
    const rt = await createRuntime({ dataDir, backend, logger });
    try {
      expect(rt.bundles.list().map((b) => b.bundle)).toEqual(["guard"]);
      expect(backend.loads).toBe(3);
      expect(logger.messages.filter((m) => m.startsWith("reloading an installed bundle ran past pool.load_timeout_ms"))).toHaveLength(2);
    } finally {
      await rt.close();
    }
  }, 30_000);

  test("when the loads keep running past it until pool.start_timeout_ms, the start fails and says which settings to raise", async () => {
    const dataDir = await dataDirWithBundle();
    const err = await createRuntime({ dataDir, backend: slowLoadingBackend(1000), sandbox: { startTimeoutMs: 1200 } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: "INVALID_BUNDLE",
      message: expect.stringMatching(/^reloading installed bundle 'guard' from .*: top-level code did not finish within 1000 ms \(its top-level code ran past pool\.load_timeout_ms at every try within pool\.start_timeout_ms/),
    });
  }, 30_000);
});
