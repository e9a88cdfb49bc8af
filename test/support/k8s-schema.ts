/**
 * Offline schema check of Kubernetes manifests: each object is validated by the JSON schema that
 * `kubernetes-models` (generated from the Kubernetes OpenAPI document) compiled for its apiVersion and
 * kind. A kind this check has no model for is an error, never a silent pass.
 *
 * Like `kubeconform` without `-strict`, the Kubernetes schemas accept unknown fields; the tests that
 * use this also assert the fields that matter by value, so a misspelt one fails there.
 */
export interface ManifestProblem {
  /** `Kind/name` of the object. */
  object: string;
  message: string;
}

interface Model {
  new (data: unknown): { validate(): void };
}

/** `v1` → `kubernetes-models/v1`, `apps/v1` → `kubernetes-models/apps/v1`. */
async function modelFor(apiVersion: string, kind: string): Promise<Model | string> {
  if (!/^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion)) return `apiVersion '${apiVersion}' is not group/version`;
  let module: Record<string, unknown>;
  try {
    module = (await import(`kubernetes-models/${apiVersion}`)) as Record<string, unknown>;
  } catch {
    return `no schema for apiVersion '${apiVersion}'`;
  }
  const model = module[kind];
  return typeof model === "function" ? (model as Model) : `no schema for kind '${kind}' in ${apiVersion}`;
}

/** Problems of one parsed manifest object; [] when it validates. */
export async function checkManifest(doc: unknown): Promise<ManifestProblem[]> {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return [{ object: "?", message: "not a YAML mapping" }];
  const { apiVersion, kind, metadata } = doc as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  const object = `${String(kind)}/${String(metadata?.name)}`;
  if (typeof apiVersion !== "string" || typeof kind !== "string") return [{ object, message: "apiVersion and kind are required" }];
  if (typeof metadata?.name !== "string" || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(metadata.name)) return [{ object, message: "metadata.name must be a DNS subdomain name" }];
  const model = await modelFor(apiVersion, kind);
  if (typeof model === "string") return [{ object, message: model }];
  try {
    new model(doc).validate();
    return [];
  } catch (err) {
    return [{ object, message: err instanceof Error ? err.message : String(err) }];
  }
}
