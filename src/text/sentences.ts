/**
 * Sentence splitting for abstracts without given boundaries. Rule-based: splits after . ! ? followed by a space
 * and an upper-case letter, digit or quote, but not after common abbreviations, initials or decimal numbers;
 * section headings of structured abstracts (BACKGROUND:, METHODS:, ...) start a new sentence.
 */

const ABBREVIATIONS = new Set(
  "e.g i.e et al etc fig figs eq eqs ca approx vs cf resp no nos vol dr mr mrs ms prof st jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k".split(
    " ",
  ),
);

const HEADING = /\b([A-Z][A-Z /&-]{2,40}):\s+/g;
const LAST_WORD = /([\p{L}.]+)[.!?]["')\]]?$/u;

export function splitSentences(text: string): string[] {
  const clean = text.replace(/\s+/g, " ").trim();
  if (clean === "") return [];
  // Put a break before structured-abstract headings such as "METHODS:".
  const withBreaks = clean.replace(HEADING, (m, _h, offset: number) => (offset === 0 ? m : `\u0000${m}`));
  const out: string[] = [];
  for (const block of withBreaks.split("\u0000")) {
    let start = 0;
    const re = /[.!?]["')\]]?\s+(?=["'([]?[\p{Lu}\p{N}])/gu;
    for (let m = re.exec(block); m !== null; m = re.exec(block)) {
      const end = m.index + m[0].trimEnd().length;
      const candidate = block.slice(start, end);
      // Only the tail can hold the last word: matching the whole candidate was the top cost of ingest. A run of
      // letters cut at 64 characters is still no abbreviation or initial, so the answer is the same.
      const lastWord = LAST_WORD.exec(candidate.slice(-64))?.[1] ?? "";
      if (ABBREVIATIONS.has(lastWord.toLowerCase()) || /^\p{Lu}$/u.test(lastWord)) continue;
      if (candidate.trim()) out.push(candidate.trim());
      start = m.index + m[0].length;
    }
    const rest = block.slice(start).trim();
    if (rest) out.push(rest);
  }
  return out;
}
