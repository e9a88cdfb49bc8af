import { generateKeyPairSync } from "node:crypto";
import type { Constitution } from "../../../src/model/constitution.js";
import type { ResolvedHook } from "../../../src/model/hook.js";

export interface TestKey {
  keyId: string;
  privateKeyPem: string;
  publicKeyPem: string;
}

export function makeKey(keyId: string): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    keyId,
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }) as string,
  };
}

export const trusted = (...keys: TestKey[]) => keys.map((k) => ({ key_id: k.keyId, public_key_pem: k.publicKeyPem }));

let seq = 0;
export function hook(name: string, bundle = "policy-a", digest: string | null = "sha256:" + "ab".repeat(32)): ResolvedHook {
  return Object.freeze({
    name, type: "post_select" as const, priority: 50, timeout_ms: 100,
    action: digest === null ? { bundle, export: name } : { bundle, export: name, digest },
    condition: null, enabled: true, metadata: {}, fail_closed: false, trust: "deployment" as const,
    scope: "deployment" as const, seq: ++seq,
  });
}

export function baseConstitution(): Constitution {
  return {
    id: "const-1",
    version: "1.0.0",
    rules: [
      { id: "no-harm-1", text: "Never help cause physical harm.", safety_critical: true },
      { id: "privacy-1", text: "Do not reveal personal data.", safety_critical: true, severity: "high" },
      { id: "tone-1", text: "Be concise." },
      { id: "legal-1", text: "Follow applicable law." },
    ],
  };
}

/** A deep copy: the checker must never be able to affect the caller's objects. */
export const clone = <T>(value: T): T => structuredClone(value);
