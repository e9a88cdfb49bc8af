// serve's process output is JSON lines (src/cli/log-stream.ts): what libraries print with console.*,
// Node's process warnings and an uncaught error all go through the operational logger.
import { Writable } from "node:stream";
import { afterEach, describe, expect, test } from "vitest";
import { routeProcessOutput } from "../../../src/cli/log-stream.js";
import { createOperationalLogger } from "../../../src/observe/logger.js";

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

function capture() {
  const lines: Array<Record<string, any>> = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split("\n")) if (line !== "") lines.push(JSON.parse(line) as Record<string, any>);
      cb();
    },
  });
  return { lines, logger: createOperationalLogger({ destination, level: "debug", base: { svc: "vcp-hooks" } }) };
}

const settle = () => new Promise((r) => setImmediate(r));

describe("routeProcessOutput", () => {
  test("console.* from a library becomes a log line at the matching level", async () => {
    const { lines, logger } = capture();
    restore = routeProcessOutput(() => logger);
    console.warn("[WARN] Redis server does not require a password, but a password was supplied.");
    console.error("[ioredis] Unhandled error event: %s", "Error: connect ECONNREFUSED");
    console.log("plain", { a: 1 });
    restore();
    restore = undefined;
    await settle();
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, svc: "vcp-hooks", source: "console", msg: "[WARN] Redis server does not require a password, but a password was supplied." }),
      expect.objectContaining({ level: 50, source: "console", msg: "[ioredis] Unhandled error event: Error: connect ECONNREFUSED" }),
      expect.objectContaining({ level: 30, source: "console", msg: "plain { a: 1 }" }),
    ]);
  });

  test("a process warning is a log line, and Node's own text printer is off until restored", async () => {
    const { lines, logger } = capture();
    const before = process.listeners("warning");
    restore = routeProcessOutput(() => logger);
    expect(process.listeners("warning")).toHaveLength(1);
    process.emitWarning("requestIdLogLabel option is deprecated", { type: "FastifyDeprecation", code: "FSTDEP024" });
    await new Promise((r) => setTimeout(r, 20)); // warnings are emitted on the next tick
    restore();
    restore = undefined;
    expect(process.listeners("warning")).toEqual(before);
    expect(lines).toEqual([expect.objectContaining({ level: 40, source: "process", warning: { name: "FastifyDeprecation", code: "FSTDEP024", message: "requestIdLogLabel option is deprecated" }, msg: "FastifyDeprecation: requestIdLogLabel option is deprecated" })]);
  });

  test("an uncaught exception is one fatal line with its cause, then exit 1", async () => {
    const { lines, logger } = capture();
    const exits: number[] = [];
    restore = routeProcessOutput(() => logger, { exit: (code) => void exits.push(code) });
    (process.emit as (event: string, ...args: unknown[]) => boolean)("uncaughtException", new Error("listener failed", { cause: new Error("getaddrinfo ENOTFOUND x") }), "uncaughtException");
    await settle();
    expect(exits).toEqual([1]);
    expect(lines).toEqual([expect.objectContaining({ level: 60, msg: "uncaught exception: listener failed; exiting", err: expect.objectContaining({ type: "Error", message: "listener failed", cause: expect.objectContaining({ message: "getaddrinfo ENOTFOUND x" }) }) })]);
  });
});
