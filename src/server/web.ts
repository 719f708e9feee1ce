/** The web page's files, read from web/ on each request (a few small files; no build step, no CDN). */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../data/paths.ts";

export const WEB_DIR = join(PACKAGE_ROOT, "web");

/** URL path -> file and content type; nothing outside this list is served. */
const FILES: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/tex.js": { file: "tex.js", type: "text/javascript; charset=utf-8" },
  "/style.css": { file: "style.css", type: "text/css; charset=utf-8" },
  "/favicon.svg": { file: "favicon.svg", type: "image/svg+xml" },
};

/** The page's paths (other methods on them get 405). */
export const WEB_PATHS = Object.keys(FILES);

/**
 * The page only loads its own script and style and only calls its own API; even if some text slipped into the
 * DOM as markup, inline handlers such as onerror would not run.
 */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export async function webFile(
  path: string,
  dir = WEB_DIR,
): Promise<{ body: string; type: string } | undefined> {
  const entry = FILES[path];
  if (!entry) return undefined;
  return { body: await readFile(join(dir, entry.file), "utf8"), type: entry.type };
}
