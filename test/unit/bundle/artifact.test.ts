import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, expectTypeOf, test } from "vitest";
import { createArtifact, parseArtifact, readArtifactFile, serializeArtifact, signArtifact, verifyArtifact, type UnverifiedArtifact, type VcpArtifact } from "../../../src/bundle/artifact.js";
import { generateKeyPair, loadKeyring, type Keyring } from "../../../src/bundle/keys.js";
import { digestOf } from "../../../src/integrity/digest.js";
import { VcpError } from "../../../src/errors.js";

const ops = generateKeyPair();
const dev = generateKeyPair();
const stranger = generateKeyPair();

const keyring: Keyring = await loadKeyring({
  keys: [
    { key_id: "ops-2026", public_key: ops.publicKeyPem, max_trust: "system" },
    { key_id: "dev", public_key: dev.publicKeyPem, max_trust: "session" },
  ],
});

const MANIFEST = {
  bundle: "strip-pii",
  version: "1.0.0",
  trust: "deployment" as const,
  hooks: [{ name: "strip", type: "pre_inject" as const, action: "strip", priority: 50, timeout_ms: 1000 }],
};
const CODE = 'var __vcp_bundle = { strip: function () { return { status: "continue" }; } };';

const unsigned = (manifest: object = MANIFEST) => createArtifact(manifest, CODE);
const clone = (a: VcpArtifact): VcpArtifact => JSON.parse(JSON.stringify(a)) as VcpArtifact;

function refusal(artifact: unknown, options: Parameters<typeof verifyArtifact>[1] = { keyring }): VcpError {
  try {
    verifyArtifact(artifact, options);
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected the artifact to be refused");
}

describe("sign and verify", () => {
  test("round trip: a signed artifact verifies; trust and key id are reported", () => {
    const signed = signArtifact(unsigned(), ops.privateKeyPem, "ops-2026");
    expect(signed.signatures).toEqual([{ key_id: "ops-2026", alg: "ed25519", sig: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/) }]);
    const verified = verifyArtifact(signed, { keyring });
    expect(verified).toMatchObject({ trust: "deployment", key_id: "ops-2026", digest: signed.digest });
    expect(verified.manifest.bundle).toBe("strip-pii");
  });

  test("round trip through the serialized text", () => {
    const signed = signArtifact(unsigned(), ops.privateKeyPem, "ops-2026");
    const text = serializeArtifact(signed);
    expect(verifyArtifact(parseArtifact(text), { keyring }).key_id).toBe("ops-2026");
    expect(Object.keys(JSON.parse(text))).toEqual(["format", "manifest", "code", "digest", "signatures"]);
  });

  test("readArtifactFile gives an UnverifiedArtifact: its outer shape is refused where the file is read, naming the file and the fields", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-read-artifact-"));
    try {
      const good = join(dir, "strip-pii.vcpb");
      writeFileSync(good, serializeArtifact(signArtifact(unsigned(), ops.privateKeyPem, "ops-2026")));
      const read = await readArtifactFile(good);
      expectTypeOf(read).toEqualTypeOf<UnverifiedArtifact>();
      expect(read.manifest["bundle"]).toBe("strip-pii");
      expect(verifyArtifact(read, { keyring }).key_id).toBe("ops-2026");

      const bad = join(dir, "bad.vcpb");
      writeFileSync(bad, JSON.stringify({ format: "vcp-bundle/1", manifest: [], code: 7, digest: "sha256:00", signatures: [] }));
      const err = await readArtifactFile(bad).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(VcpError);
      expect(err).toMatchObject({
        code: "INVALID_BUNDLE",
        message: expect.stringMatching(new RegExp(`^${bad}: not a vcp-bundle/1 artifact: manifest: must be an object; code: must be a string; digest: must be sha256`)),
        details: { file: bad, problems: expect.arrayContaining([{ field: "code", rule: "must be a string" }]) },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the digest is sha256 over the RFC 8785 canonical {manifest, code}", () => {
    const a = unsigned();
    expect(a.digest).toBe(digestOf({ manifest: a.manifest, code: CODE }));
    expect(a.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  test("tampered code ⇒ DIGEST_MISMATCH naming expected and actual", () => {
    const t = clone(signArtifact(unsigned(), ops.privateKeyPem, "ops-2026"));
    t.code = t.code.replace("continue", "abort");
    const err = refusal(t);
    expect(err.code).toBe("DIGEST_MISMATCH");
    expect(err.details).toEqual({ expected: t.digest, actual: digestOf({ manifest: t.manifest, code: t.code }) });
    expect(err.message).toContain(t.digest);
  });

  test("tampered manifest (trust raised) ⇒ DIGEST_MISMATCH", () => {
    const t = clone(signArtifact(unsigned(), ops.privateKeyPem, "ops-2026"));
    (t.manifest as { trust: string }).trust = "system";
    expect(refusal(t).code).toBe("DIGEST_MISMATCH");
  });

  test("code and digest tampered consistently ⇒ SIGNATURE_INVALID (the signature no longer verifies)", () => {
    const t = clone(signArtifact(unsigned(), ops.privateKeyPem, "ops-2026"));
    t.code = t.code.replace("continue", "abort");
    t.digest = digestOf({ manifest: t.manifest, code: t.code });
    const err = refusal(t);
    expect(err.code).toBe("SIGNATURE_INVALID");
    expect(err.details?.["signatures"]).toEqual([{ key_id: "ops-2026", reason: "signature does not verify" }]);
  });

  test("signed by a key that is not in the keyring ⇒ SIGNATURE_INVALID", () => {
    const err = refusal(signArtifact(unsigned(), stranger.privateKeyPem, "stranger"));
    expect(err.code).toBe("SIGNATURE_INVALID");
    expect(err.message).toContain("stranger: unknown key");
  });

  test("signed with the wrong private key under a known key id ⇒ SIGNATURE_INVALID", () => {
    expect(refusal(signArtifact(unsigned(), stranger.privateKeyPem, "ops-2026")).code).toBe("SIGNATURE_INVALID");
  });

  test("a bad signature is refused even when signatures are optional (never a silent downgrade)", () => {
    expect(refusal(signArtifact(unsigned(), stranger.privateKeyPem, "ops-2026"), { keyring, requireSignatures: false }).code).toBe("SIGNATURE_INVALID");
  });

  test("stripped signatures when required ⇒ UNSIGNED_BUNDLE", () => {
    const t = { ...signArtifact(unsigned(), ops.privateKeyPem, "ops-2026"), signatures: [] };
    expect(refusal(t).code).toBe("UNSIGNED_BUNDLE");
    expect(refusal(t, { keyring }).message).toContain("not signed");
  });

  test("unsigned when signatures are optional: accepted at the requested trust, key id null", () => {
    expect(verifyArtifact(unsigned(), { requireSignatures: false })).toMatchObject({ trust: "deployment", key_id: null });
  });

  test("requested trust above the signing key's max_trust ⇒ TRUST_EXCEEDS_KEY naming both", () => {
    const err = refusal(signArtifact(unsigned(), dev.privateKeyPem, "dev"));
    expect(err.code).toBe("TRUST_EXCEEDS_KEY");
    expect(err.message).toContain("requests trust 'deployment'");
    expect(err.message).toContain("'dev' may grant at most 'session'");
    expect(err.details).toMatchObject({ requested: "deployment", key_id: "dev", max_trust: "session" });
  });

  test("the best verifying key decides trust; a bad extra signature is ignored", () => {
    const systemManifest = { ...MANIFEST, trust: "system" as const };
    let a = signArtifact(unsigned(systemManifest), dev.privateKeyPem, "dev");
    a = signArtifact(a, stranger.privateKeyPem, "stranger");
    expect(refusal(a).code).toBe("TRUST_EXCEEDS_KEY");
    a = signArtifact(a, ops.privateKeyPem, "ops-2026");
    expect(verifyArtifact(a, { keyring })).toMatchObject({ trust: "system", key_id: "ops-2026" });
  });

  test("signing again with the same key id replaces its signature", () => {
    const once = signArtifact(unsigned(), stranger.privateKeyPem, "ops-2026");
    const twice = signArtifact(once, ops.privateKeyPem, "ops-2026");
    expect(twice.signatures).toHaveLength(1);
    expect(verifyArtifact(twice, { keyring }).key_id).toBe("ops-2026");
  });

  test("signing refuses a tampered artifact and a non-Ed25519 key", () => {
    const t = clone(unsigned());
    t.code += "//";
    expect(() => signArtifact(t, ops.privateKeyPem, "ops-2026")).toThrow(expect.objectContaining({ code: "DIGEST_MISMATCH" }));
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    expect(() => signArtifact(unsigned(), rsa, "ops-2026")).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });

  test("an unsupported alg does not verify", () => {
    const a = clone(signArtifact(unsigned(), ops.privateKeyPem, "ops-2026"));
    (a.signatures[0] as { alg: string }).alg = "rsa-pss";
    expect(refusal(a).code).toBe("SIGNATURE_INVALID");
  });

  test("format, shape, manifest and size are checked", () => {
    expect(refusal({ ...unsigned(), format: "vcp-bundle/2" }).message).toContain('format: must be "vcp-bundle/1"');
    expect(refusal({ ...unsigned(), extra: 1 }).message).toContain("unknown field(s): extra");
    expect(refusal({ ...unsigned(), digest: "md5:abc" }).code).toBe("INVALID_BUNDLE");
    const badManifest = { format: "vcp-bundle/1", manifest: { bundle: "x", version: "1.0.0", hooks: [] }, code: CODE, signatures: [] as never[], digest: "" };
    badManifest.digest = digestOf({ manifest: badManifest.manifest, code: CODE });
    expect(refusal(badManifest, { requireSignatures: false }).message).toContain("hooks: a bundle declares at least one hook");
    expect(refusal(unsigned(), { requireSignatures: false, maxCodeBytes: 10 }).code).toBe("BUNDLE_TOO_LARGE");
  });

  test("serialization is stable: manifest keys in canonical order whatever the input order", () => {
    const reordered = { hooks: MANIFEST.hooks, version: "1.0.0", trust: "deployment" as const, bundle: "strip-pii" };
    expect(serializeArtifact(unsigned(reordered))).toBe(serializeArtifact(unsigned()));
  });
});

describe("loadKeyring", () => {
  const dir = mkdtempSync(join(tmpdir(), "vcp-keyring-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("YAML file with public_key_file resolved against the keyring file", async () => {
    writeFileSync(join(dir, "ops.pub.pem"), ops.publicKeyPem);
    const file = join(dir, "keyring.yaml");
    writeFileSync(file, "keys:\n  - { key_id: ops-2026, public_key_file: ops.pub.pem, max_trust: deployment }\n");
    const loaded = await loadKeyring(file);
    expect(loaded.keys).toEqual([{ key_id: "ops-2026", public_key: ops.publicKeyPem, max_trust: "deployment" }]);
    expect(verifyArtifact(signArtifact(unsigned(), ops.privateKeyPem, "ops-2026"), { keyring: loaded }).key_id).toBe("ops-2026");
  });

  test("JSON file with an inline key", async () => {
    const file = join(dir, "keyring.json");
    writeFileSync(file, JSON.stringify({ keys: [{ key_id: "dev", public_key: dev.publicKeyPem, max_trust: "session" }] }));
    expect((await loadKeyring(file)).keys[0]!.max_trust).toBe("session");
  });

  test.each([
    [{ keys: [{ key_id: "a", max_trust: "system" }] }, "keys[0]: exactly one of public_key and public_key_file"],
    [{ keys: [{ key_id: "a", public_key: "x", public_key_file: "y", max_trust: "system" }] }, "keys[0]: exactly one of"],
    [{ keys: [{ key_id: "a b", public_key: ops.publicKeyPem, max_trust: "system" }] }, "keys[0].key_id: must match"],
    [{ keys: [{ key_id: "a", public_key: ops.publicKeyPem, max_trust: "root" }] }, "keys[0].max_trust"],
    [{ keys: [{ key_id: "a", public_key: "not a pem", max_trust: "system" }] }, "keys[0].public_key: is not a PEM public key"],
    [{ keys: [{ key_id: "a", public_key: ops.publicKeyPem, max_trust: "system" }, { key_id: "a", public_key: dev.publicKeyPem, max_trust: "session" }] }, "keys[1].key_id: 'a' is listed twice"],
    [{ keys: [{ key_id: "a", public_key_file: "missing.pem", max_trust: "system" }] }, "keys[0].public_key_file: cannot read"],
    [{ keys: [{ key_id: "a", public_key: ops.publicKeyPem, max_trust: "system", owner: "me" }] }, "keys[0]: unknown field(s): owner"],
    [{ key: [] }, "unknown field(s): key"],
  ])("invalid keyring %# names the field", async (input, message) => {
    await expect(loadKeyring(input as never, { baseDir: dir })).rejects.toMatchObject({ code: "INVALID_CONFIG", message: expect.stringContaining(message) });
  });

  test("a non-Ed25519 public key is refused", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" }).toString();
    await expect(loadKeyring({ keys: [{ key_id: "rsa", public_key: rsa, max_trust: "system" }] })).rejects.toMatchObject({
      message: expect.stringContaining("keys[0].public_key: must be an Ed25519 key (this is rsa)"),
    });
  });

  test("a YAML syntax error in the keyring file names the position", async () => {
    const file = join(dir, "broken.yaml");
    writeFileSync(file, "keys:\n  - { key_id: a,\n");
    await expect(loadKeyring(file)).rejects.toMatchObject({ code: "INVALID_CONFIG", message: expect.stringMatching(/broken\.yaml: \(yaml\): syntax error at line \d+, column \d+/) });
  });
});
