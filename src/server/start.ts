/** Starts the app on a port with @hono/node-server; resolves once it listens (port 0 picks a free one). */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Pipeline } from "../pipeline/pipeline.ts";
import { type AppOptions, createApp } from "./app.ts";

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function startServer(
  pipeline: Pipeline,
  options: AppOptions & { port?: number; host?: string } = {},
): Promise<RunningServer> {
  const app = createApp(pipeline, options);
  const host = options.host ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, port: options.port ?? 8080, hostname: host },
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
    );
    // `on`, not `once`: a listen failure can be emitted more than once, and an unheard 'error' event crashes.
    server.on("error", reject);
  });
}
