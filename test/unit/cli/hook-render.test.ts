// The adapter's pure parts: rendering per dialect and --on-error mode, event parsing, the one-shot
// HTTP response reader, and the ai-memory shim text.
import { describe, expect, test } from "vitest";
import { parseEvent, parseResponse, renderAnswer, renderFailure, shimText } from "../../../src/cli/hook.js";

describe("parseResponse", () => {
  test("Content-Length body", () => {
    const raw = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 13\r\n\r\n{"native":{}}');
    expect(parseResponse(raw, "o")).toEqual({ status: 200, text: '{"native":{}}' });
  });
  test("chunked body", () => {
    const raw = Buffer.from('HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n');
    expect(parseResponse(raw, "o")).toEqual({ status: 503, text: '{"a":1}' });
  });
  test.each([
    ["no blank line", "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n", /without a complete answer/],
    ["not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", /did not answer HTTP/],
    ["cut off", "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}", /cut-off/],
    ["bad chunk", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", /malformed chunked/],
  ])("%s is an error naming it", (_n, raw, message) => {
    expect(() => parseResponse(Buffer.from(raw), "http://x")).toThrow(message);
  });
});

describe("rendering", () => {
  test("gemini/llxprt/claude/codex/vscode/cursor/openhands/goose print the native JSON and exit 0 even for a deny", () => {
    for (const d of ["gemini", "llxprt", "claude", "codex", "vscode", "cursor", "openhands", "goose"] as const) {
      expect(renderAnswer(d, { native: { decision: "deny", reason: "no" }, exit_code: 2 })).toEqual({ stdout: '{"decision":"deny","reason":"no"}\n', stderr: "", exitCode: 0 });
    }
  });
  test("repo-yaml exits 2 when blocked", () => {
    expect(renderAnswer("repo-yaml", { native: { error: "blocked_by_policy" }, exit_code: 0 }).exitCode).toBe(2);
    expect(renderAnswer("repo-yaml", { native: { logs: [] }, exit_code: 0 }).exitCode).toBe(0);
  });
  test("the route's stderr is passed on, redacted", () => {
    expect(renderAnswer("claude", { native: {}, exit_code: 0, stderr: "token Bearer abcdefghijklmnop" }).stderr).toBe("token Bearer [REDACTED]\n");
  });
  test("--on-error block per dialect", () => {
    expect(JSON.parse(renderFailure("ai-memory", "block", "down").stdout)).toEqual({ action: "deny", reason: "vcp-hooks unavailable: down", code: 503 });
    expect(renderFailure("repo-yaml", "block", "down")).toMatchObject({ exitCode: 2 });
    expect(JSON.parse(renderFailure("repo-yaml", "block", "down").stdout).error).toBe("blocked_by_policy");
    expect(renderFailure("claude", "block", "down")).toEqual({ stdout: "", stderr: "vcp-hooks unavailable: down\n", exitCode: 2 });
    // Codex reads exit 2 with the reason on stderr as a block (PreToolUse: "blocking reason").
    expect(renderFailure("codex", "block", "down")).toEqual({ stdout: "", stderr: "vcp-hooks unavailable: down\n", exitCode: 2 });
  });
  test("--on-error allow is silent; in daemon mode it still owes a line", () => {
    expect(renderFailure("gemini", "allow", "down")).toEqual({ stdout: "", stderr: "", exitCode: 0 });
    expect(renderFailure("ai-memory", "allow", "down", true).stdout).toBe('{"action":"allow"}\n');
  });
  test("control characters in a reason are spelled out (one stderr line)", () => {
    expect(renderFailure("gemini", "warn", "a\u001b[31mb\nforged").stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("parseEvent", () => {
  test("ai-memory takes the event from the envelope and refuses a different one on the command line", () => {
    expect(parseEvent("ai-memory", '{"event":"pre_store","payload":{}}', undefined).event).toBe("pre_store");
    expect(() => parseEvent("ai-memory", '{"event":"pre_store","payload":{}}', "post_store")).toThrow(/not the command line's post_store/);
  });
  test("other dialects need the event argument", () => {
    expect(() => parseEvent("gemini", "{}", undefined)).toThrow(/no event/);
  });
});

test("shimText quotes every baked-in argument", () => {
  const text = shimText(["--server", "http://h:1/it's"], "/usr/bin/node", "/opt/x/main.js");
  expect(text).toContain(`exec '/usr/bin/node' '/opt/x/main.js' hook '--server' 'http://h:1/it'\\''s'`);
});

describe("boundedLines (daemon input)", () => {
  test("splits across chunks, and an over-long line becomes one undefined without being buffered", async () => {
    const { Readable } = await import("node:stream");
    const { boundedLines } = await import("../../../src/cli/hook.js");
    const chunks = [Buffer.from('{"a":1}\n{"b"'), Buffer.from(':2}\n' + "x".repeat(50)), Buffer.from("x".repeat(50) + "\nlast")];
    const got: Array<string | undefined> = [];
    for await (const l of boundedLines(Readable.from(chunks), 64)) got.push(l);
    expect(got).toEqual(['{"a":1}', '{"b":2}', undefined, "last"]);
  });
});

describe("hook text cannot split or smuggle the answer line", () => {
  const hostile = "no\r\nX: 1\u001b[2J\u0007\u0000 a\u0085b\u2028c\u2029d";
  test.each(["gemini", "llxprt", "claude", "ai-memory", "repo-yaml"] as const)("%s: stdout is one JSON line carrying the text exactly; stderr holds no terminal control", (dialect) => {
    const r = renderAnswer(dialect, { native: { decision: "block", reason: hostile }, exit_code: 2, stderr: hostile });
    expect(r.stdout.endsWith("\n")).toBe(true);
    // Every reader's line breaks: \n, \r, and the ones Python's splitlines adds.
    expect(r.stdout.slice(0, -1)).not.toMatch(/[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/);
    expect(JSON.parse(r.stdout).reason).toBe(hostile);
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(r.stderr).toContain("\\x1b[2J");
  });

  test("--on-error block renders the failure text as one line too", () => {
    const r = renderFailure("ai-memory", "block", `server said ${hostile}`);
    expect(r.stdout.slice(0, -1)).not.toMatch(/[\n\r\u0085\u2028\u2029]/);
    expect(JSON.parse(r.stdout).reason).toContain(hostile);
    expect(r.stderr.split("\n")).toHaveLength(2);
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});
