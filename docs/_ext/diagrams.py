"""Sphinx extension: the ``diagram`` directive, pictures drawn with matplotlib at build time (no binaries in git).

Each diagram is a function below that draws what clauses state (the caption names them); the release timeline is
drawn from the clause ranges themselves. The SVG goes to docs/_generated/ (git-ignored), where Sphinx finds it.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from conformance.harness import registry as reg

OUT = Path(__file__).resolve().parents[1] / "_generated"
INK, MUTED, SHARED, OWN, ACCENT = "#1f2937", "#6b7280", "#dbeafe", "#fef3c7", "#2563eb"


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.use("Agg")  # no display: the docs build runs headless
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "torch-update-spec", "font.size": 10})
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_axis_off()
    return fig, ax


def _box(ax, x, y, w, h, text, face, edge=INK, size=10, weight="normal"):
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=face, ec=edge, lw=1))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, color=INK, weight=weight, wrap=True)


def storage_sharing(ax) -> None:
    """x, its detach(), a view, its .data and its clone: which storage and which version counter each uses."""
    tensors = ["x", "x.detach()", "x[1:]", "x.data", "x.clone()"]
    autograd = [
        "leaf, requires grad",
        "leaf, no grad",
        "view, grad_fn",
        "leaf, no grad",
        "grad_fn CloneBackward0",
    ]
    for i, (name, what) in enumerate(zip(tensors, autograd, strict=True)):
        _box(ax, i * 2.2, 3.0, 1.9, 0.8, name, "white", weight="bold", size=11)
        ax.text(i * 2.2 + 0.95, 2.75, what, ha="center", va="top", fontsize=8.5, color=MUTED)
    ax.text(-0.2, 1.85, "storage", ha="right", va="center", color=MUTED)
    _box(ax, 0, 1.5, 2.2 * 3 + 1.9, 0.7, "one storage: a write through any of these is seen by all", SHARED)
    _box(ax, 4 * 2.2, 1.5, 1.9, 0.7, "its own", OWN)
    ax.text(-0.2, 0.45, "version\ncounter", ha="right", va="center", color=MUTED)
    _box(ax, 0, 0.1, 2.2 * 2 + 1.9, 0.7, "one counter: any in-place write bumps it", SHARED)
    _box(ax, 3 * 2.2, 0.1, 1.9, 0.7, "its own: writes\nunseen by x", OWN)
    _box(ax, 4 * 2.2, 0.1, 1.9, 0.7, "its own", OWN)
    ax.set_xlim(-1.2, 11)
    ax.set_ylim(-0.1, 4.0)


def view_rebase(ax) -> None:
    """A view of a non-leaf before and after an in-place update through the view (VIEW-8)."""
    arrow = {"arrowstyle": "->", "color": MUTED}
    for col, (title, values, base_fn, view_fn, version) in enumerate(
        [
            ("y = x * 2;  v = y[1:]", "2 | 4 | 6", "grad_fn MulBackward0", "grad_fn SliceBackward0", 0),
            ("after v.mul_(2)", "2 | 8 | 12", "grad_fn CopySlices", "a new grad_fn", 1),
        ]
    ):
        left = col * 5.4
        ax.text(left + 2.2, 4.2, title, ha="center", fontsize=11, weight="bold", color=INK)
        _box(ax, left, 2.5, 4.4, 1.2, f"y:  storage  {values}\n{base_fn}, _version {version}", SHARED)
        view_values = values.split(" | ", 1)[1]
        _box(ax, left + 1.3, 0.2, 3.1, 1.2, f"v:  {view_values}\n{view_fn}, _version {version}", SHARED)
        ax.annotate("", xy=(left + 2.85, 2.5), xytext=(left + 2.85, 1.4), arrowprops=arrow)
        ax.text(left + 1.2, 1.95, "v._base is y", ha="right", va="center", fontsize=8.5, color=MUTED)
    ax.annotate("", xy=(5.3, 3.1), xytext=(4.5, 3.1), arrowprops={"arrowstyle": "->", "color": ACCENT, "lw": 2})
    ax.set_xlim(-0.2, 10.0)
    ax.set_ylim(0.0, 4.5)


def release_timeline(ax) -> None:
    """Per spec page, the torch releases where one of its clauses starts or stops holding (the clause ranges)."""
    clauses = [c for c in reg.default().clauses.values() if c.ranged]
    bounds = {c.id: {b for r in c.ranges for b in r if b} for c in clauses}
    boundaries = sorted(set().union(*bounds.values()), key=lambda v: v.release)
    pages = sorted({c.page for c in clauses})
    minors = [f"2.{n}" for n in range(0, max(b.release[1] for b in boundaries) + 1)]
    for row, page in enumerate(reversed(pages)):
        ax.plot([0, len(minors) - 1], [row, row], color="#e5e7eb", lw=1, zorder=0)
        ax.text(-0.4, row, page, ha="right", va="center", fontsize=9, color=INK)
        for b in boundaries:
            n = sum(1 for c in clauses if c.page == page and b in bounds[c.id])
            if n:
                x = minors.index(str(b))
                ax.scatter([x], [row], s=40 + 30 * n, color=ACCENT, zorder=2)
                ax.text(x, row, str(n), ha="center", va="center", fontsize=7, color="white", zorder=3)
    ax.set_axis_on()
    ax.set_yticks([])
    ax.set_xticks(range(len(minors)), minors, fontsize=9)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlim(-0.5, len(minors) - 0.5)
    ax.set_ylim(-0.8, len(pages) - 0.2)
    ax.set_xlabel("torch release (a dot: clauses of that page start or stop holding there; the number: how many)")


DIAGRAMS = {
    "storage-sharing": (storage_sharing, (9.0, 3.6)),
    "view-rebase": (view_rebase, (9.0, 3.8)),
    "release-timeline": (release_timeline, (9.0, 5.0)),
}


def render(name: str) -> Path:
    """Draw one diagram into docs/_generated/<name>.svg; returns its path."""
    import matplotlib.pyplot as plt

    draw, size = DIAGRAMS[name]
    fig, ax = _figure(*size)
    draw(ax)
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.svg"
    fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return path


class DiagramDirective(SphinxDirective):
    """``{diagram} name``, its content the caption (MyST): a figure drawn at build time."""

    required_arguments = 1
    has_content = True

    def run(self):
        name = self.arguments[0]
        if name not in DIAGRAMS:
            raise self.error(f"unknown diagram {name!r}; known: {', '.join(DIAGRAMS)}")
        path = render(name)
        figure = nodes.figure(classes=["diagram"])
        # A width makes Sphinx link the picture to its full-size file (html_scaled_image_link): on a phone, where the
        # labels are too small to read, a tap opens the SVG alone, to zoom.
        figure += nodes.image(uri=f"/docs/_generated/{path.name}", alt=DIAGRAMS[name][0].__doc__, width="100%")
        caption = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, caption)
        figure += nodes.caption("", "", *caption.children[0].children) if caption.children else []
        return [figure]


def setup(app):
    app.add_directive("diagram", DiagramDirective)
    return {"version": "1", "parallel_read_safe": False}
