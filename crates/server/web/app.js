// Precedent's web page. Plain JavaScript over the /v1 API; all text from the server is put
// into the page with textContent (never innerHTML), since clause text is untrusted input.
"use strict";

// The CUAD clause types a search can filter on, named as the server names them (CUAD's own
// names, crates/cuad/src/categories.rs); "Document Name" and "Parties" describe a contract, not
// a clause, so they are filters of their own (document type, party), not clause types.
const CUAD_TYPES = [
  "Affiliate License-Licensee", "Affiliate License-Licensor", "Agreement Date", "Anti-Assignment",
  "Audit Rights", "Cap on Liability", "Change of Control", "Competitive Restriction Exception",
  "Covenant Not to Sue", "Effective Date", "Exclusivity", "Expiration Date",
  "Governing Law", "Insurance", "IP Ownership Assignment", "Irrevocable or Perpetual License",
  "Joint IP Ownership", "License Grant", "Liquidated Damages", "Minimum Commitment",
  "Most Favored Nation", "No-Solicit of Customers", "No-Solicit of Employees", "Non-Compete",
  "Non-Disparagement", "Non-Transferable License", "Notice Period to Terminate Renewal",
  "Post-Termination Services", "Price Restrictions", "Renewal Term", "Revenue/Profit Sharing",
  "Rofr/Rofo/Rofn", "Source Code Escrow", "Termination for Convenience",
  "Third Party Beneficiary", "Uncapped Liability", "Unlimited/All-You-Can-Eat-License",
  "Volume Restriction", "Warranty Duration",
];

const $ = (id) => document.getElementById(id);
const state = {
  key: sessionStorage.getItem("precedent-key") || "",
  library: null,
  role: null,
  compare: { left: null, right: null },
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

async function api(method, path, body, isForm = false) {
  const headers = { Authorization: `Bearer ${state.key}` };
  const init = { method, headers };
  if (body !== undefined) {
    if (isForm) init.body = body;
    else { headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  }
  const response = await fetch(path, init);
  const type = response.headers.get("content-type") || "";
  const payload = type.includes("json") ? await response.json().catch(() => ({})) : await response.text();
  if (!response.ok) {
    const problem = typeof payload === "object" ? payload : { detail: String(payload) };
    if (response.status === 401) askForKey(problem.detail);
    throw new ApiError(response.status, problem);
  }
  return payload;
}

// Offers `blob` as a download named `name` (the checklist, the report, the redline).
function saveBlob(blob, name) {
  const link = el("a", { href: URL.createObjectURL(blob), download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 0);
}

// A file name without its extension and with only safe characters, for download names.
function fileStem(name) {
  return name.replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9._-]/g, "_") || "contract";
}

function setStatus(id, text, isError = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle("error", isError);
}

// ---------- key ----------
function askForKey(message) {
  $("app").hidden = true;
  $("key-panel").hidden = false;
  $("key-error").textContent = message || "";
  $("key-input").value = "";
  $("key-input").focus();
}

async function useKey(key) {
  state.key = key.trim();
  try {
    const libraries = await api("GET", "/v1/libraries");
    const lib = libraries[0];
    state.library = lib.name;
    state.role = lib.role;
    sessionStorage.setItem("precedent-key", state.key);
    $("library-name").textContent = `${lib.name} · ${lib.clauses.toLocaleString()} clauses · ${lib.role}`;
    const pipeline = $("pipeline");
    pipeline.replaceChildren(...lib.pipelines.map((p) =>
      el("option", { value: p, selected: p === lib.default_pipeline, text: p })));
    $("key-panel").hidden = true;
    $("app").hidden = false;
    $("query").focus();
    return true;
  } catch (e) {
    if (e.status !== 401) askForKey(e.message);
    return false;
  }
}

// ---------- tabs ----------
const TABS = ["search", "compare", "market", "review"];
function showTab(name) {
  for (const t of TABS) {
    const tab = $(`tab-${t}`);
    const on = t === name;
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
    $(`panel-${t}`).hidden = !on;
  }
}

// ---------- search ----------
function currentFilters() {
  const f = {
    clause_type: $("f-clause-type").value.trim(),
    party: $("f-party").value.trim(),
    governing_law: $("f-law").value.trim(),
    document_type: $("f-doctype").value.trim(),
    date_from: $("f-from").value,
    date_to: $("f-to").value,
  };
  for (const k of Object.keys(f)) if (!f[k]) delete f[k];
  return f;
}

function highlighted(text, spans, passage = null) {
  // Spans are in Unicode code points; Array.from splits the same way. The passage that answers
  // the query (hit.why.passage) is wrapped in a span of its own, with its query words marked.
  const chars = Array.from(text);
  const out = document.createDocumentFragment();
  const marked = (from, to, into) => {
    let at = from;
    for (const s of spans || []) {
      if (s.start < at || s.end > to) continue;
      into.append(chars.slice(at, s.start).join(""));
      into.append(el("mark", { text: chars.slice(s.start, s.end).join("") }));
      at = s.end;
    }
    into.append(chars.slice(at, to).join(""));
  };
  // A passage that is the whole clause is not shaded: there is nothing to point at.
  if (!passage || passage.start < 0 || passage.end > chars.length || passage.start >= passage.end
      || (passage.start === 0 && passage.end >= chars.length)) {
    marked(0, chars.length, out);
    return out;
  }
  marked(0, passage.start, out);
  const answer = el("span", { class: "passage", title: "The passage that answers your query" });
  marked(passage.start, passage.end, answer);
  out.append(answer);
  marked(passage.end, chars.length, out);
  return out;
}

async function runSearch() {
  const query = $("query").value.trim();
  if (!query) return;
  setStatus("status", "Searching…");
  $("search-button").disabled = true;
  try {
    const body = {
      query,
      k: Number($("k").value),
      pipeline: $("pipeline").value || undefined,
      filters: currentFilters(),
    };
    const result = await api("POST", "/v1/search", body);
    // A misspelt word was corrected, or search syntax read: say what was searched for.
    const searched = result.corrected_query
      ? `“${result.corrected_query}” (${result.corrected_how || "spelling corrected"} from “${query}”)`
      : `“${query}”`;
    renderHits(result, `${result.hits.length} clauses for ${searched} (${result.pipeline}, ${result.took_ms.toFixed(0)} ms)`, result.corrected_query || query);
  } catch (e) {
    setStatus("status", e.message, true);
    offerSuggestions(e);
  } finally {
    $("search-button").disabled = false;
  }
}

// A clause type the server does not know comes back with the CUAD names it is an alias of
// (problem member `suggestions`): one button each puts the name in the filter and searches again.
function offerSuggestions(e) {
  const names = (e.problem && Array.isArray(e.problem.suggestions)) ? e.problem.suggestions : [];
  for (const name of names) {
    const b = el("button", { type: "button", class: "suggestion", text: `Use “${name}”` });
    b.addEventListener("click", () => { $("f-clause-type").value = name; runSearch(); });
    $("status").append(" ", b);
  }
}

// `ratingQuery` is the query whose results these are: stars rate a clause for it, and a list
// without one (clauses similar to another) offers no stars, so that no rating is stored under a
// query that did not produce the list.
function renderHits(result, summary, ratingQuery = null) {
  const filters = currentFilters();
  const filtered = Object.keys(filters).length ? ` · filtered by ${Object.entries(filters).map(([k, v]) => `${k.replace("_", " ")} “${v}”`).join(", ")}` : "";
  setStatus("status", result.hits.length ? summary + filtered : `No clause matches${filtered}.`);
  $("results").replaceChildren(...result.hits.map((hit) => renderHit(hit, ratingQuery)));
  renderFacets(result.facets);
}

function renderHit(hit, ratingQuery) {
  const c = hit.clause;
  const why = hit.why || { passage: null, reasons: [] };
  const text = el("p", { class: "clause-text clamped" }, highlighted(c.text, hit.highlights, why.passage));
  const stages = hit.stages.map((s) => `${s.stage} #${s.rank}`).join(" · ");
  const context = el("div", { class: "context", hidden: true });
  const li = el("li", { class: "hit", "data-id": c.id });
  const contextButton = el("button", { type: "button", class: "context-button", "aria-expanded": "false", text: "Context" });
  contextButton.addEventListener("click", () => toggleContext(c.id, text, context, contextButton));
  const copyButton = el("button", { type: "button", class: "copy-button", text: "Copy" });
  copyButton.addEventListener("click", () => copyClause(c, copyButton));
  const compareButton = el("button", { type: "button", class: "compare-add", text: "Compare" });
  compareButton.addEventListener("click", () => addToCompare(c));
  const similarButton = el("button", { type: "button", class: "similar-button", text: "Similar" });
  similarButton.addEventListener("click", () => findSimilar(c));
  li.append(
    el("div", { class: "hit-head" },
      el("span", { class: "rank", text: `${hit.rank}.` }),
      el("span", { class: "cite", text: c.citation.text }),
      ...c.clause_types.slice(0, 4).map((t) => el("span", { class: "chip", text: t.category })),
      el("span", { class: "score", title: stages, text: `score ${hit.score.toFixed(3)} · ${stages}` })),
    ...(why.reasons.length
      ? [el("p", { class: "why" }, el("strong", { text: "Why: " }), why.reasons.join(" · "))]
      : []),
    text,
    ...(c.references && c.references.length
      ? [el("div", { class: "references" },
          el("p", { class: "references-label", text: "Sections it refers to (context, not copied):" }),
          ...c.references.map((r) => el("p", { class: "reference" },
            el("span", { class: "reference-section", text: `§ ${r.section} ` }),
            document.createTextNode(r.text))))]
      : []),
    ...(hit.copies && hit.copies.length
      ? [el("p", { class: "copies", title: hit.copies.join(", "),
          text: `Same words in ${hit.copies.length} more clause${hit.copies.length > 1 ? "s" : ""}: ${hit.copies.slice(0, 5).join(", ")}${hit.copies.length > 5 ? ", …" : ""}` })]
      : []),
    el("div", { class: "hit-actions" }, contextButton, copyButton, compareButton, similarButton,
      ratingQuery !== null
        ? starWidget(c.id, ratingQuery)
        : el("span", { class: "no-stars", text: "Stars rate a clause for a query: search to rate" })),
    context);
  // Open the clause where it answers: the box scrolls to the passage once it is laid out.
  requestAnimationFrame(() => {
    const answer = text.querySelector(".passage");
    if (answer) text.scrollTop = Math.max(0, answer.offsetTop - 4);
  });
  li.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || event.target.tagName === "TEXTAREA") return;
    if (event.key >= "1" && event.key <= "5") {
      if (ratingQuery !== null) rate(c.id, Number(event.key), li, ratingQuery);
      event.preventDefault();
    }
    else if (event.key === "c") { addToCompare(c); event.preventDefault(); }
    else if (event.key === "x") { contextButton.click(); event.preventDefault(); }
  });
  return li;
}

function starWidget(id, query) {
  const group = el("span", { class: "stars", role: "group", "aria-label": "Rate this clause for your query" });
  for (let n = 1; n <= 5; n++) {
    const b = el("button", { type: "button", "data-stars": n, "aria-label": `${n} star${n > 1 ? "s" : ""}`, "aria-pressed": "false", text: "★" });
    b.addEventListener("click", () => rate(id, n, group.closest(".hit"), query));
    group.append(b);
  }
  group.append(el("span", { class: "rated", "aria-live": "polite" }));
  return group;
}

async function rate(id, stars, li, query) {
  const group = li.querySelector(".stars");
  const note = group.querySelector(".rated");
  try {
    await api("POST", "/v1/ratings", { query, clause_id: id, stars });
    group.querySelectorAll("button").forEach((b) => {
      const on = Number(b.dataset.stars) <= stars;
      b.classList.toggle("on", on);
      b.setAttribute("aria-pressed", Number(b.dataset.stars) === stars ? "true" : "false");
    });
    note.textContent = `rated ${stars}★`;
  } catch (e) {
    note.textContent = e.status === 403 ? "your key cannot rate" : e.message;
  }
}

// Context opens on the clause itself (highlighted), the text before it above, a scroll away.
function scrollToClause(box) {
  const here = box.querySelector(".here");
  if (here) box.scrollTop += here.getBoundingClientRect().top - box.getBoundingClientRect().top - 8;
}

async function toggleContext(id, text, box, button) {
  const open = button.getAttribute("aria-expanded") === "true";
  if (open) {
    box.hidden = true;
    text.classList.add("clamped");
    button.setAttribute("aria-expanded", "false");
    return;
  }
  text.classList.remove("clamped");
  button.setAttribute("aria-expanded", "true");
  box.hidden = false;
  if (box.dataset.loaded) { scrollToClause(box); return; }
  box.textContent = "Loading context…";
  try {
    const r = await api("GET", `/v1/clauses/${encodeURIComponent(id)}`);
    box.dataset.loaded = "1";
    if (r.context) {
      const here = el("span", { class: "here", text: r.context.clause });
      box.replaceChildren(
        el("div", { class: "cite", text: `${r.clause.citation.text} · ${r.context.source}` }),
        "…" + r.context.before,
        here,
        r.context.after + "…");
      scrollToClause(box);
    } else {
      const m = r.clause.citation;
      const facts = [
        m.document_type, m.parties.length ? `Parties: ${m.parties.join("; ")}` : null,
        m.date ? `Dated ${m.date}` : null, m.governing_law ? `Governed by ${m.governing_law}` : null,
      ].filter(Boolean);
      box.replaceChildren(el("p", { text: facts.length ? facts.join(" · ") : "This library does not keep the source contract of this clause (full clause text shown above)." }));
    }
  } catch (e) {
    box.textContent = e.message;
  }
}

async function copyClause(c, button) {
  const text = `${c.text}\n— ${c.citation.text}`;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = el("textarea", { "aria-hidden": "true" });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

async function findSimilar(c) {
  setStatus("status", "Finding similar clauses…");
  try {
    const result = await api("POST", "/v1/similar", { clause_id: c.id, k: Number($("k").value), filters: currentFilters() });
    renderHits(result, `${result.hits.length} clauses similar to ${c.citation.text}`);
    $("results").querySelector("button")?.focus();
  } catch (e) {
    setStatus("status", e.message, true);
  }
}

function renderFacets(facets) {
  const box = $("facets");
  box.replaceChildren();
  const groups = [
    ["clause_type", "Clause type", "f-clause-type"],
    ["governing_law", "Governing law", "f-law"],
    ["document_type", "Document type", "f-doctype"],
    ["party", "Party", "f-party"],
  ];
  for (const [key, title, input] of groups) {
    const values = facets[key] || [];
    if (!values.length) continue;
    const list = el("div", { class: "facet", role: "group", "aria-label": title }, el("h3", { text: title }));
    for (const v of values.slice(0, 8)) {
      const b = el("button", { type: "button", "data-facet": key, "data-value": v.value },
        el("span", { text: v.value }), el("span", { class: "count", text: String(v.count) }));
      b.addEventListener("click", () => { $(input).value = v.value; runSearch(); });
      list.append(b);
    }
    box.append(list);
  }
}

// ---------- compare ----------
function addToCompare(c) {
  const side = !state.compare.left ? "left" : (!state.compare.right ? "right" : "right");
  state.compare[side] = c;
  $(`${side}-text`).value = c.text;
  $(`${side}-label`).textContent = c.citation.text;
  const n = (state.compare.left ? 1 : 0) + (state.compare.right ? 1 : 0);
  const badge = $("compare-count");
  badge.hidden = n === 0;
  badge.textContent = String(n);
  setStatus("status", `${c.citation.text} added to the comparison (${n} of 2).`);
  if (n === 2) { showTab("compare"); runCompare(); }
}

function sideBody(side) {
  const picked = state.compare[side];
  const text = $(`${side}-text`).value;
  if (picked && text === picked.text) return { clause_id: picked.id };
  return { text };
}

async function runCompare() {
  const box = $("compare-result");
  try {
    // The checkbox (on by default) matches words that differ only in capitals or spacing;
    // each side is still shown as written (equal runs carry the right side's own words).
    const loose = $("compare-loose").checked;
    const r = await api("POST", "/v1/compare", {
      left: sideBody("left"), right: sideBody("right"), ignore_case: loose, ignore_whitespace: loose,
    });
    const left = el("div", { "aria-label": "Left, deletions marked" });
    const right = el("div", { "aria-label": "Right, insertions marked" });
    for (const op of r.ops) {
      if (op.op === "equal") { left.append(op.text); right.append(op.right_text ?? op.text); }
      else if (op.op === "delete") left.append(el("del", { text: op.text }));
      else right.append(el("ins", { text: op.text }));
    }
    box.replaceChildren(left, right);
    setStatus("compare-similarity", `${Math.round(r.similarity * 100)}% of words in common`);
  } catch (e) {
    box.replaceChildren();
    setStatus("compare-similarity", e.message, true);
  }
}

// The comparison as a Word redline (`POST /v1/compare?format=docx`): the left side is the
// original, the right side the revision, and each difference a tracked change the lawyer
// accepts or rejects in Word or LibreOffice.
async function downloadRedline() {
  const loose = $("compare-loose").checked;
  try {
    const response = await fetch("/v1/compare?format=docx", {
      method: "POST",
      headers: { Authorization: `Bearer ${state.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        left: sideBody("left"), right: sideBody("right"), ignore_case: loose, ignore_whitespace: loose,
      }),
    });
    if (!response.ok) {
      const problem = await response.json().catch(() => ({ detail: `HTTP ${response.status}` }));
      if (response.status === 401) askForKey(problem.detail);
      throw new ApiError(response.status, problem);
    }
    saveBlob(await response.blob(), "redline.docx");
    setStatus("compare-similarity", "Redline downloaded: open it in Word or LibreOffice to review the changes.");
  } catch (e) {
    setStatus("compare-similarity", e.message, true);
  }
}

// "Find precedents like my draft": the right side (the lawyer's draft) becomes the query.
function findLikeDraft() {
  const draft = $("right-text").value.trim() || $("left-text").value.trim();
  if (!draft) { setStatus("compare-similarity", "Paste your draft on the right first.", true); return; }
  $("query").value = draft;
  showTab("search");
  runSearch();
}

function clearCompare() {
  state.compare = { left: null, right: null };
  for (const s of ["left", "right"]) { $(`${s}-text`).value = ""; $(`${s}-label`).textContent = ""; }
  $("compare-result").replaceChildren();
  $("compare-count").hidden = true;
  setStatus("compare-similarity", "");
}

// ---------- market ----------
// What the market says about a clause type (`POST /v1/market`): its common formulations, most
// common first, and where the lawyer's draft stands among them.
async function runMarket() {
  const clauseType = $("market-type").value.trim();
  if (!clauseType) return;
  const draft = $("market-draft").value.trim();
  setStatus("market-status", `Reading the library's ${clauseType} clauses…`);
  $("market-draft-standing").hidden = true;
  try {
    const r = await api("POST", "/v1/market", draft ? { clause_type: clauseType, draft } : { clause_type: clauseType });
    setStatus("market-status", r.clauses
      ? `${r.clause_type}: ${r.clauses} clauses in ${r.contracts} contracts, ${r.formulations.length} formulations`
      : `No clause of this library is typed ${r.clause_type}.`);
    const pct = (x) => `${Math.round(x * 100)}%`;
    $("market-formulations").replaceChildren(...r.formulations.map((f, i) => {
      const li = el("li", { class: "formulation", "data-index": String(i) },
        el("p", { class: "formulation-head" },
          el("strong", { text: `${pct(f.share)} of the clauses` }),
          ` · ${f.clauses} clauses in ${f.contracts} contracts · ${f.forms.map((s) => `${s.form} ${pct(s.share)}`).join(" · ")}`),
        el("p", { class: "formulation-words", text: `Typical words: ${f.distinctive_words.join(", ")}` }),
        el("p", { class: "cite", text: f.representative_citation || f.representative_id }),
        el("p", { class: "clause-text clamped", text: f.representative_text }));
      const compare = el("button", { type: "button", class: "secondary", text: "Compare with my draft" });
      compare.addEventListener("click", () => {
        state.compare = { left: null, right: null };
        $("left-text").value = f.representative_text;
        $("left-label").textContent = f.representative_citation || f.representative_id;
        $("right-text").value = $("market-draft").value;
        $("right-label").textContent = "your draft";
        showTab("compare");
        runCompare();
      });
      li.append(compare);
      return li;
    }));
    const d = r.draft;
    if (d) {
      const forms = d.forms.length ? d.forms.join(" and ") : "neither mutual nor with a carve-out";
      $("market-draft-standing").textContent =
        `Your draft is closest to formulation ${d.closest + 1} (${pct(d.share)} of the market, similarity ${d.similarity.toFixed(2)}); ` +
        (d.lacks.length ? `most clauses of it say what yours does not: ${d.lacks.join(", ")}; ` : "") +
        `yours is ${forms}.`;
      $("market-draft-standing").hidden = false;
      $("market-formulations").children[d.closest]?.classList.add("closest");
    }
  } catch (e) {
    setStatus("market-status", e.message, true);
    $("market-formulations").replaceChildren();
  }
}

// ---------- review ----------
async function runReview() {
  const file = $("review-file").files[0];
  if (!file) return;
  setStatus("review-status", `Reviewing ${file.name}…`);
  $("review-csv").hidden = true;
  $("review-docx").hidden = true;
  const form = new FormData();
  form.append("file", file, file.name);
  try {
    const r = await api("POST", "/v1/review", form, true);
    renderReview(r);
    offerReportDocx(r, file);
    const ocr = r.ocr ? " (text recognised by OCR from the scanned pages: check wording against the scan)" : "";
    const found = r.kind === "tos"
      ? `Terms of service: ${r.unfair_terms.flagged.length} of ${r.unfair_terms.sentences} sentences flagged as potentially unfair in ${file.name}`
      : `${r.findings.length} clauses found in ${file.name}`;
    setStatus("review-status", `${found}${ocr}`);
  } catch (e) {
    setStatus("review-status", e.message, true);
  }
}

// One line about the contract: "DISTRIBUTION AGREEMENT · parties: Acme Corp.; Beta LLC · dated
// 2019-06-01 · governing law: New York" (what the reader found).
function describeContract(m) {
  if (!m) return "";
  const parts = [];
  if (m.title || m.document_type) parts.push(m.title || m.document_type);
  if (m.parties && m.parties.length) parts.push(`parties: ${m.parties.slice(0, 3).join("; ")}`);
  if (m.date) parts.push(`dated ${m.date}`);
  if (m.governing_law) parts.push(`governing law: ${m.governing_law}`);
  return parts.join(" · ");
}

// Terms of service: the eight UNFAIR-ToS types as a checklist, each present (with its number of
// flagged sentences and best confidence) or absent, so a reviewer sees at a glance what to read.
// A contract's checklist: the 41 CUAD clause types, those found first (band and best
// confidence; a click scrolls to the first of its clauses in the text), then those not found,
// said in words, since what a contract lacks is often what a lawyer must raise.
function renderContractChecklist(r, groupAt) {
  const list = $("review-checklist");
  const rows = r.checklist || [];
  list.hidden = rows.length === 0;
  const found = rows.filter((row) => row.present);
  const absent = rows.filter((row) => !row.present);
  const pct = (x) => `${Math.round(x * 100)}%`;
  list.replaceChildren(
    el("li", { class: "check-group", text: `Found (${found.length})` }),
    ...found.map((row) => {
      const sections = [...new Set(row.spans.map((s) => s.section).filter(Boolean))].map((x) => `§ ${x}`);
      const b = el("button", { type: "button", class: "check-link" },
        el("span", { class: "box", text: "\u2611" }),
        el("strong", { text: ` ${row.category}` }),
        el("span", { class: `band ${row.band}`, text: ` ${row.band} ${pct(row.best_confidence || 0)}` }),
        el("span", { class: "count", text: sections.length ? ` ${sections.join(", ")}` : "" }));
      b.addEventListener("click", () => {
        const target = row.spans.length ? $(`finding-${groupAt(row.spans[0].start)}`) : null;
        if (target) { target.scrollIntoView({ block: "center" }); target.setAttribute("tabindex", "-1"); target.focus(); }
      });
      return el("li", { class: "check present", "data-type": row.category }, b);
    }),
    el("li", { class: "check-group", text: `Not found (${absent.length})` }),
    ...absent.map((row) => el("li", { class: "check absent", "data-type": row.category },
      el("span", { class: "box", text: "\u2610" }),
      el("span", { text: ` No ${row.category} clause found` }))));
}

function renderChecklist(r, groupAt) {
  const list = $("review-checklist");
  if (r.kind !== "tos" || !r.unfair_terms) {
    if (r.kind === "contract") { renderContractChecklist(r, groupAt); return; }
    list.hidden = true;
    list.replaceChildren();
    return;
  }
  list.hidden = false;
  list.replaceChildren(...r.unfair_terms.checklist.map((item) => el("li",
    { class: item.present ? "check present" : "check absent", "data-type": item.name },
    el("span", { class: "box", text: item.present ? "\u2611" : "\u2610" }),
    el("strong", { text: ` ${item.name}` }),
    el("span", { class: "count", text: item.present
      ? ` ${item.sentences} sentence${item.sentences === 1 ? "" : "s"}, best ${(item.best_confidence * 100).toFixed(0)}%`
      : " absent" }))));
}

// The contract's checklist (all 41 CUAD types, present or absent) as the CSV file that
// `precedent review --checklist-csv` and `POST /v1/review?format=csv` write
// (precedent_engine::review::to_csv: same columns, same cells), built from the review's
// `checklist` so the download needs no second upload.
function checklistCsv(rows) {
  const cell = (v) => /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  const lines = [["category", "status", "band", "best_confidence", "sections", "offsets", "confidences", "text"]];
  for (const row of rows) {
    const spans = row.spans || [];
    lines.push([
      row.category,
      row.present ? "present" : "absent",
      row.band,
      row.best_confidence === null || row.best_confidence === undefined ? "" : row.best_confidence.toFixed(3),
      spans.map((s) => s.section || "-").join("; "),
      spans.map((s) => `${s.start}-${s.end}`).join("; "),
      spans.map((s) => s.confidence.toFixed(3)).join("; "),
      spans.map((s) => s.text.split(/\s+/).filter(Boolean).join(" ")).join("\n"),
    ]);
  }
  return lines.map((l) => l.map(cell).join(",")).join("\n") + "\n";
}

// The review as a Word report (`POST /v1/review?format=docx`): the file is uploaded again, so
// the report is the server's own (`precedent review --report-docx` writes the same).
function offerReportDocx(r, file) {
  const button = $("review-docx");
  button.hidden = r.kind !== "contract";
  button.onclick = r.kind !== "contract" ? null : async () => {
    const form = new FormData();
    form.append("file", file, file.name);
    try {
      const response = await fetch("/v1/review?format=docx&kind=contract", {
        method: "POST", headers: { Authorization: `Bearer ${state.key}` }, body: form,
      });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({ detail: `HTTP ${response.status}` }));
        throw new ApiError(response.status, problem);
      }
      saveBlob(await response.blob(), `${fileStem(file.name)}-review.docx`);
    } catch (e) {
      setStatus("review-status", e.message, true);
    }
  };
}

function offerChecklistCsv(r) {
  const button = $("review-csv");
  const rows = r.kind === "contract" ? (r.checklist || []) : [];
  button.hidden = rows.length === 0;
  button.onclick = rows.length === 0 ? null : () => {
    const blob = new Blob([checklistCsv(rows)], { type: "text/csv;charset=utf-8" });
    saveBlob(blob, `${fileStem(r.contract)}-checklist.csv`);
  };
}

// A terms-of-service finding's evidence as the CLI prints it: "by binding", "arbitration".
function quoted(phrases) {
  return phrases.map((p) => `"${p}"`).join(", ");
}

function renderReview(r) {
  offerChecklistCsv(r);
  $("review-about").textContent = r.kind === "tos" ? "Terms of service: potentially unfair terms (UNFAIR-ToS types)" : describeContract(r.metadata);
  const chars = Array.from(r.text);
  const findings = r.findings.filter((f) => f.start !== null && f.end !== null && f.start < f.end)
    .sort((a, b) => a.start - b.start || b.end - a.end);
  // Findings that overlap (one sentence can be a renewal term and a notice period) share one
  // highlight tagged with each of their categories, so every finding has a place to jump to.
  const groups = [];
  for (const f of findings) {
    const last = groups[groups.length - 1];
    if (last && f.start < last.end) {
      last.end = Math.max(last.end, f.end);
      last.findings.push(f);
    } else {
      groups.push({ start: f.start, end: f.end, findings: [f] });
    }
  }
  const text = document.createDocumentFragment();
  const groupOf = new Map();
  let at = 0;
  groups.forEach((g, i) => {
    text.append(chars.slice(at, g.start).join(""));
    const categories = [...new Set(g.findings.map((f) => f.category))];
    // Terms of service: each type's evidence (the words that weigh most for it) in the tooltip.
    const titles = [...new Set(g.findings.map((f) => f.evidence && f.evidence.length
      ? `${f.category}: ${quoted(f.evidence)}` : f.category))];
    text.append(el("mark", { id: `finding-${i}`, class: "finding", title: titles.join("; ") },
      ...categories.map((c) => el("span", { class: "tag", text: c })),
      chars.slice(g.start, g.end).join("")));
    for (const f of g.findings) groupOf.set(f, i);
    at = g.end;
  });
  text.append(chars.slice(at).join(""));
  $("review-text").replaceChildren(text);
  // The highlight holding a character offset, for the checklist's links.
  const groupAt = (offset) => groups.findIndex((g) => g.start <= offset && offset < g.end);
  renderChecklist(r, groupAt);
  $("review-findings").replaceChildren(...findings.map((f) => {
    const section = f.section ? ` § ${f.section}` : "";
    const b = el("button", { type: "button", class: "finding-link" },
      el("strong", { text: f.category }),
      el("span", { class: "count", text: ` ${(f.confidence * 100).toFixed(0)}%${section}` }),
      ...(f.evidence && f.evidence.length
        ? [el("span", { class: "evidence", text: ` why: ${quoted(f.evidence)}` })]
        : []));
    b.addEventListener("click", () => {
      const target = $(`finding-${groupOf.get(f)}`);
      if (target) { target.scrollIntoView({ block: "center" }); target.setAttribute("tabindex", "-1"); target.focus(); }
    });
    return el("li", {}, b);
  }));
}

// ---------- classify one clause ----------
// The clause's CUAD types at each category's own threshold (tuned for balanced accuracy, so
// related types are listed too); a type searches for precedents like the clause, of that type.
async function runClassify() {
  const text = $("classify-text").value;
  if (!text.trim()) return;
  setStatus("classify-status", "Classifying…");
  $("classify-types").replaceChildren();
  try {
    const r = await api("POST", "/v1/classify", { texts: [text] });
    const types = r.clauses[0].types;
    // Each category's threshold is tuned for balanced accuracy and errs towards listing, so
    // the server marks which types are likely (an even chance or more, and a second model
    // that has seen clauses of no type agreeing); the rest are shown apart, as possible.
    const likely = types.filter((t) => t.likely);
    const possible = types.filter((t) => !t.likely);
    setStatus("classify-status", types.length
      ? `${likely.length} likely, ${possible.length} possible clause type${possible.length === 1 ? "" : "s"}`
      : "No CUAD clause type reaches its threshold");
    const typeButton = (t) => el("li", {},
      el("button", {
        type: "button", class: t.likely ? "type-link likely" : "type-link",
        title: `Find precedents like this clause, of type ${t.category}`,
        onclick: () => {
          $("query").value = text.trim();
          $("f-clause-type").value = t.category;
          showTab("search");
          runSearch();
        },
      }, el("strong", { text: t.category }),
      el("span", { class: "count", text: ` ${(t.confidence * 100).toFixed(0)}%` })));
    const group = (label, list) => list.length
      ? [el("li", { class: "types-label", text: label }), ...list.map(typeButton)] : [];
    $("classify-types").replaceChildren(...group("Likely", likely), ...group("Possible", possible));
  } catch (e) {
    setStatus("classify-status", e.message, true);
  }
}

// ---------- wiring ----------
document.addEventListener("DOMContentLoaded", () => {
  $("clause-types").replaceChildren(...CUAD_TYPES.map((t) => el("option", { value: t })));
  $("key-form").addEventListener("submit", (e) => { e.preventDefault(); useKey($("key-input").value); });
  $("change-key").addEventListener("click", () => askForKey(""));
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
  $("filters").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
  $("clear-filters").addEventListener("click", () => { $("filters").reset(); runSearch(); });
  $("compare-button").addEventListener("click", runCompare);
  $("compare-loose").addEventListener("change", () => { if ($("compare-result").childElementCount) runCompare(); });
  $("compare-clear").addEventListener("click", clearCompare);
  $("compare-docx").addEventListener("click", downloadRedline);
  $("compare-find").addEventListener("click", findLikeDraft);
  $("market-form").addEventListener("submit", (e) => { e.preventDefault(); runMarket(); });
  $("review-form").addEventListener("submit", (e) => { e.preventDefault(); runReview(); });
  $("classify-form").addEventListener("submit", (e) => { e.preventDefault(); runClassify(); });
  for (const t of TABS) $(`tab-${t}`).addEventListener("click", () => showTab(t));
  $("tab-search").parentElement.addEventListener("keydown", (e) => {
    const i = TABS.findIndex((t) => $(`tab-${t}`).getAttribute("aria-selected") === "true");
    const next = e.key === "ArrowRight" ? (i + 1) % TABS.length : e.key === "ArrowLeft" ? (i + TABS.length - 1) % TABS.length : -1;
    if (next >= 0) { showTab(TABS[next]); $(`tab-${TABS[next]}`).focus(); e.preventDefault(); }
  });
  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement?.tagName);
    if (e.key === "/" && !typing && !$("app").hidden) { showTab("search"); $("query").focus(); e.preventDefault(); }
  });
  if (state.key) useKey(state.key); else askForKey("");
});
