import { z } from "zod";
import { ConstitutionSchema, type Constitution } from "./constitution.js";
import type { HookEvent } from "./events.js";

/** The VCP context object: an open JSON map (spec §4.2). */
export const VcpContextSchema = z.record(z.string(), z.unknown());
export type VcpContext = Record<string, unknown>;

/**
 * Session metadata handed to hooks (spec §4.2 `session`: "id, scope, timestamps"; §3.6 "session
 * metadata"). For an open session the runtime builds it in one place, the pipeline's `sessionInfo`,
 * for every route and every chain: `{ id, created_at, updated_at, state, metadata }` — the caller-facing
 * id, never the owner or the runtime's session key. A session that was never opened gets what the
 * caller of `fire` gave (`{ id }` for a bare id).
 */
export const SessionInfoSchema = z
  .object({
    id: z.string().min(1).max(256),
    scope: z.enum(["deployment", "session"]).optional(),
    deployment_id: z.string().optional(),
    created_at: z.string().optional(),
    updated_at: z.string().optional(),
    /** The session's state-machine state (null: none yet). */
    state: z.string().nullable().optional(),
    /** The metadata the session was opened with. */
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

/** What a hook action receives (spec §4.2). */
export interface HookInput<E = HookEvent> {
  context: VcpContext;
  constitution: Constitution;
  event: E;
  session: SessionInfo;
  chain_state: Record<string, unknown>;
}

export const HookInputSchema = z.object({
  context: VcpContextSchema,
  constitution: ConstitutionSchema,
  event: z.record(z.string(), z.unknown()),
  session: SessionInfoSchema,
  chain_state: z.record(z.string(), z.unknown()),
});

/**
 * A short, non-sensitive description of a hook input (spec §6.4 "input summary"): sizes and ids,
 * never values, because lifecycle events flow into ordinary logs.
 */
export interface InputSummary {
  session_id: string;
  constitution_id: string;
  context_keys: number;
  input_bytes: number;
}
