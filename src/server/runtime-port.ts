/**
 * What the HTTP adapter needs from the runtime, stated structurally. `Runtime` from src/index.ts
 * satisfies it; operations the runtime does not provide yet are optional here and their routes
 * answer 501 NOT_IMPLEMENTED instead of failing to start. Results are passed through as JSON: the
 * route's response schema decides what goes on the wire.
 */
import type { BundleInfo, ChainCompletedEvent, ChainResult, HookType, ResolvedHook, RuntimeStatus } from "../index.js";

export interface PortPrincipal {
  id: string;
  role: "operator" | "client";
}

export interface ServerRuntime {
  bundles: {
    install(artifact: any, options?: { principal?: PortPrincipal }): Promise<BundleInfo>;
    remove(name: string, options?: { principal?: PortPrincipal }): Promise<BundleInfo>;
    list(): BundleInfo[];
    get(name: string): BundleInfo | undefined;
  };
  /** Every session call carries the caller's `{ principal }`; the runtime enforces ownership (DESIGN §6.5). */
  sessions: {
    open?(input: any, options?: { principal?: PortPrincipal }): unknown;
    get?(id: string, options?: { principal?: PortPrincipal }): unknown;
    close(id: string, options?: { principal?: PortPrincipal }): unknown;
    registerHook(sessionId: string, ref: { bundle: string; hook: string }, options?: { principal?: PortPrincipal }): ResolvedHook;
  };
  hooks: {
    chain(type: HookType, sessionId?: string, options?: { principal?: PortPrincipal }): ResolvedHook[];
  };
  fire(type: HookType, input: any): Promise<ChainResult>;
  /** Event profiles (PROFILES §2); absent ⇒ their routes answer 501. */
  fireProfile?(profile: string, event: string, input: { input: unknown; principal?: PortPrincipal; waitApproval?: boolean; signal?: AbortSignal }): Promise<{ native: Record<string, unknown>; exit_code: number; stderr?: string; result: unknown }>;
  /** Approvals of Amplifier `ask_user` answers (PROFILES §3.4); absent ⇒ their routes answer 501. */
  approvals?: {
    list(query: { session?: string; state?: "pending" | "granted" | "denied" | "expired"; principal?: PortPrincipal }): Array<{ id: string; owner: string | null; session: string; state: string }>;
    get(id: string, options: { principal?: PortPrincipal }): unknown;
    decide(id: string, decision: string, options: { principal?: PortPrincipal }): Promise<unknown>;
    on(event: "approval", listener: (event: { type: "new" | "decided" | "expired"; approval: { id: string; owner: string | null; session: string } }) => void): () => void;
  };
  profiles?: {
    list(): unknown[];
    plan(profile: string, event: string): unknown[];
  };
  adapt?(sessionId: string, input: any, options?: { principal?: PortPrincipal }): Promise<unknown>;
  transition?(sessionId: string, input: any, options?: { principal?: PortPrincipal }): Promise<unknown>;
  conflict?(sessionId: string, input: any, options?: { principal?: PortPrincipal }): Promise<unknown>;
  violation?(sessionId: string, input: any, options?: { principal?: PortPrincipal }): Promise<unknown>;
  audit?: {
    query(query: any): unknown;
    head(): unknown;
  };
  metrics?(): Promise<string>;
  /** Lifecycle events; the console's live decisions stream listens to `chain.completed`. */
  on?(event: "chain.completed", listener: (payload: ChainCompletedEvent) => void): () => void;
  status(): RuntimeStatus;
  /** The runtime's input bounds; without them the server assumes the defaults. */
  readonly limits?: { readonly json_depth: number };
  close(): Promise<void>;
}
