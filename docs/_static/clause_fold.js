// A link or a search result that lands inside a folded block (<details>: the clauses about compiled code on a spec
// page, docs/_ext/clauses.py) opens it, in browsers that do not open it on fragment navigation themselves.
function openFoldsAroundTarget() {
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!target) return;
  let opened = false;
  for (let node = target.parentElement; node; node = node.parentElement) {
    if (node.tagName === "DETAILS" && !node.open) {
      node.open = true;
      opened = true;
    }
  }
  if (opened) target.scrollIntoView();
}
addEventListener("DOMContentLoaded", openFoldsAroundTarget);
addEventListener("hashchange", openFoldsAroundTarget);
