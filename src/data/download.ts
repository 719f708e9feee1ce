/**
 * The one download module: files of a hub repository (Hugging Face dataset or model repos), listed through the hub's
 * API with their sizes and checksums, fetched to `<name>.part` and resumed with an HTTP Range request after a
 * dropped connection or an interrupted run, checked against the hub's size and sha256 (the git blob id for small
 * non-LFS files), renamed into place and recorded in a manifest. `data pull` and `models pull` both go through here.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, openSync, writeSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { get as httpGetPlain, type IncomingMessage } from "node:http";
import { get as httpsGet } from "node:https";
import { dirname, join } from "node:path";
import { ServiceError } from "./errors.ts";
import { writeFileAtomic } from "./tables.ts";

export const HUB_BASE_URL = "https://huggingface.co";
export const HUB_REVISION = "main";
/** The environment variable holding a hub access token (gated or private repositories). */
export const HUB_TOKEN_ENV = "HF_TOKEN";
export const MANIFEST = "manifest.json";

/** A user-facing failure of a pull (network, hub answer, checksum); the CLI prints its message, exit code 1. */
export class PullError extends ServiceError {
  constructor(message: string) {
    super(message);
    this.name = "PullError";
  }
}

export type RepoKind = "datasets" | "models";

/** Where the hub is and how to reach it. */
export interface HubAccess {
  baseUrl: string;
  /** Sent as `Authorization: Bearer` to the hub only (never to a CDN it redirects to). */
  token?: string;
}

export interface HubFile {
  repo: string;
  /** Path inside the repo. */
  path: string;
  /** Where it goes, relative to the pull folder. */
  local: string;
  size?: number;
  /** sha256 of the content (LFS files). */
  sha256?: string;
  /** Git blob id (sha1 of "blob <size>\0" + content) for files stored in git itself. */
  gitOid?: string;
}

export interface ManifestEntry {
  repo: string;
  path: string;
  url: string;
  size: number;
  sha256: string;
  /** What the download was checked against. */
  verified: "sha256" | "git-oid" | "size" | "none";
  etag?: string;
  downloadedAt: string;
}

export interface PullManifest {
  source: string;
  /** The revision asked for (a branch, tag or commit). */
  revision: string;
  /** The commit the hub resolved it to (models pull). */
  commit?: string;
  /** The one repository of the folder (models pull). */
  repo?: string;
  files: Record<string, ManifestEntry>;
}

export interface PullProgress {
  file: string;
  /** Bytes of this file on disk so far (resumed bytes included) and its size when known. */
  bytes: number;
  size?: number;
}

const trimSlash = (s: string) => s.replace(/\/+$/, "");
const COMMIT = /^[0-9a-f]{40}$/;
export const isCommit = (revision: string): boolean => COMMIT.test(revision);

/** The token from the environment, when set. */
export const hubToken = (): string | undefined => process.env[HUB_TOKEN_ENV] || undefined;

/** The hub's refusal in words a user can act on; 401/403 say what to do about the token. */
function statusError(url: string, status: number, text: string | undefined, token?: string): PullError {
  const head = `${url}: the hub answered HTTP ${status} ${text ?? ""}`.trim();
  if (status === 401)
    return new PullError(
      token
        ? `${head}; the token in $${HUB_TOKEN_ENV} was refused (expired, or without access to this repository)`
        : `${head}; the repository is gated or private: set $${HUB_TOKEN_ENV} to a hub access token that may read it`,
    );
  if (status === 403)
    return new PullError(
      `${head}; access refused: for a gated repository, accept its terms on the hub with the account of $${HUB_TOKEN_ENV}`,
    );
  if (status === 404) return new PullError(`${head}; no such repository, revision or file`);
  return new PullError(head);
}

const authHeaders = (token?: string): Record<string, string> =>
  token ? { authorization: `Bearer ${token}` } : {};

async function getJson(url: string, token?: string): Promise<{ body: unknown; next?: string }> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json", ...authHeaders(token) } });
  } catch (e) {
    throw new PullError(`cannot reach ${url} (${(e as Error).cause ?? (e as Error).message})`);
  }
  if (!res.ok) throw statusError(url, res.status, res.statusText, token);
  // The tree API pages long listings with a Link header.
  const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  try {
    return { body: await res.json(), next: next ? new URL(next, url).href : undefined };
  } catch {
    throw new PullError(`${url}: the hub's answer is not JSON`);
  }
}

const apiBase = (hub: HubAccess, kind: RepoKind, repo: string) =>
  `${trimSlash(hub.baseUrl)}/api/${kind}/${repo}`;

/** The commit a branch or tag points to now (a 40-hex commit is returned as is). */
export async function resolveCommit(
  hub: HubAccess,
  kind: RepoKind,
  repo: string,
  revision: string,
): Promise<string> {
  if (isCommit(revision)) return revision;
  const url = `${apiBase(hub, kind, repo)}/revision/${encodeURIComponent(revision)}`;
  const sha = ((await getJson(url, hub.token)).body as { sha?: unknown } | null)?.sha;
  if (typeof sha !== "string" || !isCommit(sha))
    throw new PullError(`${url}: the answer names no commit (sha)`);
  return sha;
}

/**
 * Every file of a repo at `revision` that `keep` accepts, with the sizes and checksums the hub reports; `local` is
 * `folder/path` (or the path alone without a folder).
 */
export async function listHubFiles(
  hub: HubAccess,
  kind: RepoKind,
  repo: string,
  revision: string,
  keep: (path: string) => boolean,
  folder?: string,
): Promise<HubFile[]> {
  const files: HubFile[] = [];
  let url: string | undefined =
    `${apiBase(hub, kind, repo)}/tree/${encodeURIComponent(revision)}?recursive=true`;
  for (let pages = 0; url && pages < 1000; pages++) {
    const { body, next } = await getJson(url, hub.token);
    if (!Array.isArray(body)) throw new PullError(`${url}: expected a list of files`);
    for (const e of body as {
      type?: string;
      path?: string;
      size?: number;
      oid?: string;
      lfs?: { oid?: string; size?: number };
    }[]) {
      if (e.type !== "file" || typeof e.path !== "string") continue;
      // A path is joined under the pull folder: nothing may climb out of it.
      if (e.path.split("/").some((s) => s === "" || s === "." || s === ".."))
        throw new PullError(`${url}: refusing the file path ${JSON.stringify(e.path)}`);
      if (!keep(e.path)) continue;
      files.push({
        repo,
        path: e.path,
        local: folder ? `${folder}/${e.path}` : e.path,
        size: e.lfs?.size ?? e.size,
        sha256: e.lfs?.oid,
        gitOid: e.lfs ? undefined : e.oid,
      });
    }
    url = next;
  }
  return files;
}

/** Where the hub serves a file: `/datasets/REPO/resolve/REV/PATH` or `/REPO/resolve/REV/PATH` for models. */
export function resolveUrl(
  baseUrl: string,
  kind: RepoKind,
  f: Pick<HubFile, "repo" | "path">,
  revision: string,
): string {
  const path = f.path.split("/").map(encodeURIComponent).join("/");
  const prefix = kind === "datasets" ? "/datasets" : "";
  return `${trimSlash(baseUrl)}${prefix}/${f.repo}/resolve/${encodeURIComponent(revision)}/${path}`;
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** sha256 of a file and its git blob id (one pass). */
async function digests(path: string, size: number): Promise<{ sha256: string; gitOid: string }> {
  const sha = createHash("sha256");
  const git = createHash("sha1").update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path)) {
    sha.update(chunk as Buffer);
    git.update(chunk as Buffer);
  }
  return { sha256: sha.digest("hex"), gitOid: git.digest("hex") };
}

/**
 * GET with redirects followed (the hub sends LFS files to a CDN); headers such as Range go along, the token only
 * while the host stays the hub's.
 */
function httpGet(
  url: string,
  headers: Record<string, string>,
  token: string | undefined,
  redirects = 5,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith("https:") ? httpsGet : httpGetPlain;
    const all = { "user-agent": "climatecheck", ...headers, ...authHeaders(token) };
    const req = get(url, { headers: all }, (res) => {
      const to = res.headers.location;
      if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && to) {
        res.resume();
        const next = new URL(to, url);
        const sameHost = next.origin === new URL(url).origin;
        if (redirects <= 0) reject(new Error("too many redirects"));
        else httpGet(next.href, headers, sameHost ? token : undefined, redirects - 1).then(resolve, reject);
        return;
      }
      resolve(res);
    });
    req.on("error", reject);
  });
}

/**
 * Downloads `url` into `dest` through `dest.part`, resuming with Range after a dropped connection (up to
 * `retries` times) and across runs; returns the etag the server gave.
 */
async function download(
  url: string,
  dest: string,
  f: HubFile,
  retries: number,
  token: string | undefined,
  onBytes: (bytes: number) => void,
): Promise<string | undefined> {
  const part = `${dest}.part`;
  await mkdir(dirname(dest), { recursive: true });
  let etag: string | undefined;
  for (let attempt = 0; ; attempt++) {
    const have = (await sizeOf(part)) ?? 0;
    if (f.size !== undefined && have === f.size) return etag;
    if (f.size !== undefined && have > f.size) await rm(part, { force: true });
    const from = f.size !== undefined && have > f.size ? 0 : have;
    let res: IncomingMessage;
    try {
      res = await httpGet(url, from > 0 ? { range: `bytes=${from}-` } : {}, token);
    } catch (e) {
      if (attempt < retries) continue;
      throw new PullError(`cannot reach ${url} (${(e as Error).message}); run again to resume`);
    }
    const status = res.statusCode ?? 0;
    if (status === 416 && from > 0) {
      // Nothing past what we have: the part is complete when the size is unknown; the checksum decides.
      res.resume();
      return etag;
    }
    if (status >= 500 && attempt < retries) {
      res.resume();
      continue;
    }
    if (!(status === 200 || status === 206)) {
      res.resume();
      throw statusError(url, status, res.statusMessage, token);
    }
    const header = (name: string) => {
      const v = res.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    etag = (header("x-linked-etag") ?? header("etag"))?.replace(/^W\//, "");
    // 206 continues the part; 200 (the server ignored the Range) starts it again.
    const append = status === 206 && from > 0;
    if (status === 206) {
      const start = Number(/bytes (\d+)-/.exec(header("content-range") ?? "")?.[1] ?? Number.NaN);
      if (start !== from) {
        res.resume();
        throw new PullError(`${url}: the server resumed at byte ${start}, not ${from}`);
      }
    }
    let bytes = append ? from : 0;
    onBytes(bytes);
    // Each chunk is written as it arrives, so whatever came before a drop is on disk to resume from.
    const fd = openSync(part, append ? "a" : "w");
    const dropped = await new Promise<Error | undefined>((resolve) => {
      res.on("data", (chunk: Buffer) => {
        writeSync(fd, chunk);
        bytes += chunk.length;
        onBytes(bytes);
      });
      res.once("end", () => resolve(undefined));
      res.once("aborted", () => resolve(new Error("connection closed mid-body")));
      res.once("error", (e) => resolve(e));
      res.once("close", () => resolve(res.complete ? undefined : new Error("connection closed mid-body")));
    });
    closeSync(fd);
    if (dropped) {
      if (attempt < retries) continue;
      throw new PullError(
        `${url}: the connection dropped at byte ${bytes} (${dropped.message}); run again to resume`,
      );
    }
    const length = Number(header("content-length") ?? Number.NaN);
    if (Number.isFinite(length) && bytes - (append ? from : 0) < length) {
      if (attempt < retries) continue;
      throw new PullError(`${url}: the connection dropped at byte ${bytes}; run again to resume`);
    }
    return etag;
  }
}

/** Checks the finished part against what the hub reported; a mismatch removes it (it cannot be resumed). */
async function verify(part: string, f: HubFile, url: string): Promise<Omit<ManifestEntry, "downloadedAt">> {
  const size = (await sizeOf(part)) ?? 0;
  const fail = async (what: string) => {
    await rm(part, { force: true });
    throw new PullError(`${url}: ${what}; the download was removed, run again to fetch it anew`);
  };
  if (f.size !== undefined && size !== f.size)
    await fail(`size mismatch: expected ${f.size} bytes, got ${size}`);
  const d = await digests(part, size);
  let verified: ManifestEntry["verified"] = f.size !== undefined ? "size" : "none";
  if (f.sha256) {
    if (d.sha256 !== f.sha256) await fail(`checksum mismatch: expected sha256 ${f.sha256}, got ${d.sha256}`);
    verified = "sha256";
  } else if (f.gitOid) {
    if (d.gitOid !== f.gitOid)
      await fail(`checksum mismatch: expected git blob ${f.gitOid}, got ${d.gitOid}`);
    verified = "git-oid";
  }
  return { repo: f.repo, path: f.path, url, size, sha256: d.sha256, verified };
}

export async function readPullManifest(path: string): Promise<PullManifest | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as PullManifest;
  } catch {
    return undefined;
  }
}

/** Is the file already here, whole, as the manifest recorded it and the hub still reports it? */
async function isPresent(dir: string, f: HubFile, m: ManifestEntry | undefined): Promise<boolean> {
  if (!m) return false;
  if ((await sizeOf(join(dir, f.local))) !== m.size) return false;
  if (f.size !== undefined && f.size !== m.size) return false;
  return f.sha256 === undefined || f.sha256 === m.sha256;
}

export interface FetchOptions {
  /** The pull folder: files go to `dir/local`, the manifest to `dir/manifest.json`. */
  dir: string;
  hub: HubAccess;
  kind: RepoKind;
  /** The revision files are fetched at (in the resolve URL). */
  revision: string;
  /** The manifest to extend (entries of other files are kept); written after every file. */
  manifest: PullManifest;
  /** Retries of one file after a dropped connection or a 5xx answer (each resumes). Default 5. */
  retries?: number;
  onProgress?: (p: PullProgress) => void;
  /** Each file as it is done: downloaded or already present. */
  onFile?: (local: string, status: "downloaded" | "present") => void;
}

/**
 * Fetches each file not already present (resumed, verified, renamed into place, recorded); returns the local paths
 * downloaded and those already present.
 */
export async function fetchHubFiles(
  files: readonly HubFile[],
  o: FetchOptions,
): Promise<{ downloaded: string[]; present: string[] }> {
  const out = { downloaded: [] as string[], present: [] as string[] };
  for (const f of files) {
    const dest = join(o.dir, f.local);
    if (await isPresent(o.dir, f, o.manifest.files[f.local])) {
      out.present.push(f.local);
      o.onFile?.(f.local, "present");
      continue;
    }
    const url = resolveUrl(o.hub.baseUrl, o.kind, f, o.revision);
    const etag = await download(url, dest, f, o.retries ?? 5, o.hub.token, (bytes) =>
      o.onProgress?.({ file: f.local, bytes, size: f.size }),
    );
    const entry = await verify(`${dest}.part`, f, url);
    await rename(`${dest}.part`, dest);
    o.manifest.files[f.local] = { ...entry, etag, downloadedAt: new Date().toISOString() };
    await writeManifest(o.dir, o.manifest);
    out.downloaded.push(f.local);
    o.onFile?.(f.local, "downloaded");
  }
  return out;
}

export async function writeManifest(dir: string, manifest: PullManifest): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}
