/**
 * Calls to the vcp-hooks HTTP API with the operator token. SECURITY: the token lives in
 * sessionStorage (gone when the tab closes) and only ever travels in the Authorization header —
 * never in a URL, so it cannot leak through history, logs or a Referer.
 */
const KEY = "vcp-hooks.operator-token";

export function getToken(): string | null {
  return sessionStorage.getItem(KEY);
}
export function setToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}
export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}

/** An error answer of the server, with its code and message verbatim. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** Called when the server says the token is missing, wrong or not an operator's. */
let onAuthFailure: (reason: string) => void = () => undefined;
export function setAuthFailureHandler(handler: (reason: string) => void): void {
  onAuthFailure = handler;
}

export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const token = getToken();
  return token === null ? extra : { ...extra, authorization: `Bearer ${token}` };
}

export async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; details?: unknown } };
    if (body.error && typeof body.error.code === "string") return new ApiError(res.status, body.error.code, body.error.message ?? "", body.error.details);
  } catch {
    // not JSON: fall through
  }
  return new ApiError(res.status, `HTTP_${res.status}`, text.slice(0, 300) || res.statusText);
}

/** Check an answer; 401/403 send the operator back to the login form with the server's reason. */
export async function check(res: Response): Promise<Response> {
  if (res.ok) return res;
  const err = await errorOf(res);
  if (res.status === 401 || (res.status === 403 && err.code === "FORBIDDEN")) onAuthFailure(`${err.code}: ${err.message}`);
  throw err;
}

export async function api<T = unknown>(method: string, path: string, body?: BodyInit, contentType?: string): Promise<T> {
  const res = await check(
    await fetch(path, { method, headers: authHeaders(contentType ? { "content-type": contentType } : {}), ...(body !== undefined ? { body } : {}), cache: "no-store" }),
  );
  if (res.status === 204) return undefined as T;
  const type = res.headers.get("content-type") ?? "";
  return (type.includes("json") ? await res.json() : await res.text()) as T;
}

/** Like api(), but answers `null` for a 404 (an optional resource: approvals, the security report). */
export async function apiOptional<T = unknown>(path: string): Promise<{ value: T } | { missing: ApiError }> {
  try {
    return { value: await api<T>("GET", path) };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { missing: err };
    throw err;
  }
}

/** How an error reads on a page: a server answer as `CODE: message` verbatim, anything else as its message. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
