import { randomUUID } from "node:crypto";
import { VcpError } from "../errors.js";
import { parseManifest, type Manifest, type ManifestInput } from "../bundle/manifest.js";
import { digestOf } from "../integrity/digest.js";
import { isHookType, type HookType, type Scope } from "../model/hook-type.js";
import type { HookDefinition, ResolvedHook } from "../model/hook.js";
import type { Constitution } from "../model/constitution.js";
import type { SessionInfo, VcpContext } from "../model/input.js";
import { assertChainInput } from "../model/validate-input.js";
import { FAILURE_OUTCOMES } from "../model/result.js";
import type { HookEventMap } from "../model/events.js";
import type { ChainPlan, ChainResult } from "../chain/types.js";
import { systemClock, silentLogger, type Clock, type LifecycleEvent, type LifecycleEventMap, type LifecycleEventName, type Logger } from "../observe/events.js";
import { createRegistry, type Principal, type Registry, type RegistrySnapshot } from "../registry/index.js";
import type { SandboxOptions } from "../pool/index.js";
import type { ChainBackend } from "./backend.js";
import { createHookStats, type HookStatsView } from "./stats.js";

/** Options of {@link createRuntime}. Every field has a safe default. */
export interface RuntimeOptions {
  /** Options of the isolated-vm sandbox process (threads, limits, fetch policy). */
  sandbox?: SandboxOptions;
  /**
   * Run chains on this backend instead of starting the sandbox process. For tests and embedding
   * experiments only: the default sandbox is the security boundary.
   */
  backend?: ChainBackend;
  /** `bundle/hook` entries clients may register per session (spec §8.2.1). Default: none. */
  sessionHookAllowlist?: readonly string[];
  /** Registrations and deregistrations per principal per minute (spec §8.2.5). Default 30. */
  registrationsPerMinute?: number;
  /** Optional whole-chain deadline per hook type, ms (DESIGN §4.3). */
  chainDeadlineMs?: Partial<Record<HookType, number>>;
  /** Disable hooks that failed in a cascading failure until re-enabled (spec §7.3.4). Default false. */
  cascade?: { disableFailingHooks?: boolean };
  logger?: Logger;
  clock?: Clock;
}

/** A bundle as installed: the manifest normalized, its digest, and when it became active. */
export interface BundleInfo {
  bundle: string;
  version: string;
  digest: string;
  trust: Manifest["trust"];
  hooks: string[];
  session_hooks: string[];
  activated_at: string;
}

/** What `bundles.install` takes: a manifest (DESIGN §3.1) and the esbuild output of its code. */
export interface BundleSource {
  manifest: ManifestInput;
  code: string;
}

export interface FireInput<T extends HookType = HookType> {
  session: SessionInfo | string;
  context: VcpContext;
  constitution: Constitution;
  event: HookEventMap[T];
}

export interface RuntimeStatus {
  bundles: BundleInfo[];
  hooks: HookStatsView[];
  registry_revision: number;
  sandbox: ReturnType<ChainBackend["stats"]>;
}

export interface Runtime {
  bundles: {
    install(source: BundleSource, options?: { principal?: Principal }): Promise<BundleInfo>;
    remove(name: string, options?: { principal?: Principal }): Promise<BundleInfo>;
    list(): BundleInfo[];
    get(name: string): BundleInfo | undefined;
  };
  sessions: {
    /** Register an allowlisted `scope: session` hook of an installed bundle for one session (DESIGN §3.4). */
    registerHook(sessionId: string, ref: { bundle: string; hook: string }, options?: { principal?: Principal }): ResolvedHook;
    /** Remove a session's hooks (spec §6.1: session scope lives as long as the session). */
    close(sessionId: string): void;
  };
  hooks: {
    /** The resolved chain order for a type and optional session (DESIGN §6.2 `GET /v1/hooks`). */
    chain(type: HookType, sessionId?: string): ResolvedHook[];
    /** Re-enable (or disable) a hook, e.g. after a cascade disabled it (spec §7.3.4). */
    setEnabled(name: string, enabled: boolean, options?: { scope?: Scope; sessionId?: string; principal?: Principal }): ResolvedHook;
  };
  /** Run the chain of `type` for one event (spec §5). An empty chain returns at once. */
  fire<T extends HookType>(type: T, input: FireInput<T>): Promise<ChainResult>;
  on<K extends LifecycleEventName>(event: K, listener: (payload: LifecycleEventMap[K]) => void): () => void;
  status(): RuntimeStatus;
  close(): Promise<void>;
}

const SYSTEM_PRINCIPAL: Principal = Object.freeze({ id: "runtime", role: "system" });
const LOCAL_OPERATOR: Principal = Object.freeze({ id: "local-operator", role: "operator" });

interface InstalledBundle {
  info: BundleInfo;
  manifest: Manifest;
}

/**
 * Create a vcp-hooks runtime: registry, sandbox process and chain execution behind one API.
 *
 * @example
 * ```ts
 * const runtime = await createRuntime();
 * await runtime.bundles.install({ manifest, code });
 * const result = await runtime.fire("pre_inject", { session: "s1", context, constitution, event });
 * await runtime.close();
 * ```
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  assertNodeVersion();
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const disableFailingHooks = options.cascade?.disableFailingHooks === true;
  const listeners = new Map<LifecycleEventName, Set<(payload: never) => void>>();
  const stats = createHookStats();
  const installed = new Map<string, InstalledBundle>();
  // In-flight chains per bundle digest: an old revision's isolates are released only after the
  // chains that started on it have finished (spec §6.3, DESIGN §3.4 hot swap).
  const inFlightByDigest = new Map<string, number>();
  const retiredDigests = new Set<string>();
  let closed = false;

  const emit = (event: LifecycleEvent): void => {
    const set = listeners.get(event.event);
    if (set === undefined) return;
    for (const listener of set) {
      try {
        (listener as (payload: unknown) => void)(event.payload);
      } catch (err) {
        logger.warn({ err, event: event.event }, "lifecycle listener threw");
      }
    }
  };

  const registry: Registry = createRegistry({
    clock,
    emit,
    sessionHookAllowlist: options.sessionHookAllowlist ?? [],
    registrationsPerMinute: options.registrationsPerMinute ?? 30,
    resolveAction: (ref) => {
      const bundle = installed.get(ref.bundle);
      // During install the bundle is verified before it is entered here; see install().
      if (bundle === undefined) return `bundle '${ref.bundle}' is not installed`;
      if (ref.digest !== undefined && ref.digest !== bundle.info.digest) return `bundle '${ref.bundle}' revision ${ref.digest} is not the installed one`;
      return true;
    },
  });

  // The sandbox module (piscina, child process) loads only when it is used.
  const backend: ChainBackend = options.backend ?? (await (await import("../pool/index.js")).startSandbox({ ...options.sandbox, logger }));

  // Per plan: the plain hook list sent to the sandbox, and the digests it pins. Plans are rebuilt
  // only when the registry changes, so this is computed once per plan, not per event.
  const planWire = new WeakMap<ChainPlan, { hooks: ResolvedHook[]; digests: string[] }>();
  function wireOf(plan: ChainPlan): { hooks: ResolvedHook[]; digests: string[] } {
    let wire = planWire.get(plan);
    if (wire === undefined) {
      const hooks = plan.hooks.map((p) => p.hook);
      const digests = [...new Set(hooks.map((h) => h.action.digest).filter((d): d is string => d !== undefined))];
      wire = { hooks, digests };
      planWire.set(plan, wire);
    }
    return wire;
  }

  function hookDefinitions(manifest: Manifest, digest: string, scope: Scope): HookDefinition[] {
    return manifest.hooks
      .filter((hook) => (hook.scope ?? "deployment") === scope)
      .map((hook) => ({
        name: hook.name,
        type: hook.type,
        priority: hook.priority,
        timeout_ms: hook.timeout_ms,
        action: { bundle: manifest.bundle, export: hook.action, digest },
        condition: hook.condition ?? null,
        enabled: hook.enabled ?? true,
        ...(hook.description !== undefined ? { description: hook.description } : {}),
        metadata: hook.metadata ?? {},
        fail_closed: hook.fail_closed ?? false,
        trust: scope === "session" ? "session" : manifest.trust,
      }));
  }

  async function releaseIfIdle(digest: string): Promise<void> {
    if (retiredDigests.has(digest) && (inFlightByDigest.get(digest) ?? 0) === 0) {
      retiredDigests.delete(digest);
      await backend.unloadBundle(digest).catch((err: unknown) => logger.warn({ err, digest }, "unloading a retired bundle failed"));
    }
  }

  function assertOpen(): void {
    if (closed) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed");
  }

  const runtime: Runtime = {
    bundles: {
      async install(source, installOptions = {}) {
        assertOpen();
        const principal = installOptions.principal ?? LOCAL_OPERATOR;
        const manifest = parseManifest(source.manifest);
        if (typeof source.code !== "string" || source.code.length === 0) {
          throw new VcpError("INVALID_BUNDLE", `bundle '${manifest.bundle}': code must be a non-empty string`, { field: "code" });
        }
        const digest = digestOf({ manifest, code: source.code });
        const previous = installed.get(manifest.bundle);
        const memoryMb = manifest.limits?.memory_mb;
        const { exports } = await backend.loadBundle({
          name: manifest.bundle,
          digest,
          code: source.code,
          trust: manifest.trust,
          isolation: manifest.isolation,
          ...(memoryMb !== undefined ? { memoryMb } : {}),
        });
        const exported = new Set(exports);
        const missing = manifest.hooks.find((hook) => !exported.has(hook.action));
        if (missing !== undefined) {
          if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
          throw new VcpError(
            "ACTION_NOT_CALLABLE",
            `bundle '${manifest.bundle}': hook '${missing.name}' names action '${missing.action}', which is not an exported function (spec §6.2.6); exports: ${exports.join(", ") || "none"}`,
            { bundle: manifest.bundle, hook: missing.name, action: missing.action, exports },
          );
        }
        const info: BundleInfo = {
          bundle: manifest.bundle,
          version: manifest.version,
          digest,
          trust: manifest.trust,
          hooks: manifest.hooks.filter((h) => (h.scope ?? "deployment") === "deployment").map((h) => h.name),
          session_hooks: manifest.hooks.filter((h) => h.scope === "session").map((h) => h.name),
          activated_at: new Date(clock.wallNow()).toISOString(),
        };
        // The registry resolves actions against `installed`, so the new revision is entered first
        // and rolled back if the atomic registry swap refuses it.
        installed.set(manifest.bundle, { info, manifest });
        try {
          registry.replace(previous?.info.hooks ?? [], hookDefinitions(manifest, digest, "deployment"), {
            scope: "deployment",
            principal,
          });
        } catch (err) {
          if (previous) installed.set(manifest.bundle, previous);
          else installed.delete(manifest.bundle);
          if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
          throw err;
        }
        if (previous && previous.info.digest !== digest) {
          retiredDigests.add(previous.info.digest);
          await releaseIfIdle(previous.info.digest);
        }
        logger.info({ bundle: info.bundle, version: info.version, digest }, "bundle installed");
        return info;
      },

      async remove(name, removeOptions = {}) {
        assertOpen();
        const entry = installed.get(name);
        if (entry === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${name}' is not installed`, { bundle: name });
        registry.replace(entry.info.hooks, [], { scope: "deployment", principal: removeOptions.principal ?? LOCAL_OPERATOR });
        installed.delete(name);
        retiredDigests.add(entry.info.digest);
        await releaseIfIdle(entry.info.digest);
        return entry.info;
      },

      list: () => [...installed.values()].map((b) => b.info),
      get: (name) => installed.get(name)?.info,
    },

    sessions: {
      registerHook(sessionId, ref, registerOptions = {}) {
        assertOpen();
        const entry = installed.get(ref.bundle);
        if (entry === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${ref.bundle}' is not installed`, { bundle: ref.bundle });
        const definition = hookDefinitions(entry.manifest, entry.info.digest, "session").find((d) => d.name === ref.hook);
        if (definition === undefined) {
          throw new VcpError("UNKNOWN_HOOK", `bundle '${ref.bundle}' offers no session-scope hook '${ref.hook}'`, { bundle: ref.bundle, hook: ref.hook });
        }
        return registry.register(definition, {
          scope: "session",
          sessionId,
          principal: registerOptions.principal ?? { id: `session:${sessionId}`, role: "client" },
        });
      },
      close(sessionId) {
        registry.dropSession(sessionId);
      },
    },

    hooks: {
      chain(type, sessionId) {
        if (!isHookType(type)) throw unknownType(type);
        return registry.snapshot().chain(type, sessionId).hooks.map((p) => p.hook);
      },
      setEnabled(name, enabled, setOptions = {}) {
        return registry.setEnabled(name, enabled, {
          scope: setOptions.scope ?? "deployment",
          ...(setOptions.sessionId !== undefined ? { sessionId: setOptions.sessionId } : {}),
          principal: setOptions.principal ?? LOCAL_OPERATOR,
        });
      },
    },

    async fire(type, input) {
      if (!isHookType(type)) throw unknownType(type);
      const session: SessionInfo = typeof input.session === "string" ? { id: input.session } : input.session;
      const snapshot: RegistrySnapshot = registry.snapshot();
      const plan = snapshot.chain(type, session?.id);
      if (plan.hooks.length === 0) {
        // Empty chain: no validation beyond the type, no dispatch (LLxprt's zero overhead when disabled).
        return {
          chain_id: randomUUID(), type, status: "completed", reason: null, aborted_by: null,
          context: input.context, constitution: input.constitution, cascade_failure: false, hook_results: [], duration_ms: 0,
        };
      }
      assertOpen();
      assertChainInput(type, { context: input.context, constitution: input.constitution, event: input.event, session });
      const wire = wireOf(plan);
      for (const digest of wire.digests) inFlightByDigest.set(digest, (inFlightByDigest.get(digest) ?? 0) + 1);
      const deadlineMs = options.chainDeadlineMs?.[type];
      try {
        const { result, events } = await backend.runChain({
          plan: { type, revision: plan.revision, hooks: wire.hooks },
          request: {
            chainId: randomUUID(),
            context: input.context,
            constitution: input.constitution,
            event: input.event,
            session,
            ...(deadlineMs !== undefined ? { deadlineMs } : {}),
          },
        });
        for (const event of events) emit(event);
        stats.record(result);
        if (result.cascade_failure) {
          logger.warn({ chain_id: result.chain_id, type }, "cascading hook failure (spec §7.3)");
          if (disableFailingHooks) disableFailing(result, session.id);
        }
        return result;
      } finally {
        for (const digest of wire.digests) {
          const left = (inFlightByDigest.get(digest) ?? 1) - 1;
          if (left === 0) inFlightByDigest.delete(digest);
          else inFlightByDigest.set(digest, left);
          if (left === 0 && retiredDigests.has(digest)) void releaseIfIdle(digest);
        }
      }
    },

    on(event, listener) {
      let set = listeners.get(event);
      if (set === undefined) {
        set = new Set();
        listeners.set(event, set);
      }
      set.add(listener as (payload: never) => void);
      return () => set.delete(listener as (payload: never) => void);
    },

    status() {
      const snapshot = registry.snapshot();
      return {
        bundles: runtime.bundles.list(),
        hooks: stats.view(snapshot.hooks()),
        registry_revision: snapshot.revision,
        sandbox: backend.stats(),
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      await backend.close();
    },
  };

  function disableFailing(result: ChainResult, sessionId: string): void {
    for (const execution of result.hook_results) {
      if (!FAILURE_OUTCOMES.has(execution.outcome)) continue;
      try {
        registry.setEnabled(execution.hook, false, { scope: execution.scope, ...(execution.scope === "session" ? { sessionId } : {}), principal: SYSTEM_PRINCIPAL });
      } catch (err) {
        logger.warn({ err, hook: execution.hook }, "could not disable a failing hook");
      }
    }
  }

  return runtime;
}

function unknownType(type: unknown): VcpError {
  return new VcpError("UNKNOWN_HOOK_TYPE", `unknown hook type '${String(type)}': expected one of pre_inject, post_select, on_transition, on_conflict, on_violation, periodic (spec §3)`, { type: String(type) });
}

/** Refuse to run on Node.js older than 24 (DESIGN §1: isolated-vm 7 needs it; Node 20 is end of life). */
export function assertNodeVersion(version: string = process.versions.node): void {
  const major = Number(version.split(".")[0]);
  if (!(major >= 24)) {
    throw new VcpError(
      "UNSUPPORTED_NODE",
      `vcp-hooks needs Node.js 24 or later, but this is Node.js ${version}. Run it through npm scripts (npm ci installs Node 24 as node_modules/.bin/node) or install Node 24.`,
      { node: version, required: ">=24" },
    );
  }
}
