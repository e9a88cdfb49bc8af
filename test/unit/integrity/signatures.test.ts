import { describe, expect, test } from "vitest";
import { contentDigest, signConstitution, verifySignatureChain } from "../../../src/integrity/signatures.js";
import { digestOf } from "../../../src/integrity/digest.js";
import type { Constitution } from "../../../src/model/constitution.js";
import { baseConstitution, makeKey, trusted } from "./helpers.js";

const ops = makeKey("ops");
const cosigner = makeKey("cosigner");
const keys = trusted(ops, cosigner);

describe("signConstitution / verifySignatureChain", () => {
  test("a signed constitution verifies; the link signs the RFC 8785 digest without signatures", () => {
    const c = baseConstitution();
    const signed = signConstitution(c, ops.privateKeyPem, ops.keyId);
    expect(c.signatures).toBeUndefined();
    const [link] = signed.signatures!;
    expect(link).toMatchObject({ key_id: "ops", alg: "ed25519", digest: digestOf(c) });
    expect(link!.parent_digest).toBeUndefined();
    expect(contentDigest(signed)).toBe(digestOf(c));
    expect(verifySignatureChain(signed, keys)).toEqual({ ok: true });
    // Key order does not matter (RFC 8785).
    const reordered = Object.fromEntries(Object.entries(signed).reverse()) as Constitution;
    expect(verifySignatureChain(reordered, keys)).toEqual({ ok: true });
  });

  test("a second signer names the first link's digest (chain of custody)", () => {
    const signed = signConstitution(signConstitution(baseConstitution(), ops.privateKeyPem, ops.keyId), cosigner.privateKeyPem, cosigner.keyId);
    expect(signed.signatures![1]!.parent_digest).toBe(signed.signatures![0]!.digest);
    expect(verifySignatureChain(signed, keys)).toEqual({ ok: true });
  });

  test("edited content no longer verifies", () => {
    const signed = signConstitution(baseConstitution(), ops.privateKeyPem, ops.keyId);
    const edited = { ...signed, rules: signed.rules.slice(1) };
    expect(verifySignatureChain(edited, keys)).toMatchObject({ ok: false, reason: expect.stringMatching(/does not attest the current content/) });
  });

  test("an unsigned constitution does not verify", () => {
    expect(verifySignatureChain(baseConstitution(), keys)).toMatchObject({ ok: false, reason: "constitution carries no signatures" });
  });

  test("an unknown key id cannot verify", () => {
    const stranger = makeKey("stranger");
    const signed = signConstitution(baseConstitution(), stranger.privateKeyPem, stranger.keyId);
    expect(verifySignatureChain(signed, keys)).toMatchObject({ ok: false, reason: expect.stringMatching(/cannot verify .* unknown key_id stranger/) });
  });

  test("a re-labelled link fails: the signature binds parent_digest and key_id too", () => {
    const twice = signConstitution(signConstitution(baseConstitution(), ops.privateKeyPem, ops.keyId), cosigner.privateKeyPem, cosigner.keyId);
    const [first, second] = twice.signatures!;
    // Drop the first link and present the second as an origin signature.
    const { parent_digest: _p, ...orphan } = second!;
    expect(verifySignatureChain({ ...twice, signatures: [orphan] }, keys)).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) });
    // Dropping the first link while keeping the parent_digest is visibly a stripped chain.
    expect(verifySignatureChain({ ...twice, signatures: [second!] }, keys)).toMatchObject({ ok: false, reason: expect.stringMatching(/not in the chain/) });
    // Swapping the key id onto another trusted key.
    expect(verifySignatureChain({ ...twice, signatures: [{ ...first!, key_id: "cosigner" }, second!] }, keys).ok).toBe(false);
  });

  test("reordered links do not chain", () => {
    const twice = signConstitution(signConstitution(baseConstitution(), ops.privateKeyPem, ops.keyId), cosigner.privateKeyPem, cosigner.keyId);
    const swapped = { ...twice, signatures: [twice.signatures![1]!, twice.signatures![0]!] };
    expect(verifySignatureChain(swapped, keys).ok).toBe(false);
  });

  test("a link replayed from another constitution does not chain", () => {
    const signed = signConstitution(baseConstitution(), ops.privateKeyPem, ops.keyId);
    const other = signConstitution({ id: "other", rules: [] }, cosigner.privateKeyPem, cosigner.keyId);
    const replayed = { ...signed, signatures: [...signed.signatures!, other.signatures![0]!] };
    expect(verifySignatureChain(replayed, keys)).toMatchObject({ ok: false, reason: expect.stringMatching(/link 1 does not chain/) });
  });

  test("malformed links and keys are reported, not thrown", () => {
    const signed = signConstitution(baseConstitution(), ops.privateKeyPem, ops.keyId);
    const cases: Array<[unknown, RegExp]> = [
      [[null], /not an object/],
      [[{ ...signed.signatures![0]!, alg: "rsa" }], /alg rsa/],
      [[{ ...signed.signatures![0]!, sig: "not base64!" }], /well-formed sig/],
      [[{ ...signed.signatures![0]!, digest: "md5:00" }], /valid digest/],
      [[{ ...signed.signatures![0]!, kind: "blessing" }], /unknown kind/],
    ];
    for (const [signatures, reason] of cases) {
      expect(verifySignatureChain({ ...signed, signatures } as Constitution, keys)).toMatchObject({ ok: false, reason: expect.stringMatching(reason) });
    }
    expect(verifySignatureChain(signed, [{ key_id: "bad", public_key_pem: "nope" }])).toMatchObject({ ok: false });
  });
});
