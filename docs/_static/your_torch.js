// "Your torch" (docs/your_torch.md): the spec as it stands on one release, and what changed between two, read from
// the site's spec.json in the reader's browser (no server). The two views are plain functions of spec.json, which
// tests/test_your_torch.py runs under Node.js and checks against the same file read in Python.

// On `release`, for one device and mode: every clause that applies there (outcome other than not-applicable), with
// its outcome, in the order of spec.json (page, then number).
const onRelease = (spec, release, device, mode) =>
  spec.clauses
    .map((c) => ({ clause: c, outcome: outcomeOf(c, release, device, mode) }))
    .filter(({ outcome }) => outcome !== "not-applicable");

// Between two releases: every clause whose outcome differs (a clause coming into or going out of range included).
const between = (spec, before, after, device, mode) =>
  spec.clauses
    .map((c) => ({ clause: c, before: outcomeOf(c, before, device, mode), after: outcomeOf(c, after, device, mode) }))
    .filter(({ before, after }) => before !== after);

const outcomeOf = (clause, release, device, mode) => clause.outcomes[release]?.[device]?.[mode] ?? "not-run";

if (typeof module !== "undefined") module.exports = { onRelease, between };

// -- the page --------------------------------------------------------------------------------------------------------

const SYMBOL = { pass: "✓ pass", fail: "✗ fail", "not-run": "· not run", "not-applicable": "– not applicable" };

// A statement's MyST as plain HTML: roles ({clause}`ID`, {torch}`name <target>`) and `code` as code, cut short.
const statementHTML = (myst) => {
  const cut = myst.length > 200 ? `${myst.slice(0, 200)}…` : myst;
  const escaped = cut.replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]);
  return escaped
    .replace(/\{\w+\}`([^`]*?)(?: &lt;[^`]*&gt;)?`/g, "<code>$1</code>")
    .replace(/`([^`]+)`/g, "<code>$1</code>");
};

const rows = (items, columns, root) => {
  const table = document.createElement("table");
  table.className = "your-torch docutils";
  table.innerHTML = `<thead><tr><th>clause</th><th>level</th>${columns.map((c) => `<th>${c}</th>`).join("")}` +
    "<th>statement</th></tr></thead>";
  const body = table.createTBody();
  for (const item of items) {
    const c = item.clause;
    // data-column: the release a cell is of, said before it on a phone, where the header row is hidden (releases.css)
    const cells = columns.map(
      (column) => `<td class="outcome-${item[column]}" data-column="${column}">${SYMBOL[item[column]]}</td>`,
    );
    const row = body.insertRow();
    row.innerHTML = `<td><a href="${root}${c.url}">${c.id}</a></td><td>${c.level}</td>${cells.join("")}` +
      `<td>${statementHTML(c.statement)}</td>`;
  }
  const wrapper = document.createElement("div"); // furo scrolls a wide table sideways inside this, not the page
  wrapper.className = "table-wrapper";
  wrapper.append(table);
  return wrapper;
};

const show = (spec, root) => {
  const [release, other, device, mode] = ["release", "other", "device", "mode"].map(
    (id) => document.getElementById(`your-torch-${id}`).value,
  );
  const out = document.getElementById("your-torch-view");
  const summary = document.createElement("p");
  out.replaceChildren(summary);
  if (other) {
    const changed = between(spec, other, release, device, mode);
    summary.textContent = `${changed.length} clauses have another outcome on torch ${release} than on torch ` +
      `${other} (${device}, ${mode}).`;
    out.append(rows(changed.map((c) => ({ ...c, [other]: c.before, [release]: c.after })), [other, release], root));
  } else {
    const applying = onRelease(spec, release, device, mode);
    const failing = applying.filter((c) => c.outcome === "fail").length;
    summary.textContent = `${applying.length} clauses apply to torch ${release} (${device}, ${mode}); ` +
      `${failing} of them fail there.`;
    out.append(rows(applying.map((c) => ({ ...c, outcome: c.outcome })), ["outcome"], root));
  }
};

const start = async () => {
  const form = document.getElementById("your-torch");
  if (!form) return;
  const root = document.documentElement.dataset.content_root ?? "../";
  const spec = await (await fetch(`${root}spec.json`)).json();
  const choose = (id, values, first) => {
    const select = document.getElementById(`your-torch-${id}`);
    select.replaceChildren(...[...first, ...values].map(([value, label]) => new Option(label, value)));
  };
  const releases = [...spec.torch_versions].reverse().map((v) => [v, `torch ${v}`]);
  choose("release", releases, []);
  choose("other", releases, [["", "(none: the spec on this release)"]]);
  choose("device", spec.devices.run.map((d) => [d, d]), []);
  choose("mode", spec.modes.map((m) => [m, m]), []);
  const wanted = new URLSearchParams(location.search);
  for (const id of ["release", "other", "device", "mode"]) {
    if (wanted.get(id) !== null) document.getElementById(`your-torch-${id}`).value = wanted.get(id);
  }
  form.addEventListener("change", () => show(spec, root));
  show(spec, root);
};

if (typeof document !== "undefined") document.addEventListener("DOMContentLoaded", start);
