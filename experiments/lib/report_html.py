"""The report's HTML page: report.md rendered by Python-Markdown (the "tables" extension), with every PNG the
Markdown shows inlined as a data: URI so that the page is one self-contained file.

Raw HTML in the Markdown is shown as text, not passed through: the report quotes file names such as
configs/train-<kind>.json and laws such as r < 1, which must not turn into tags.

Python-Markdown is pinned in scripts/requirements.txt. Where it is absent (the bare GPU machine of
gpu-study, which installs nothing) the page shows the Markdown text as it is, with its plots inlined, and
the report lists the rendering as missing (RENDERING says why).
"""
import base64
import html
import os
import re

try:
    import markdown
    from markdown.extensions import Extension
    from markdown.treeprocessors import Treeprocessor

    RENDERING = None
except ImportError as e:  # pragma: no cover - exercised only where Python-Markdown is absent
    RENDERING = f"the Python package 'markdown' is not installed here ({e}); report.html shows the Markdown text"

STYLE = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;text-align:left}"
         "th{background:#eee}img{max-width:100%}blockquote{background:#fee;margin:1em 0;padding:4px 8px;"
         "border-left:4px solid #c33}code,pre{background:#f4f4f4}")


def data_uri(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return "data:image/png;base64," + base64.b64encode(f.read()).decode("ascii")


if RENDERING is None:

    class InlineImages(Treeprocessor):
        """Replaces the src of every <img> that names a PNG of the report folder with its data: URI."""

        def __init__(self, md, folder):
            super().__init__(md)
            self.folder = folder

        def run(self, root):
            for img in root.iter("img"):
                src = img.get("src", "")
                if src.endswith(".png") and os.path.isfile(os.path.join(self.folder, src)):
                    img.set("src", data_uri(self.folder, src))

    class ReportPage(Extension):
        """Raw HTML shown as text; the report folder's PNGs inlined."""

        def __init__(self, folder):
            super().__init__()
            self.folder = folder

        def extendMarkdown(self, md):
            md.preprocessors.deregister("html_block")
            md.inlinePatterns.deregister("html")
            md.treeprocessors.register(InlineImages(md, self.folder), "inline_images", 0)


def body(text, folder):
    if RENDERING is None:
        return markdown.markdown(text, extensions=["tables", ReportPage(folder)])
    # Without Python-Markdown: the text as it is, each image line replaced by the image itself.
    parts = []
    for line in html.escape(text, quote=False).splitlines():
        image = re.fullmatch(r"!\[([^\]]*)\]\(([^)]+\.png)\)", line.strip())
        if image and os.path.isfile(os.path.join(folder, image.group(2))):
            parts.append(f"</pre><img alt='{image.group(1)}' src='{data_uri(folder, image.group(2))}'><pre>")
        else:
            parts.append(line)
    return "<pre style='white-space:pre-wrap'>" + "\n".join(parts) + "</pre>"


def page(text, title, folder):
    """The whole HTML page of the Markdown `text`, whose images are PNG files in `folder`."""
    return "\n".join(["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{html.escape(title)}</title>",
                      f"<style>{STYLE}</style>", "</head><body>", body(text, folder), "</body></html>"])
