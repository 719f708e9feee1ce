/**
 * A model hub on loopback for `models pull` tests: the API listing (`/api/models/REPO/tree/REV?recursive=true`,
 * `/api/models/REPO/revision/REV`), files at `/REPO/resolve/COMMIT/PATH` with Range, LFS entries (sha256) for the
 * ONNX files and git blob ids for the rest, a gated repo that wants a bearer token, and switches to break things.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";

export const sha256 = (b: Buffer): string => createHash("sha256").update(b).digest("hex");
const gitOid = (b: Buffer) => createHash("sha1").update(`blob ${b.length}\0`).update(b).digest("hex");

export interface HubRepo {
  commit: string;
  files: Map<string, Buffer>;
  /** Bearer token the repo wants (gated). */
  token?: string;
}

export interface Hub {
  baseUrl: string;
  repos: Map<string, HubRepo>;
  /** Resolve requests seen: path and Range header. */
  requests: { url: string; range?: string; auth?: string }[];
  /** Cut the next file download after half its body. */
  dropNext: boolean;
  /** Report a wrong sha256 for this repo path. */
  wrongSha?: string;
  /** Another origin (another hub fixture) the ONNX files are redirected to, as the hub does to its CDN. */
  cdn?: string;
  close(): Promise<void>;
}

/** Every file of a folder, by its path relative to the folder. */
export function folderFiles(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p).split("\\").join("/"), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

export async function startHub(repos: Record<string, HubRepo>): Promise<Hub> {
  const hub: Hub = {
    baseUrl: "",
    repos: new Map(Object.entries(repos)),
    requests: [],
    dropNext: false,
    close: async () => {},
  };
  const allowed = (req: IncomingMessage, r: HubRepo) =>
    !r.token || req.headers.authorization === `Bearer ${r.token}`;
  const server: Server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/(tree|revision)\/([^/]+)$/.exec(url.pathname);
    const file = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const repo = hub.repos.get((api ?? file)?.[1] ?? "");
    if (!repo || !(api || file)) return void res.writeHead(404).end("not found");
    if (!allowed(req, repo)) return void res.writeHead(401).end("unauthorized");
    const rev = decodeURIComponent((api?.[3] ?? file?.[2]) as string);
    if (rev !== "main" && rev !== repo.commit) return void res.writeHead(404).end("no such revision");
    if (api?.[2] === "revision") return void res.end(JSON.stringify({ id: api[1], sha: repo.commit }));
    if (api) {
      const entries: unknown[] = [{ type: "directory", path: "onnx", size: 0, oid: "0" }];
      for (const [path, body] of repo.files) {
        const lfs = path.endsWith(".onnx");
        const sha = hub.wrongSha === path ? "0".repeat(64) : sha256(body);
        entries.push(
          lfs
            ? { type: "file", path, size: 134, oid: gitOid(body), lfs: { oid: sha, size: body.length } }
            : { type: "file", path, size: body.length, oid: gitOid(body) },
        );
      }
      return void res.end(JSON.stringify(entries));
    }
    const path = decodeURIComponent((file as RegExpExecArray)[3]);
    // LFS files may live elsewhere (the hub redirects them to a CDN): send them there when one is set.
    if (hub.cdn && path.endsWith(".onnx") && !url.searchParams.has("cdn")) {
      res.writeHead(302, { location: `${hub.cdn}${url.pathname}?cdn=1` }).end();
      return;
    }
    hub.requests.push({ url: url.pathname, range: req.headers.range, auth: req.headers.authorization });
    const body = repo.files.get(path);
    if (!body) return void res.writeHead(404).end("no such file");
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    const start = m ? Number(m[1]) : 0;
    if (start >= body.length) return void res.writeHead(416).end();
    const part = body.subarray(start);
    res.writeHead(m ? 206 : 200, {
      "content-length": part.length,
      etag: `"${sha256(body)}"`,
      ...(m ? { "content-range": `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
    });
    if (hub.dropNext) {
      hub.dropNext = false;
      res.write(part.subarray(0, Math.floor(part.length / 2)), () => res.socket?.end());
      return;
    }
    res.end(part);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  hub.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hub.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return hub;
}
