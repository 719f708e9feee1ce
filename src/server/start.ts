/** Starts the app on a port with @hono/node-server; resolves once it listens (port 0 picks a free one). */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Pipeline } from "../pipeline/pipeline.ts";
import { type AppOptions, createApp } from "./app.ts";

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Limits on connections, so slow or abusive clients cannot starve real ones: each bounds what one connection
 * may hold, the cap bounds how many (sockets past it are closed at once).
 */
export interface ConnectionLimits {
  /** Milliseconds for a client to send the request's headers (else 408 and closed). Default 10 s. */
  headersTimeoutMs?: number;
  /** Milliseconds for a client to send the whole request, body included (else 408 and closed). Default 30 s. */
  bodyTimeoutMs?: number;
  /** Milliseconds a kept-alive connection may wait idle for its next request. Default 5 s. */
  idleTimeoutMs?: number;
  /** Open connections at most. Default 1024. */
  maxConnections?: number;
}

export const CONNECTION_DEFAULTS: Required<ConnectionLimits> = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 5_000,
  maxConnections: 1024,
};

export function startServer(
  pipeline: Pipeline,
  options: AppOptions & ConnectionLimits & { port?: number; host?: string } = {},
): Promise<RunningServer> {
  const app = createApp(pipeline, options);
  const host = options.host ?? "127.0.0.1";
  const limits = { ...CONNECTION_DEFAULTS, ...definedOnly(options) };
  const headersTimeout = limits.headersTimeoutMs;
  // Node requires requestTimeout >= headersTimeout (the body's time comes after the headers').
  const requestTimeout = Math.max(limits.bodyTimeoutMs, headersTimeout);
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        fetch: app.fetch,
        port: options.port ?? 8080,
        hostname: host,
        serverOptions: {
          headersTimeout,
          requestTimeout,
          keepAliveTimeout: limits.idleTimeoutMs,
          // Node checks the two timeouts above on this interval (default 30 s, which would let them overrun).
          connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeout / 4))),
        },
      },
      (info: AddressInfo) => {
        const shown = host.includes(":") ? `[${host}]` : host;
        resolve({
          url: `http://${shown}:${info.port}`,
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              // Keep-alive sockets would hold close() open until they time out.
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    ) as Server;
    server.maxConnections = limits.maxConnections;
    server.keepAliveTimeout = limits.idleTimeoutMs;
    // `on`, not `once`: a listen failure can be emitted more than once, and an unheard 'error' event crashes.
    server.on("error", reject);
  });
}

function definedOnly(o: ConnectionLimits): ConnectionLimits {
  const out: ConnectionLimits = {};
  for (const k of Object.keys(CONNECTION_DEFAULTS) as (keyof ConnectionLimits)[])
    if (o[k] !== undefined) out[k] = o[k];
  return out;
}
