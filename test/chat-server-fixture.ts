/** A loopback OpenAI-compatible chat model for tests: answers each request with the JSON that `answer` picks. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatServer {
  /** Base URL for a chat config, e.g. http://127.0.0.1:PORT/v1. */
  baseUrl: string;
  close(): void;
}

/**
 * `answer` gets the request's messages as one JSON string and returns the assistant's JSON reply (or a promise of
 * it, to hold the request; a rejection answers HTTP 500).
 */
export async function startChatServer(answer: (prompt: string) => unknown): Promise<ChatServer> {
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (c) => {
      data += c;
    });
    req.on("end", async () => {
      let content: string;
      try {
        content = JSON.stringify(await answer(JSON.stringify(JSON.parse(data).messages)));
      } catch (e) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(e instanceof Error ? e.message : String(e));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
