/**
 * Event-profile routes (PROFILES §2 "Interfaces", §8.1): `GET /v1/profiles` and
 * `POST /v1/profiles/{profile}/events/{event}`. The body is the agent's native input, size- and
 * depth-checked by the server's body limit like every other body before the runtime sees it; the
 * runtime bounds and validates it again before any work. `?answer=native` answers the native JSON
 * alone with the exit code in `X-VCP-Exit-Code`: the form a Claude Code http hook URL reads.
 */
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from "fastify";
import type { Role } from "./auth.js";
import { VcpError, type HookType, type Runtime } from "../index.js";
import { routes } from "./schemas.js";

interface Helpers {
  cfg(roles: readonly Role[] | null, extra?: { limit?: "body" | "bundle" }): object;
  principalOf(request: FastifyRequest): { principal: { id: string; role: Role; approves?: readonly string[] } };
}

/** The exit-code header of `?answer=native` (PROFILES §8.1). */
export const EXIT_CODE_HEADER = "x-vcp-exit-code";

/**
 * `GET /v1/hooks?profile=…&event=…`: the resolved plan of one profile event (order, dedup, matcher,
 * sequential). Both query fields are needed: a profile's hooks are keyed by (profile, event).
 */
export function profilePlanOf(runtime: Runtime, profile: string | undefined, event: string | undefined): { hooks: unknown[] } {
  if (profile === undefined || event === undefined) {
    throw new VcpError("INVALID_REQUEST", "querystring: profile and event go together (a profile plan is keyed by both)", { field: profile === undefined ? "querystring.profile" : "querystring.event" });
  }
  // vcp@1's events are its hook types: its plan is the VCP chain order (the existing ?type= view).
  if (/^vcp(@|$)/.test(profile)) return { hooks: runtime.hooks.chain(event as HookType) };
  return { hooks: runtime.profiles.plan(profile, event) };
}

/**
 * @example
 * ```ts
 * registerProfileRoutes(app, runtime, { cfg, principalOf });
 * ```
 */
export function registerProfileRoutes(app: FastifyInstance, runtime: Runtime, { cfg, principalOf }: Helpers): void {
  // Requests waiting for an approval (?wait_approval=1): a closing server stops their wait (they
  // answer the pending ask) instead of holding shutdown until the approvals time out.
  const waiting = new Set<AbortController>();
  app.addHook("preClose", (done) => {
    for (const controller of waiting) controller.abort();
    done();
  });

  app.get("/v1/profiles", { schema: routes.listProfiles, config: cfg(["operator", "client"]) as FastifyContextConfig }, async () => ({ profiles: runtime.profiles.list() }));

  app.post("/v1/profiles/:profile/events/:event", { schema: routes.fireProfileEvent, config: cfg(["client"], { limit: "body" }) as FastifyContextConfig }, async (request, reply) => {
    const { profile, event } = request.params as { profile: string; event: string };
    const { answer, wait_approval } = request.query as { answer?: "envelope" | "native"; wait_approval?: 0 | 1 };
    // The session is the input's own `session_id`, owned by this caller (PROFILES §8.3). An Amplifier
    // ask_user answer carries its pending approval; `wait_approval=1` answers the decision (§8.9).
    let controller: AbortController | undefined;
    if (wait_approval === 1) {
      controller = new AbortController();
      waiting.add(controller);
      // The response's close before it was sent: the client went away; nobody waits for its approval.
      reply.raw.once("close", () => controller!.abort());
    }
    let out: Awaited<ReturnType<Runtime["fireProfile"]>>;
    try {
      out = await runtime.fireProfile(profile, event, { input: request.body, ...principalOf(request), ...(controller !== undefined ? { waitApproval: true, signal: controller.signal } : {}) });
    } finally {
      if (controller !== undefined) waiting.delete(controller);
    }
    if (answer === "native") {
      void reply.header(EXIT_CODE_HEADER, String(out.exit_code));
      return reply.code(200).send(out.native);
    }
    return out;
  });
}
