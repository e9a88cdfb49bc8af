import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { medianMs } from "../../support/median-ms.js";
import { createRedactor, redactString } from "../../../src/audit/index.js";
import { redactAllShapes } from "../../../src/audit/redact-string.js";

const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const PEM = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIFh7x0m7g8Q1n2v6y0u1qK5pM2h1x8m8QeLk0m6n7Q9x\n-----END PRIVATE KEY-----";
const RSA_PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----";

describe("redactString: secret shapes", () => {
  const cases: Array<[string, string, string]> = [
    ["Bearer token", "Authorization: Bearer abc123.def-456_ghi~", "Authorization: Bearer [REDACTED]"],
    ["bearer, any case", "got bearer ZXlKaGJHY2lPaUpJVXpJMU5pSjk=", "got bearer [REDACTED]"],
    ["Basic credentials", "Basic dXNlcjpwYXNzd29yZA==", "Basic [REDACTED]"],
    ["OpenAI key", "key=sk-proj-AbCdEfGhIjKlMnOpQrStUv", "key=[REDACTED:api-key]"],
    ["Anthropic key", "sk-ant-api03-abcdefghijklmnopqrstuv-xyz", "[REDACTED:api-key]"],
    ["AWS access key id", "aws AKIAIOSFODNN7EXAMPLE in config", "aws [REDACTED:aws-key] in config"],
    ["AWS temporary key id", "ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws-key]"],
    ["JWT", `token ${JWT} end`, "token [REDACTED:jwt] end"],
    ["PEM private key", `key:\n${PEM}\nafter`, "key:\n[REDACTED:private-key]\nafter"],
    ["RSA PEM private key", RSA_PEM, "[REDACTED:private-key]"],
    ["unterminated PEM", "x -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI", "x [REDACTED:private-key]"],
    ["GitHub token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:github-token]"],
    ["Slack token", "xoxb-1234567890-abcdefghij", "[REDACTED:slack-token]"],
    ["several in one string", `Bearer aaa and sk-abcdefghijklmnop1234`, "Bearer [REDACTED] and [REDACTED:api-key]"],
    ["ordinary text untouched", "the task-based skill sk-ip; AKIA is a word; eyJ alone", "the task-based skill sk-ip; AKIA is a word; eyJ alone"],
    ["public key untouched", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----"],
  ];
  test.each(cases)("%s", (_name, input, expected) => {
    expect(redactString(input)).toBe(expected);
  });

  test("the prefilter never changes a result: strings built from every shape's pieces", () => {
    // Fragments of each shape and near misses, glued with noise: the fast path (no shape's literal
    // start in the string) must answer exactly what running every pattern answers.
    const pieces = [
      "-----BEGIN ", "RSA ", "PRIVATE KEY-----", "-----END PRIVATE KEY-----", "Bearer ", "bearer", "BEARER\t", "Basic ", "basic ", "dXNlcjpwYXNzd29yZA==",
      "eyJ", "eyJhbGciOiJIUzI1NiJ9", ".", "sk-", "sk-ant-api03-", "AKIA", "ASIA", "IOSFODNN7EXAMPLE", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-",
      "abcdefghijklmnopqrstuvwxyz0123456789", "-", "_", " ", "\n", "é", "~", "=",
    ];
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })), { maxLength: 12 }), (parts) => {
        const text = parts.join("");
        expect(redactString(text)).toBe(redactAllShapes(text));
      }),
      { numRuns: 5000 },
    );
  });

  test("a hostile string does not make redaction slow", () => {
    const hostile = "-----BEGIN PRIVATE KEY-----".repeat(20_000) + "Bearer ".repeat(20_000) + "eyJaaaa.".repeat(20_000);
    const start = performance.now();
    redactString(hostile);
    expect(performance.now() - start).toBeLessThan(1000);
  });
});

describe("createRedactor", () => {
  test("a member named __proto__ stays a member of the copy (a reader sees it), never its prototype", () => {
    const input = JSON.parse('{"tool":"sh","__proto__":{"command":"rm -rf / Bearer abcdef"}}') as unknown;
    const copy = createRedactor({ keys: [] })(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe('{"tool":"sh","__proto__":{"command":"rm -rf / Bearer [REDACTED]"}}');
  });

  const redact = createRedactor({ keys: ["password", "Authorization", "api_key"], maxStringLength: 64 });
  const cases: Array<[string, unknown, unknown]> = [
    ["configured key at the top", { password: "hunter2", user: "a" }, { password: "[REDACTED]", user: "a" }],
    ["configured key, any depth and case", { a: [{ b: { AUTHORIZATION: "x" } }] }, { a: [{ b: { AUTHORIZATION: "[REDACTED]" } }] }],
    ["key spelled differently", { "api-key": "k1", apiKey: "k2", API_KEY: "k3" }, { "api-key": "[REDACTED]", apiKey: "[REDACTED]", API_KEY: "[REDACTED]" }],
    ["object-valued secret key", { password: { nested: "x" } }, { password: "[REDACTED]" }],
    ["shapes inside values", { note: `use ${JWT}` }, { note: "use [REDACTED:jwt]" }],
    ["shapes inside keys", { ["Bearer abcdef"]: 1 }, { "Bearer [REDACTED]": 1 }],
    ["primitives pass", [1, true, null, "ok"], [1, true, null, "ok"]],
    ["non-JSON values", { f: () => 1, u: undefined, big: 10n, d: new Date(0) }, { big: "10", d: "1970-01-01T00:00:00.000Z" }],
    ["long strings truncated", { s: "x".repeat(100) }, { s: `${"x".repeat(64)}…[truncated 36 chars]` }],
  ];
  test.each(cases)("%s", (_name, input, expected) => {
    expect(redact(input)).toEqual(expected);
  });

  test("redaction happens before truncation: a secret straddling the cut is not half-leaked", () => {
    const text = `${"a".repeat(50)} sk-abcdefghijklmnopqrstuvwxyz012345`;
    const out = redact(text) as string;
    // Cut first, the 64 kept characters would hold "sk-abcdefghijk" — shorter than the pattern needs.
    expect(out).toBe(`${"a".repeat(50)} [REDACTED:api…[truncated 5 chars]`);
    expect(out).not.toContain("sk-abcdefgh");
    const pemCut = redact(`${"b".repeat(40)}${PEM}`) as string;
    expect(pemCut).not.toContain("MC4CAQAw");
  });

  test("a 10 MB string costs what its kept characters cost: redaction reads a bounded head", () => {
    const hostile = "Bearer abcdefgh ".repeat((10 * 1024 * 1024) / 16);
    const reference = medianMs(() => redactString(hostile));
    const bounded = medianMs(() => redact({ s: hostile }));
    expect(bounded, `redactor ${bounded.toFixed(2)} ms vs one full redaction ${reference.toFixed(2)} ms`).toBeLessThan(reference / 4);
    expect((redact({ s: hostile }) as { s: string }).s).toMatch(/^Bearer \[REDACTED\] Bearer \[REDACTED\] .*…\[truncated \d+ chars\]$/);
  });

  test("a secret cut by the bound is still redacted (a JWT cut before its signature too)", () => {
    const payload = `eyJ${"a".repeat(20_000)}`;
    for (const tail of [".c2lnbmF0dXJl", ""]) {
      const text = `${"x".repeat(40)} eyJhbGciOiJIUzI1NiJ9.${payload}${tail}`;
      expect(redact(text)).toBe(`${"x".repeat(40)} [REDACTED:jwt]`);
    }
    expect(redactString("id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0")).toBe("id [REDACTED:jwt]");
  });

  test("a copy budget: a huge value costs about the budget, and the JSON text starts the same", () => {
    const budgeted = createRedactor({ keys: ["password"], maxStringLength: 64, maxChars: 1000 });
    const full = createRedactor({ keys: ["password"], maxStringLength: 64 });
    let reads = 0;
    const big = new Proxy(Array.from({ length: 1_000_000 }, (_, i) => ({ n: i, password: "p" })), {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const text = JSON.stringify(budgeted({ list: big }));
    expect(reads).toBeLessThan(1000);
    expect(text.slice(0, 1000)).toBe(JSON.stringify(full({ list: big })).slice(0, 1000));
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const whole = JSON.stringify(full(value));
        const cut = JSON.stringify(budgeted(value));
        if (whole.length <= 1000) expect(cut).toBe(whole);
        else expect(cut.slice(0, 1000)).toBe(whole.slice(0, 1000));
      }),
      { numRuns: 500 },
    );
  });

  test("cycles, depth, errors; the input is not changed", () => {
    const cyclic: any = { a: { password: "p" } };
    cyclic.a.self = cyclic;
    const before = JSON.stringify({ a: { password: "p" } });
    expect(redact(cyclic)).toEqual({ a: { password: "[REDACTED]", self: "[Circular]" } });
    expect(JSON.stringify({ a: { password: cyclic.a.password } })).toBe(before);
    const shared = { x: 1 };
    expect(redact({ l: shared, r: shared })).toEqual({ l: { x: 1 }, r: { x: 1 } });
    let deep: any = "bottom";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(JSON.stringify(redact(deep))).toContain("[MaxDepth]");
    const err = Object.assign(new Error("failed with Bearer abcdef"), { password: "p" });
    expect(redact(err)).toMatchObject({ type: "Error", message: "failed with Bearer [REDACTED]", password: "[REDACTED]" });
  });
});
