/**
 * A fake model server for the real-agent suite (issue 26 item 4): it speaks enough of the Anthropic
 * Messages API (Claude Code; Copilot CLI through its BYOK provider), the Gemini API (Gemini CLI) and the
 * OpenAI Responses API over SSE (Codex) for one scripted turn:
 *
 *   agent ─request (user prompt, tools)──────────────► fake: the scripted tool call
 *   agent runs its hooks, maybe the tool
 *   agent ─request (tool_result / functionResponse)──► fake: the scripted final text   (recorded)
 *   anything else (titles, classifiers, token counts) ► fake: a short neutral answer
 *
 * Every request is recorded, so a test can read what reached the model: the tool result of a tool
 * that ran, or the hook's block reason in its place. It binds 127.0.0.1 only; the suite runs it in
 * the agent's loopback-only network namespace, so nothing leaves the machine either way.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What the model answers to the next user prompt. */
export interface Script {
  /** The tool call the model makes first (the agent's own tool name and input). */
  readonly tool: { readonly name: string; readonly input: Readonly<Record<string, unknown>> };
  /** The text the model ends with once it has seen the tool's result. */
  readonly final: string;
}

export interface ModelRequest {
  readonly method: string;
  readonly path: string;
  readonly body: Record<string, unknown> | undefined;
  /** What the fake answered: the scripted tool call, the final text, or a neutral side answer. */
  readonly answered: "tool_call" | "final" | "side";
}

export interface FakeModel {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: ModelRequest[];
  /** Script the next conversation and forget the requests seen so far. */
  script(next: Script): void;
  /** The text of each tool result the model was sent (Claude `tool_result`, Gemini `functionResponse`, Responses `function_call_output`). */
  toolResults(): string[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Start the fake on 127.0.0.1 (an ephemeral port unless `port` is given). */
export async function startFakeModel(port = 0): Promise<FakeModel> {
  let current: Script | undefined;
  const requests: ModelRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Json | undefined;
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
        body = isObject(parsed) ? parsed : undefined;
      } catch {
        body = undefined;
      }
      try {
        answer(req, res, body);
      } catch (err) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `fake model: ${(err as Error).message}` } }));
      }
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  function record(req: IncomingMessage, body: Json | undefined, answered: ModelRequest["answered"]): void {
    requests.push({ method: req.method ?? "", path: req.url ?? "", body, answered });
  }

  function answer(req: IncomingMessage, res: ServerResponse, body: Json | undefined): void {
    const path = (req.url ?? "").split("?")[0]!;
    if (req.method === "POST" && /\/v1\/messages$/.test(path)) return anthropicMessages(req, res, body);
    if (req.method === "POST" && /\/v1\/messages\/count_tokens$/.test(path)) {
      record(req, body, "side");
      return json(res, { input_tokens: 100 });
    }
    if (req.method === "POST" && /\/responses$/.test(path)) return openaiResponses(req, res, body);
    if (req.method === "GET" && /\/models$/.test(path)) {
      record(req, body, "side");
      return json(res, { object: "list", data: [], models: [] });
    }
    const gemini = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)$/.exec(path);
    if (req.method === "POST" && gemini) return geminiCall(req, res, body, gemini[1]!, gemini[2]!);
    record(req, body, "side");
    json(res, { error: { type: "not_found_error", message: `fake model: no route ${req.method} ${path}` } }, 404);
  }

  // ── Anthropic Messages API ──────────────────────────────────────────────────────────────────────

  function anthropicMessages(req: IncomingMessage, res: ServerResponse, body: Json | undefined): void {
    const messages = Array.isArray(body?.["messages"]) ? (body["messages"] as unknown[]) : [];
    const last = messages.at(-1);
    const content = isObject(last) && Array.isArray(last["content"]) ? (last["content"] as unknown[]) : [];
    const tools = Array.isArray(body?.["tools"]) ? (body["tools"] as unknown[]) : [];
    const offersTool = current !== undefined && tools.some((t) => isObject(t) && t["name"] === current!.tool.name);
    // The tool result may be followed by a user message of its own (Copilot sends a preToolUse hook's
    // additional context so): any block of the turn since the model's last message counts.
    const sawResult = blocksSinceModel(messages).some((b) => isObject(b) && b["type"] === "tool_result");
    const calledBefore = messages.some((m) => isObject(m) && m["role"] === "assistant" && Array.isArray(m["content"]) && (m["content"] as unknown[]).some((b) => isObject(b) && b["type"] === "tool_use"));
    const model = typeof body?.["model"] === "string" ? body["model"] : "claude-fake";
    let blocks: Json[];
    let stop: string;
    if (sawResult && current) {
      record(req, body, "final");
      blocks = [{ type: "text", text: current.final }];
      stop = "end_turn";
    } else if (offersTool && !sawResult && !calledBefore && lastIsPrompt(content)) {
      record(req, body, "tool_call");
      blocks = [{ type: "tool_use", id: `toolu_fake${requests.length}`, name: current!.tool.name, input: current!.tool.input }];
      stop = "tool_use";
    } else {
      record(req, body, "side");
      blocks = [{ type: "text", text: "ok" }];
      stop = "end_turn";
    }
    const message = { id: `msg_fake${requests.length}`, type: "message", role: "assistant", model, content: blocks, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 } };
    if (body?.["stream"] !== true) return json(res, message);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (event: string, data: Json) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send("message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } });
    blocks.forEach((block, index) => {
      if (block["type"] === "tool_use") {
        send("content_block_start", { type: "content_block_start", index, content_block: { ...block, input: {} } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block["input"]) } });
      } else {
        send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block["text"] } });
      }
      send("content_block_stop", { type: "content_block_stop", index });
    });
    send("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } });
    send("message_stop", { type: "message_stop" });
    res.end();
  }

  /** The last user message is the prompt (text), not a tool result or a system reminder alone. */
  function lastIsPrompt(content: unknown[]): boolean {
    return content.some((b) => isObject(b) && b["type"] === "text");
  }

  // ── OpenAI Responses API (streamed) ────────────────────────────────────────────────────────────

  function openaiResponses(req: IncomingMessage, res: ServerResponse, body: Json | undefined): void {
    const input = Array.isArray(body?.["input"]) ? (body["input"] as unknown[]) : [];
    const last = input.at(-1);
    const tools = Array.isArray(body?.["tools"]) ? (body["tools"] as unknown[]) : [];
    const offersTool = current !== undefined && tools.some((t) => isObject(t) && t["name"] === current!.tool.name);
    const sawResult = isObject(last) && last["type"] === "function_call_output";
    // The prompt is in, no tool call yet (hook context may follow the prompt as a developer message).
    const prompted = input.some((i) => isObject(i) && i["type"] === "message" && i["role"] === "user") && !input.some((i) => isObject(i) && i["type"] === "function_call");
    const id = `resp_fake${requests.length + 1}`;
    let item: Json;
    if (sawResult && current) {
      record(req, body, "final");
      item = { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: current.final, annotations: [] }] };
    } else if (offersTool && prompted) {
      record(req, body, "tool_call");
      item = { type: "function_call", id: `fc_${id}`, call_id: `call_${id}`, status: "completed", name: current!.tool.name, arguments: JSON.stringify(current!.tool.input) };
    } else {
      record(req, body, "side");
      item = { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "ok", annotations: [] }] };
    }
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 };
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (data: Json) => res.write(`event: ${String(data["type"])}\ndata: ${JSON.stringify(data)}\n\n`);
    send({ type: "response.created", response: { id, object: "response", status: "in_progress", output: [] } });
    send({ type: "response.output_item.added", output_index: 0, item });
    send({ type: "response.output_item.done", output_index: 0, item });
    send({ type: "response.completed", response: { id, object: "response", status: "completed", output: [item], usage } });
    res.end();
  }

  // ── Gemini API ──────────────────────────────────────────────────────────────────────────────────

  function geminiCall(req: IncomingMessage, res: ServerResponse, body: Json | undefined, model: string, method: string): void {
    if (method === "countTokens") {
      record(req, body, "side");
      return json(res, { totalTokens: 100 });
    }
    if (method === "embedContent" || method === "batchEmbedContents") {
      record(req, body, "side");
      return json(res, method === "embedContent" ? { embedding: { values: [0] } } : { embeddings: [{ values: [0] }] });
    }
    const contents = Array.isArray(body?.["contents"]) ? (body["contents"] as unknown[]) : [];
    const last = contents.at(-1);
    const parts = isObject(last) && Array.isArray(last["parts"]) ? (last["parts"] as unknown[]) : [];
    const declared = (Array.isArray(body?.["tools"]) ? (body["tools"] as unknown[]) : []).flatMap((t) =>
      isObject(t) && Array.isArray(t["functionDeclarations"]) ? (t["functionDeclarations"] as unknown[]) : [],
    );
    const offersTool = current !== undefined && declared.some((d) => isObject(d) && d["name"] === current!.tool.name);
    const sawResult = parts.some((p) => isObject(p) && isObject(p["functionResponse"]));
    const config = isObject(body?.["generationConfig"]) ? body["generationConfig"] : {};
    let part: Json;
    if (sawResult && current) {
      record(req, body, "final");
      part = { text: current.final };
    } else if (offersTool && parts.some((p) => isObject(p) && typeof p["text"] === "string")) {
      record(req, body, "tool_call");
      part = { functionCall: { name: current!.tool.name, args: current!.tool.input } };
    } else {
      record(req, body, "side");
      // Side calls asking for JSON (routing classifiers, next-speaker checks) get an object of their schema.
      const schema = config["responseJsonSchema"] ?? config["responseSchema"];
      part = { text: config["responseMimeType"] === "application/json" ? JSON.stringify(sample(schema)) : "ok" };
    }
    const response = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
      modelVersion: model,
    };
    if (method === "generateContent") return json(res, response);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`data: ${JSON.stringify(response)}\r\n\r\n`);
    res.end();
  }

  await new Promise<void>((ready, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => ready());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    requests,
    script(next) {
      current = next;
      requests.length = 0;
    },
    toolResults() {
      return requests.filter((r) => r.answered === "final").map((r) => lastTurn(r.body) ?? "");
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/**
 * The smallest value of a JSON schema (OpenAPI-style upper-case types too): every required property
 * filled, the first enum value, the lower bound of a number.
 */
export function sample(schema: unknown): unknown {
  if (!isObject(schema)) return {};
  if (Array.isArray(schema["enum"]) && schema["enum"].length > 0) return schema["enum"][0];
  const type = String(schema["type"] ?? "object").toLowerCase();
  switch (type) {
    case "string":
      return "ok";
    case "integer":
    case "number":
      return typeof schema["minimum"] === "number" ? schema["minimum"] : 1;
    case "boolean":
      return false;
    case "array":
      return [];
    default: {
      const properties = isObject(schema["properties"]) ? schema["properties"] : {};
      const required = Array.isArray(schema["required"]) ? (schema["required"] as unknown[]).filter((k): k is string => typeof k === "string") : Object.keys(properties);
      return Object.fromEntries(required.map((k) => [k, sample(properties[k])]));
    }
  }
}

/** The tool-result part of the last turn of a request, as text (every API). */
function lastTurn(body: Json | undefined): string | undefined {
  if (Array.isArray(body?.["input"])) {
    const outputs = (body["input"] as unknown[]).filter((i) => isObject(i) && i["type"] === "function_call_output");
    return outputs.length > 0 ? JSON.stringify(outputs.at(-1)) : undefined;
  }
  const list = Array.isArray(body?.["messages"]) ? body["messages"] : Array.isArray(body?.["contents"]) ? body["contents"] : undefined;
  if (!Array.isArray(list)) return undefined;
  const results = blocksSinceModel(list as unknown[]).filter((p) => isObject(p) && (p["type"] === "tool_result" || isObject(p["functionResponse"])));
  return results.length > 0 ? JSON.stringify(results) : undefined;
}

/** The content blocks (Anthropic `content`, Gemini `parts`) of the messages after the model's last one. */
function blocksSinceModel(list: readonly unknown[]): unknown[] {
  const lastModel = list.findLastIndex((m) => isObject(m) && (m["role"] === "assistant" || m["role"] === "model"));
  return list.slice(lastModel + 1).flatMap((m) => (isObject(m) ? (Array.isArray(m["content"]) ? (m["content"] as unknown[]) : Array.isArray(m["parts"]) ? (m["parts"] as unknown[]) : []) : []));
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
