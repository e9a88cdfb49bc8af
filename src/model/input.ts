import { z } from "zod";
import { ConstitutionSchema, type Constitution } from "./constitution.js";
import type { HookEvent } from "./events.js";

/** The VCP context object: an open JSON map (spec §4.2). */
export const VcpContextSchema = z.record(z.string(), z.unknown());
export type VcpContext = Record<string, unknown>;

/** Session metadata handed to hooks (spec §4.2 `session`). */
export const SessionInfoSchema = z
  .object({
    id: z.string().min(1).max(256),
    scope: z.enum(["deployment", "session"]).optional(),
    deployment_id: z.string().optional(),
    created_at: z.string().optional(),
    updated_at: z.string().optional(),
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
