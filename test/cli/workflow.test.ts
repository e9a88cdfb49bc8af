// The author's workflow through the built CLI: init → test → build → keygen → sign → verify → fire,
// and each way it can be refused: a clear, specific message, exit 1 (2 for usage), nothing changed.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, cpSync } from "node:fs";
import { join, resolve } from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cleanup, cli, scratchDir } from "./helpers.js";

const dirs: string[] = [];
let work: string;
let policy: string;
let artifact: string;

const INPUT = {
  context: { topic: "  Cooking ", dimensions: { data_sensitivity: 8 } },
  constitution: { id: "default", version: "1", rules: [{ id: "honesty-1", text: "Be honest.", safety_critical: true }] },
  event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Be honest." },
};

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile()) out[name] = readFileSync(p, "utf8");
  }
  return out;
}

beforeAll(() => {
  work = scratchDir(dirs);
  policy = join(work, "my-policy");
  artifact = join(work, "my-policy.vcpb");
});
afterAll(() => cleanup(dirs));

describe("init → test → build → keygen → sign → verify → fire", () => {
  test("init scaffolds a policy and refuses to overwrite it", async () => {
    const run = await cli(["init", policy]);
    expect(run.code).toBe(0);
    for (const f of ["policy.yaml", "src/index.ts", "src/vcp-env.d.ts", "tests/example.yaml", "tsconfig.json"]) expect(existsSync(join(policy, f)), f).toBe(true);
    expect(readFileSync(join(policy, "src/index.ts"), "utf8")).toContain('import type { HookInput, HookResult, PreInjectEvent } from "vcp-hooks"');
    // The editor modeline points at this package's manifest schema, wherever the policy lives.
    const modeline = /^# yaml-language-server: \$schema=(\S+)$/m.exec(readFileSync(join(policy, "policy.yaml"), "utf8"));
    expect(modeline, "yaml-language-server modeline").not.toBeNull();
    expect(JSON.parse(readFileSync(resolve(policy, modeline![1]!), "utf8"))).toHaveProperty("$schema");
    const before = snapshot(policy);
    const again = await cli(["init", policy]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists and is not empty; refusing to overwrite/);
    expect(snapshot(policy)).toEqual(before);
  });

  test("the scaffold's own cases pass through the real sandbox, unsigned and saying so", async () => {
    const run = await cli(["test", policy]);
    expect(run.stdout).toContain("3/3 case(s) passed");
    expect(run.stderr).toContain("signatures not required (local development");
    expect(run.code).toBe(0);
  });

  test("build writes <dir>/dist/<bundle>-<version>.vcpb by default and prints its digest", async () => {
    const run = await cli(["build", policy]);
    expect(run.code).toBe(0);
    const file = join(policy, "dist", "my-policy-0.1.0.vcpb");
    const built = JSON.parse(readFileSync(file, "utf8")) as { digest: string; signatures: unknown[] };
    expect(run.stdout).toContain(built.digest);
    expect(built.signatures).toEqual([]);
    const json = await cli(["build", policy, "-o", artifact, "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ file: artifact, bundle: "my-policy", version: "0.1.0", digest: built.digest, hooks: ["check_topic"] });
  });

  test("keygen writes a 0600 private key and a public key, and never overwrites", async () => {
    const prefix = join(work, "ops");
    const run = await cli(["keygen", "--out", prefix, "--key-id", "ops"]);
    expect(run.code).toBe(0);
    expect(statSync(`${prefix}.pem`).mode & 0o777).toBe(0o600);
    expect(readFileSync(`${prefix}.pub.pem`, "utf8")).toContain("BEGIN PUBLIC KEY");
    const key = readFileSync(`${prefix}.pem`, "utf8");
    const again = await cli(["keygen", "--out", prefix]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${prefix}.pem already exists; refusing to overwrite`);
    expect(readFileSync(`${prefix}.pem`, "utf8")).toBe(key);
    writeFileSync(join(work, "keyring.yaml"), `keys:\n  - { key_id: ops, public_key_file: ops.pub.pem, max_trust: deployment }\n`);
    writeFileSync(join(work, "low.yaml"), `keys:\n  - { key_id: ops, public_key_file: ops.pub.pem, max_trust: session }\n`);
  });

  test("sign adds the signature in place; verify prints the trust granted and the signer", async () => {
    const sign = await cli(["sign", artifact, "--key", join(work, "ops.pem"), "--key-id", "ops"]);
    expect(sign.code).toBe(0);
    const signed = JSON.parse(readFileSync(artifact, "utf8")) as { signatures: Array<{ key_id: string }> };
    expect(signed.signatures.map((s) => s.key_id)).toEqual(["ops"]);
    const verify = await cli(["verify", artifact, "--keyring", join(work, "keyring.yaml")]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/trust granted\s+deployment/);
    expect(verify.stdout).toMatch(/signed by\s+ops/);
    const json = await cli(["--json", "verify", artifact, "--keyring", join(work, "keyring.yaml")]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, trust: "deployment", signed_by: "ops" });
  });

  test("fire runs one chain over a .vcpb and a policy dir and prints the trace", async () => {
    const input = join(work, "input.json");
    writeFileSync(input, JSON.stringify(INPUT));
    const run = await cli(["fire", "pre_inject", "--bundle", artifact, "--bundle", "policies/strip-pii", "--input", input, "--keyring", join(work, "keyring.yaml")]);
    expect(run.stderr).toContain("signature verified (key ops)");
    expect(run.code).toBe(0);
    // Order: strip-pii (priority 90) before check_topic (50); strip-pii found no PII.
    expect(run.stdout).toMatch(/1\s+strip_pii_before_inject\s+strip-pii\s+90\s+continue\s+ok/);
    expect(run.stdout).toMatch(/2\s+check_topic\s+my-policy\s+50\s+modify\s+ok/);
    expect(run.stdout).toContain('~ context.topic: "  Cooking " → "cooking"');
  });

  test("fire reads the input from stdin, reports predicate skips, and --json gives the ChainResult", async () => {
    const input = { ...INPUT, context: { topic: "Credentials", dimensions: { data_sensitivity: 2 } } };
    const run = await cli(["fire", "pre_inject", "-b", "policies/strip-pii", "-b", policy, "--input", "-"], { input: JSON.stringify(input) });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("skipped: condition false: context.dimensions.data_sensitivity gte 7");
    expect(run.stdout).toMatch(/ABORTED by check_topic: topic 'credentials' is blocked by policy/);
    const json = await cli(["fire", "pre_inject", "-b", policy, "--input", "-", "--json"], { input: JSON.stringify(input) });
    const out = JSON.parse(json.stdout) as { result: { status: string; aborted_by: string } };
    expect(out.result).toMatchObject({ status: "aborted", aborted_by: "check_topic" });
    // The same input inline on the command line; bad inline JSON is named as such.
    const inline = await cli(["fire", "pre_inject", "-b", policy, "--input", JSON.stringify(input), "--json"]);
    expect((JSON.parse(inline.stdout) as { result: { aborted_by: string } }).result.aborted_by).toBe("check_topic");
    const bad = await cli(["fire", "pre_inject", "-b", policy, "--input", "{not json"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--input \(inline\) is not JSON/);
  });
});

describe("init for every hook type", () => {
  test("each scaffold type-checks with its tsconfig and passes its own cases", async () => {
    const d = scratchDir(dirs);
    const types = ["pre_inject", "post_select", "on_transition", "on_conflict", "on_violation", "periodic"];
    for (const type of types) expect((await cli(["init", join(d, type.replace("_", "-")), "--type", type])).code, type).toBe(0);
    const run = await cli(["test", d, "--json"]);
    const report = JSON.parse(run.stdout) as { ok: boolean; summary: { cases: number; passed: number } };
    expect(report.summary).toMatchObject({ cases: 18, passed: 18 });
    expect(run.code).toBe(0);
    const tsc = join(process.cwd(), "node_modules/typescript/bin/tsc");
    for (const type of types) {
      // Throws with the diagnostics if the scaffold does not type-check against the author types.
      execFileSync(process.execPath, [tsc, "-p", join(d, type.replace("_", "-"), "tsconfig.json")], { encoding: "utf8" });
    }
  }, 60_000);
});

describe("refusals: specific message, exit 1 (2 for usage), nothing changed", () => {
  test("a tampered artifact: verify, sign and fire refuse it with DIGEST_MISMATCH", async () => {
    const d = scratchDir(dirs);
    cpSync(policy, join(d, "p"), { recursive: true });
    await cli(["build", join(d, "p"), "-o", join(d, "a.vcpb")]);
    const tampered = join(d, "a.vcpb");
    const text = readFileSync(tampered, "utf8").replace("blocked by policy", "allowed by policy");
    writeFileSync(tampered, text);
    const verify = await cli(["verify", tampered, "--keyring", join(work, "keyring.yaml")]);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toMatch(/DIGEST_MISMATCH: digest mismatch: the artifact says sha256:[0-9a-f]{64}, its manifest and code hash to sha256:[0-9a-f]{64} \(altered or corrupt\)/);
    const sign = await cli(["sign", tampered, "--key", join(work, "ops.pem"), "--key-id", "ops"]);
    expect(sign.code).toBe(1);
    expect(sign.stderr).toContain("DIGEST_MISMATCH");
    expect(readFileSync(tampered, "utf8")).toBe(text);
    const fire = await cli(["fire", "pre_inject", "--bundle", tampered, "--input", "-"], { input: JSON.stringify(INPUT) });
    expect(fire.code).toBe(1);
    expect(fire.stderr).toContain("DIGEST_MISMATCH");
  });

  test("a wrong key: SIGNATURE_INVALID naming the key", async () => {
    const other = join(work, "other");
    await cli(["keygen", "--out", other]);
    const ring = join(work, "wrong.yaml");
    writeFileSync(ring, `keys:\n  - { key_id: ops, public_key_file: other.pub.pem, max_trust: deployment }\n`);
    const run = await cli(["verify", artifact, "--keyring", ring]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("SIGNATURE_INVALID: bundle 'my-policy' 0.1.0: no signature verifies against the keyring (ops: signature does not verify)");
    const json = await cli(["verify", artifact, "--keyring", ring, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "SIGNATURE_INVALID" } });
  });

  test("an over-privileged trust request: TRUST_EXCEEDS_KEY naming requested and allowed trust", async () => {
    const run = await cli(["verify", artifact, "--keyring", join(work, "low.yaml")]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("TRUST_EXCEEDS_KEY: bundle 'my-policy' requests trust 'deployment', but its best verifying key 'ops' may grant at most 'session'");
  });

  test("a manifest error: INVALID_BUNDLE naming file, path and rule; no artifact written", async () => {
    const d = scratchDir(dirs);
    const p = join(d, "bad");
    cpSync(policy, p, { recursive: true, filter: (src) => !src.includes("/dist") });
    writeFileSync(join(p, "policy.yaml"), readFileSync(join(p, "policy.yaml"), "utf8").replace("priority: 50", "priority: 500"));
    const run = await cli(["build", p]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/INVALID_BUNDLE: .*bad\/policy\.yaml: hooks\[0\]\.priority \(line \d+, column \d+\): must be an integer in \[0, 100\]/);
    expect(existsSync(join(p, "dist"))).toBe(false);
  });

  // Issue 11 defect 1: build ran a copy of install's validation and let these two through (exit 0).
  test.each([
    ["a condition `in` with a number", "    # condition: { field: context.dimensions.data_sensitivity, operator: gte, value: 7 }", "    condition: { field: context.dimensions.data_sensitivity, operator: in, value: 3 }", /INVALID_PREDICATE: .*bad\/policy\.yaml: hooks\[0\]\.condition\.value \(line \d+, column \d+\): in needs an array of JSON values \(received 3\)/],
    ["fail_closed on a session-trust bundle", "trust: deployment", "trust: session", /INVALID_HOOK: .*bad\/policy\.yaml: hooks\[0\]\.fail_closed \(line \d+, column \d+\): a hook with session trust may not abort \(spec §8\.3\), so it cannot be fail_closed/],
  ])("build refuses what install refuses: %s, naming hooks[0]…; no artifact written", async (_label, from, to, message) => {
    const d = scratchDir(dirs);
    const p = join(d, "bad");
    cpSync(policy, p, { recursive: true, filter: (src) => !src.includes("/dist") });
    let yaml = readFileSync(join(p, "policy.yaml"), "utf8");
    expect(yaml).toContain(from);
    yaml = yaml.replace(from, to);
    if (to === "trust: session") yaml = yaml.replace("fail_closed: false", "fail_closed: true");
    writeFileSync(join(p, "policy.yaml"), yaml);
    const run = await cli(["build", p]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(existsSync(join(p, "dist"))).toBe(false);
  });

  test("a missing export: ACTION_NOT_CALLABLE naming hook, action and the exports; no artifact written", async () => {
    const d = scratchDir(dirs);
    const p = join(d, "noexport");
    cpSync(policy, p, { recursive: true, filter: (src) => !src.includes("/dist") });
    writeFileSync(join(p, "policy.yaml"), readFileSync(join(p, "policy.yaml"), "utf8").replace("action: checkTopic", "action: checkTopics"));
    const run = await cli(["build", p]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("ACTION_NOT_CALLABLE");
    expect(run.stderr).toContain("hook 'check_topic': action 'checkTopics' is not exported by the entry module");
    expect(run.stderr).toContain("exported functions: checkTopic");
    expect(existsSync(join(p, "dist"))).toBe(false);
    const test = await cli(["test", p]);
    expect(test.code).toBe(1);
    expect(test.stdout).toContain("ACTION_NOT_CALLABLE");
  });

  test("a failing case: exit 1 with the path, expected and actual", async () => {
    const d = scratchDir(dirs);
    const p = join(d, "failing");
    cpSync(policy, p, { recursive: true, filter: (src) => !src.includes("/dist") });
    const tests = join(p, "tests", "example.yaml");
    writeFileSync(tests, readFileSync(tests, "utf8").replace("\n      context: { topic: cooking }", "\n      context: { topic: baking }"));
    const run = await cli(["test", p]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("✗ a topic is normalized (modify)");
    expect(run.stdout).toMatch(/context\.topic\s+- expected "baking"\s+\+ actual\s+"cooking"/);
    expect(run.stdout).toContain("2/3 case(s) passed");
  });

  test("usage errors exit 2 and name the problem", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["build", policy, "--frobnicate"], /build: unknown option '--frobnicate'/],
      [["--nope"], /unknown option '--nope'/],
      [["launch"], /unknown command 'launch'/],
      [["sign", artifact, "--key-id", "ops"], /sign: option '--key' is required/],
      [["verify", artifact], /verify: option '--keyring' is required/],
      [["fire", "pre_select", "--bundle", policy, "--input", "-"], /unknown hook type 'pre_select'/],
      [["keygen"], /keygen: option '--out' is required/],
      [["build"], /build: missing <dir>/],
      [["init", join(work, "x"), "--type", "post_inject"], /unknown hook type 'post_inject'/],
      [["bench", "speed"], /unknown bench 'speed'/],
      [["audit", "verify", "a.jsonl", "--anchor", "nope"], /--anchor must be <seq>:<hash>/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toMatch(message);
    }
  }, 120_000); // 11 CLI processes one after another: 7 s idle, over 20 s on a busy 2-core CI machine

  test("every command has --help (exit 0), and the overall help lists them", async () => {
    const overall = await cli(["--help"]);
    expect(overall.code).toBe(0);
    for (const name of ["init", "build", "keygen", "sign", "verify", "test", "fire", "serve", "audit", "bench"]) {
      expect(overall.stdout).toContain(`  ${name} `);
      const help = await cli([name, "--help"]);
      expect(help.code, name).toBe(0);
      expect(help.stdout, name).toContain(`usage: vcp-hooks ${name}`);
    }
  }, 120_000); // 11 CLI processes one after another, as above

  test("audit verify delegates to verifyAuditLog, or says it is not available", async () => {
    const d = scratchDir(dirs);
    const log = join(d, "audit.jsonl");
    writeFileSync(log, "");
    const run = await cli(["audit", "verify", log]);
    if (run.code === 2) {
      expect(run.stderr).toContain("not available in this build");
      return;
    }
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("OK 0 record(s)");
    writeFileSync(log, `${JSON.stringify({ seq: 1, hash: "forged" })}\n`);
    const broken = await cli(["audit", "verify", log]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/audit log broken at seq 1: /);
  });
});
