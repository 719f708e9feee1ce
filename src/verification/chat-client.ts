/**
 * A small client for OpenAI-compatible chat completion endpoints (Ollama, vLLM, llama.cpp server, OpenAI):
 * per-request timeout, retries with exponential backoff on network errors, timeouts, HTTP 429/5xx and invalid
 * answers, a limit on concurrent requests, and JSON answers validated against a zod schema.
 * Shared by the LLM verifier backend and the evaluation's LLM judge.
 */
import { z } from "zod";
import { ServiceError } from "../data/errors.ts";

/** Settings of an OpenAI-compatible chat endpoint, as config files give them (verifier backend, LLM judge). */
export const ChatEndpointSchema = z.object({
  baseUrl: z.string().url(),
  model: z.string().min(1),
  /** Environment variable holding the API key, if the server needs one (keys are never stored in files). */
  apiKeyEnv: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  retries: z.number().int().min(0).optional(),
  backoffMs: z.number().int().min(0).optional(),
  concurrency: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  jsonMode: z.boolean().optional(),
});

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatClientOptions {
  /** Base URL including the API version, e.g. http://127.0.0.1:11434/v1 (the client appends /chat/completions). */
  baseUrl: string;
  model: string;
  /** Sent as a Bearer token when set. */
  apiKey?: string;
  /** Per attempt, in milliseconds. */
  timeoutMs?: number;
  /** Extra attempts after the first one fails. */
  retries?: number;
  /** First backoff delay; doubles after each failed attempt (a Retry-After header wins when longer). */
  backoffMs?: number;
  /** Requests in flight at most. */
  concurrency?: number;
  temperature?: number;
  maxTokens?: number;
  /** Ask for `response_format: {type: "json_object"}` in completeJson (not every server supports it). */
  jsonMode?: boolean;
  /** The stage the client serves, e.g. "narratives (chat)": starts its error messages, with the URL. */
  stage?: string;
}

/** Raised when every attempt failed; `attempts` holds the reason of each. */
export class ChatError extends ServiceError {
  readonly attempts: string[];
  constructor(message: string, attempts: string[]) {
    super(`${message}: ${attempts.join("; ")}`);
    this.name = "ChatError";
    this.attempts = attempts;
  }
}

/** An attempt failure that is worth retrying. */
class RetryableError extends Error {
  readonly retryAfterMs?: number;
  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

/** A counting semaphore: at most `limit` tasks run at once, the others wait in FIFO order. */
export function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  if (!(limit >= 1)) throw new RangeError("concurrency must be at least 1");
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finishing task hands its slot straight to the next waiter, so no newcomer can slip in between.
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first JSON object in a model answer (tolerates code fences and text around it). */
export function extractJson(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const body = fenced ? fenced[1] : text;
  const start = body.indexOf("{");
  const end = body.lastIndexOf("}");
  if (start < 0 || end < start) throw new Error("no JSON object in the answer");
  return JSON.parse(body.slice(start, end + 1));
}

export class ChatClient {
  readonly options: Required<Omit<ChatClientOptions, "apiKey" | "maxTokens" | "stage">> &
    Pick<ChatClientOptions, "apiKey" | "maxTokens" | "stage">;
  private readonly run: <T>(task: () => Promise<T>) => Promise<T>;

  constructor(options: ChatClientOptions) {
    this.options = {
      timeoutMs: 60_000,
      retries: 3,
      backoffMs: 500,
      concurrency: 4,
      temperature: 0,
      jsonMode: true,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
    };
    this.run = limiter(this.options.concurrency);
  }

  /** The assistant's text for the messages. */
  complete(messages: readonly ChatMessage[]): Promise<string> {
    return this.withRetries(() => this.request(messages, false));
  }

  /** The assistant's answer parsed as JSON and validated; an invalid answer is retried like a failed request. */
  completeJson<T>(messages: readonly ChatMessage[], schema: z.ZodType<T>): Promise<T> {
    return this.withRetries(async () => {
      const text = await this.request(messages, this.options.jsonMode);
      let value: unknown;
      try {
        value = extractJson(text);
      } catch (e) {
        throw new RetryableError(`invalid JSON answer (${(e as Error).message})`);
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new RetryableError(
          `answer does not match the schema (${issue?.path.join(".")}: ${issue?.message})`,
        );
      }
      return parsed.data;
    });
  }

  private async withRetries<T>(attemptFn: () => Promise<T>): Promise<T> {
    const reasons: string[] = [];
    for (let attempt = 0; attempt <= this.options.retries; attempt++) {
      try {
        return await this.run(attemptFn);
      } catch (e) {
        if (!(e instanceof RetryableError)) throw e;
        reasons.push(e.message);
        if (attempt === this.options.retries) break;
        const backoff = this.options.backoffMs * 2 ** attempt;
        await sleep(Math.max(backoff, e.retryAfterMs ?? 0));
      }
    }
    throw new ChatError(`${this.where()}chat completion failed after ${reasons.length} attempt(s)`, reasons);
  }

  /** "STAGE, URL: " for error messages (just the URL without a stage). */
  private where(): string {
    const url = `${this.options.baseUrl}/chat/completions`;
    return this.options.stage ? `${this.options.stage}, ${url}: ` : `${url}: `;
  }

  private async request(messages: readonly ChatMessage[], json: boolean): Promise<string> {
    const o = this.options;
    const body: Record<string, unknown> = {
      model: o.model,
      messages,
      temperature: o.temperature,
      stream: false,
    };
    if (o.maxTokens !== undefined) body.max_tokens = o.maxTokens;
    if (json) body.response_format = { type: "json_object" };
    let res: Response;
    try {
      res = await fetch(`${o.baseUrl}/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(o.timeoutMs),
      });
    } catch (e) {
      const err = e as Error;
      const reason = err.name === "TimeoutError" ? `timed out after ${o.timeoutMs} ms` : err.message;
      throw new RetryableError(reason);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      throw new RetryableError(`reading the response failed (${(e as Error).message})`);
    }
    if (!res.ok) {
      const message = `HTTP ${res.status} ${text.slice(0, 200)}`.trim();
      if (res.status === 429 || res.status >= 500) {
        const after = Number(res.headers.get("retry-after"));
        throw new RetryableError(message, Number.isFinite(after) && after > 0 ? after * 1000 : undefined);
      }
      throw new ChatError(`${this.where()}chat completion rejected`, [message]);
    }
    let payload: { choices?: { message?: { content?: unknown } }[] };
    try {
      payload = JSON.parse(text);
    } catch {
      throw new RetryableError("the server's response is not JSON");
    }
    const content = payload.choices?.[0]?.message?.content;
    if (typeof content !== "string")
      throw new RetryableError("the response has no choices[0].message.content");
    return content;
  }
}
