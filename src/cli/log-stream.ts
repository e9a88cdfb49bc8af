/**
 * `vcp-hooks serve`'s output is a JSON log stream, one object per line, from its first line to its
 * last: what a collector (Kubernetes, journald, Docker) reads. Besides our own pino lines, a process
 * prints through three doors that bypass the logger; while serve runs, each goes through it instead:
 *
 * - `console.*`: libraries print there — ioredis warns with `console.warn` ("[WARN] Redis server does
 *   not require a password, but a password was supplied.", "Skipping the ready check …") and reports
 *   an unheard error event with `console.error`;
 * - process warnings (Node's DeprecationWarning, ExperimentalWarning, MaxListenersExceededWarning,
 *   fastify's FSTDEP… warnings): Node's own listener writes them to stderr as text;
 * - an uncaught exception or unhandled rejection: Node prints the stack to stderr and exits.
 *
 * Not covered: what native code writes to fd 2 itself (V8's "FATAL ERROR: … heap out of memory").
 * The sandbox host is another process whose stderr serve reads (src/pool/host-process.ts), not ours.
 */
import { format } from "node:util";
import type { OperationalLogger } from "../index.js";

type ConsoleMethod = "log" | "info" | "debug" | "trace" | "warn" | "error";
const LEVEL_OF: Readonly<Record<ConsoleMethod, "info" | "debug" | "warn" | "error">> = { log: "info", info: "info", debug: "debug", trace: "debug", warn: "warn", error: "error" };

/**
 * Send console output, process warnings and uncaught errors to `current()` (read at each line, so
 * the logger can be replaced once the config names its level and redact keys). Returns the undo.
 *
 * @example
 * ```ts
 * let logger = createOperationalLogger();
 * const restore = routeProcessOutput(() => logger);
 * console.warn("[WARN] from a library"); // {"level":40,…,"source":"console","msg":"[WARN] from a library"}
 * ```
 */
export function routeProcessOutput(current: () => OperationalLogger, options: { exit?: (code: number) => void } = {}): () => void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const saved = new Map<ConsoleMethod, (...args: unknown[]) => void>();
  for (const method of Object.keys(LEVEL_OF) as ConsoleMethod[]) {
    saved.set(method, console[method]);
    console[method] = (...args: unknown[]) => current()[LEVEL_OF[method]]({ source: "console" }, format(...args));
  }
  // Node's default listener prints warnings as text; ours replaces it (and is the only one left).
  const nodeWarningListeners = process.listeners("warning");
  process.removeAllListeners("warning");
  const onWarning = (warning: Error & { code?: string }) =>
    current().warn({ source: "process", warning: { name: warning.name, ...(warning.code !== undefined ? { code: warning.code } : {}), message: warning.message } }, `${warning.name}: ${warning.message}`);
  process.on("warning", onWarning);
  // A crash is a fatal JSON line with the whole cause chain, then the exit Node would have made.
  const onFatal = (kind: string) => (err: unknown) => {
    current().fatal({ err }, `${kind}: ${err instanceof Error ? err.message : String(err)}; exiting`);
    exit(1);
  };
  const onUncaught = onFatal("uncaught exception");
  const onRejection = onFatal("unhandled rejection");
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onRejection);
  return () => {
    for (const [method, original] of saved) console[method] = original;
    process.off("warning", onWarning);
    for (const listener of nodeWarningListeners) process.on("warning", listener as (warning: Error) => void);
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onRejection);
  };
}
