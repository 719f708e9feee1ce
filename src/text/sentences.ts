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

/**
 * The last 16 characters (never starting inside a surrogate pair): matching LAST_WORD against the whole candidate
 * was the top cost of ingest. A word cut by the window still has 14 or more characters, so it is neither an
 * abbreviation nor an initial, and the decision is the same.
 */
function tail(s: string): string {
  let from = Math.max(0, s.length - 16);
  const c = s.charCodeAt(from);
  if (from > 0 && c >= 0xdc00 && c <= 0xdfff) from--;
  return s.slice(from);
}

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
      const lastWord = LAST_WORD.exec(tail(candidate))?.[1] ?? "";
      if (ABBREVIATIONS.has(lastWord.toLowerCase()) || /^\p{Lu}$/u.test(lastWord)) continue;
      if (candidate.trim()) out.push(candidate.trim());
      start = m.index + m[0].length;
    }
    const rest = block.slice(start).trim();
    if (rest) out.push(rest);
  }
  return out;
}
