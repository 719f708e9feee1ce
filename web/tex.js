// LaTeX-like markup in arXiv titles and abstracts ($CO_2$, $\sim$, \textit{...}, {\it ...}) shown readably as
// plain text: the page has no math renderer, and raw dollars and backslashes read as noise.

const SYMBOLS = {
  sim: "~",
  approx: "≈",
  simeq: "≃",
  le: "≤",
  leq: "≤",
  ge: "≥",
  geq: "≥",
  lesssim: "≲",
  gtrsim: "≳",
  pm: "±",
  mp: "∓",
  times: "×",
  cdot: "·",
  circ: "°",
  degree: "°",
  deg: "°",
  infty: "∞",
  to: "→",
  rightarrow: "→",
  leftarrow: "←",
  propto: "∝",
  neq: "≠",
  ne: "≠",
  partial: "∂",
  nabla: "∇",
  sum: "∑",
  alpha: "α",
  beta: "β",
  gamma: "γ",
  delta: "δ",
  epsilon: "ε",
  varepsilon: "ε",
  zeta: "ζ",
  eta: "η",
  theta: "θ",
  kappa: "κ",
  lambda: "λ",
  mu: "μ",
  nu: "ν",
  xi: "ξ",
  pi: "π",
  rho: "ρ",
  sigma: "σ",
  tau: "τ",
  phi: "φ",
  varphi: "φ",
  chi: "χ",
  psi: "ψ",
  omega: "ω",
  Gamma: "Γ",
  Delta: "Δ",
  Theta: "Θ",
  Lambda: "Λ",
  Sigma: "Σ",
  Phi: "Φ",
  Psi: "Ψ",
  Omega: "Ω",
};
// Accents \'e \"o \`a \~n \^o (also \'{e}, \'\i) become combining marks, composed at the end (é ö à ñ ô).
const ACCENTS = {
  "'": "\u0301",
  "`": "\u0300",
  '"': "\u0308",
  "~": "\u0303",
  "^": "\u0302",
  "=": "\u0304",
  ".": "\u0307",
};
// Escaped characters are held as private-use characters while markup is stripped, then put back.
const HELD = { _: "\uE000", $: "\uE001", "{": "\uE002", "}": "\uE003" };
const SUB = {
  0: "₀",
  1: "₁",
  2: "₂",
  3: "₃",
  4: "₄",
  5: "₅",
  6: "₆",
  7: "₇",
  8: "₈",
  9: "₉",
  "+": "₊",
  "-": "₋",
  x: "ₓ",
};
const SUP = {
  0: "⁰",
  1: "¹",
  2: "²",
  3: "³",
  4: "⁴",
  5: "⁵",
  6: "⁶",
  7: "⁷",
  8: "⁸",
  9: "⁹",
  "+": "⁺",
  "-": "⁻",
  n: "ⁿ",
};

/** Sub- or superscript characters when every character has one (CO₂, m⁻²), else the text after _ or ^. */
function script(text, table, mark) {
  const chars = [...text];
  return chars.every((c) => c in table) ? chars.map((c) => table[c]).join("") : `${mark}${text}`;
}

/** The text with TeX commands, braces and math dollars turned into readable characters. */
export function readableTex(text) {
  if (!/[$\\{}^_]/.test(text)) return text;
  let s = text
    // "Earth\'s" is an escaped apostrophe, not an accented s.
    .replace(/(\w)\\'s\b/g, "$1's")
    .replace(/\\(['`"~^=.])\s*\{?\\?([A-Za-z])\}?/g, (_, a, c) => `${c === "i" ? "i" : c}${ACCENTS[a]}`)
    .replace(/\\([%&#])/g, "$1")
    .replace(/\\([_${}])/g, (_, c) => HELD[c])
    .replace(/\\([A-Za-z]+)\s?/g, (m, name) => SYMBOLS[name] ?? m)
    // Font and text commands keep their argument: \textit{x}, \mathrm{x}, {\it x}, {\bf x}.
    .replace(/\\(?:text\w*|math\w*|emph|mbox|rm|it|bf|sf|tt|cal|bm|boldsymbol|operatorname)\s*/g, "");
  // Sub- and superscripts: _2, _{2}, ^{-2}; ^\circ is already °.
  s = s
    .replace(/_\{([^{}]*)\}|_([A-Za-z0-9+-])/g, (_, a, b) => script(a ?? b, SUB, "_"))
    .replace(/\^\{([^{}]*)\}|\^([A-Za-z0-9+-])/g, (_, a, b) => script(a ?? b, SUP, "^"))
    .replace(/\^°/g, "°")
    // Math dollars and grouping braces go.
    .replace(/[${}]/g, "");
  for (const [c, held] of Object.entries(HELD)) s = s.replaceAll(held, c);
  return s
    .replace(/\s{2,}/g, " ")
    .trim()
    .normalize("NFC");
}
