// The ClimateCheck page: posts the claim to /v1/check and renders the CheckResult. Every text that comes from a
// claim or an abstract goes into the page through textContent (el() below), never as markup.

const $ = (id) => document.getElementById(id);
const form = $("check-form");
const claimBox = $("claim");
const kBox = $("k");
const submit = $("submit");
const status = $("status");
const permalink = $("permalink");

const LABEL_CLASS = { Supports: "supports", Refutes: "refutes", "Not Enough Information": "nei" };
const pct = (x) => `${Math.round(x * 100)}%`;

/** An element with a class and text (as text, never parsed as HTML). */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** Only http(s) links from the corpus become hrefs (no javascript: or data: URLs). */
function safeUrl(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}

function renderNarratives(list) {
  const box = $("narratives");
  box.replaceChildren();
  for (const n of list) {
    const chip = el("span", n.code.startsWith("4_") || n.code.startsWith("5_") ? "chip normative" : "chip");
    chip.title = n.description;
    chip.dataset.code = n.code;
    chip.append(el("span", "code", n.code), el("span", "name", n.name), ` (${pct(n.probability)})`);
    chip.append(el("span", "desc", n.description));
    box.append(chip);
  }
}

const LEAN_TEXT = { out_of_scope: "out of scope" };

function renderSummary(summary, caution, scope) {
  const box = $("summary");
  box.replaceChildren(
    el("span", "lean", LEAN_TEXT[summary.lean] ?? summary.lean),
    summary.lean === "out_of_scope" ? " · " : ` (${pct(summary.lean_confidence)}) · `,
    el("span", "summary-text", summary.text),
  );
  const c = $("caution");
  c.className = caution.needs_human_review ? "caution review" : "caution";
  // The reason says why (out of scope, nothing about the claim, thin, disagreement, normative claim). No caution
  // is said only for what it means: in scope, and two or more abstracts about the claim take the same side.
  c.textContent = caution.needs_human_review
    ? `Needs human review: ${caution.reason}`
    : "No caution: the claim is in scope, and two or more abstracts about it take a side and all agree.";
  const s = $("scope");
  s.hidden = scope.in_scope;
  s.textContent = scope.in_scope ? "" : `Out of scope: ${scope.reason}`;
}

function renderCard(e) {
  // Below the relevance gate an abstract is "not about this claim": it takes no side and is not in the summary.
  const kind = e.about_claim ? (LABEL_CLASS[e.label] ?? "nei") : "off";
  const card = el("li", `card ${kind}`);
  card.dataset.abstractId = e.abstract_id;
  const head = el("div", "card-head");
  // The badge's label is the most probable of the three probabilities in the meta line; NEI shows no number.
  const badge =
    kind === "off" ? "Not about this claim" : kind === "nei" ? e.label : `${e.label} ${pct(e.confidence)}`;
  head.append(el("span", "rank", `#${e.rank}`), el("span", `badge ${kind}`, badge));
  const href = e.url ? safeUrl(e.url) : undefined;
  const title = el(href ? "a" : "span", "card-title", e.title ?? "(untitled)");
  if (href) {
    title.href = href;
    title.target = "_blank";
    title.rel = "noopener noreferrer";
  }
  head.append(title);
  const meta = [
    e.year,
    e.doi ? `doi:${e.doi}` : undefined,
    `id ${e.abstract_id}`,
    `S ${pct(e.p_supports)} · R ${pct(e.p_refutes)} · NEI ${pct(e.p_nei)}`,
    e.relevance === null ? undefined : `about the claim ${pct(e.relevance)}`,
    `retrieval ${e.retrieval_score}`,
  ];
  const abstract = el("p", "abstract");
  const rationale = new Set(e.rationale_indices);
  e.sentences.forEach((s, i) => {
    if (i > 0) abstract.append(" ");
    abstract.append(rationale.has(i) ? el("mark", "rationale", s) : el("span", "sentence", s));
  });
  card.append(head, el("div", "meta", meta.filter(Boolean).join(" · ")));
  if (kind === "off")
    card.append(
      el(
        "div",
        "why",
        `Why: the chance that this abstract is about the claim's subject is ${pct(e.relevance)}, below 50%, so it takes no side and is left out of the summary.`,
      ),
    );
  card.append(abstract);
  return card;
}

function render(r) {
  $("claim-echo").textContent = r.claim;
  renderNarratives(r.narratives);
  renderSummary(r.summary, r.caution, r.scope);
  $("evidence").replaceChildren(...r.evidence.map(renderCard));
  const t = r.timings_ms;
  $("timings").textContent =
    `Narratives ${t.narratives} ms · retrieval ${t.retrieval} ms · verification ${t.verification} ms · total ${t.total} ms`;
  $("result").hidden = false;
}

function setPermalink(claim) {
  const url = new URL(window.location.href);
  url.search = "";
  url.searchParams.set("claim", claim);
  permalink.href = url.pathname + url.search;
  permalink.hidden = false;
  window.history.replaceState(null, "", permalink.href);
}

async function check(claim) {
  submit.disabled = true;
  status.className = "";
  status.textContent = "Checking…";
  try {
    const res = await fetch("/v1/check", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ claim, k: Number(kBox.value) }),
    });
    const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
    if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
    render(body);
    setPermalink(claim);
    status.textContent = "";
  } catch (err) {
    status.className = "error";
    status.textContent = `Could not check the claim: ${err.message}`;
  } finally {
    submit.disabled = false;
  }
}

form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const claim = claimBox.value.trim();
  if (claim) check(claim);
});

for (const b of document.querySelectorAll(".example")) {
  b.addEventListener("click", () => {
    claimBox.value = b.textContent;
    check(b.textContent);
  });
}

// A permalink (/?claim=...) fills the box and runs the check.
const initial = new URL(window.location.href).searchParams.get("claim");
if (initial) {
  claimBox.value = initial;
  check(initial);
}
