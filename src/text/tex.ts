/**
 * TeX-like markup in arXiv titles ($CO_2$, 2{\deg}C, M\'artir) made readable. One implementation for the API and the
 * page: the page loads web/tex.js as is, and this re-exports it (src/text and dist/text are both two folders below
 * the package root, so the relative path holds for the sources and the build).
 */
import { readableTex } from "../../web/tex.js";

export { readableTex };

/** A title as the API returns it: readable, `null` kept (the raw one goes in `title_raw`). */
export const readableTitle = (title: string | null | undefined): string | null =>
  title == null ? null : readableTex(title);
