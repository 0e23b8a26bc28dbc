#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A man page from one of Documentation/*.rst, through docutils' manpage
writer (rst2man's), so a page is never written twice.

usage: mkman.py RST OUT "SHORT DESCRIPTION" VERSION

OUT's name gives the page's name and section (build/man/kwqctl.1). The
document's own title gives way to the page's header (NAME, section,
version); its sections follow as they are. What only the kernel's Sphinx
knows is rendered for a terminal: :doc:`x` as Documentation/x.rst, a
kernel-doc directive as a pointer to the header it names, a table of
two columns as a list. Any docutils
warning fails the page: the documentation must stay valid for both.
"""
import os
import re
import sys

from docutils import nodes
from docutils.core import publish_doctree, publish_from_doctree
from docutils.parsers.rst import Directive, directives, roles


def doc_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [nodes.emphasis(rawtext, "Documentation/%s.rst" % text)], []


class KernelDoc(Directive):
    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = True
    option_spec = {}
    has_content = False

    def run(self):
        path = self.arguments[0]
        # Installed, a uapi header is <linux/NAME.h>.
        m = re.match(r"include/uapi/(.*)$", path)
        where = "<%s>" % m.group(1) if m else path
        para = nodes.paragraph()
        para += nodes.Text("The comments of ")
        para += nodes.literal(text=where)
        para += nodes.Text(" document every structure and constant.")
        return [para]


def tables_to_lists(doctree):
    """Two-column tables as definition lists: groff's tbl draws a long
    boxed table with characters "above the first line" (a warning, and
    lost rules) where a list reads the same in a terminal."""
    for table in list(doctree.findall(nodes.table)):
        group = next(table.findall(nodes.tgroup))
        if group["cols"] != 2:
            continue
        dl = nodes.definition_list()
        for row in group.findall(nodes.row):
            term, text = row.children
            if isinstance(row.parent, nodes.thead):
                continue
            item = nodes.definition_list_item()
            item += nodes.term("", "", *term.children[0].children)
            item += nodes.definition("", *text.children)
            dl += item
        table.replace_self(dl)


def strip_title(text):
    """The body of @text: without its leading comments and its title."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith("..")):
        i += 1
    # An overlined title: three lines, else an underlined one: two.
    if re.fullmatch(r"([=#*~-])\1+", lines[i].strip()):
        i += 3
    else:
        i += 2
    return "\n".join(lines[i:]) + "\n"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    rst, out, desc, version = sys.argv[1:]
    name, section = os.path.basename(out).rsplit(".", 1)
    with open(rst, encoding="utf-8") as f:
        body = strip_title(f.read())
    bar = "=" * len(name)
    dbar = "-" * len(desc)
    head = (f"{bar}\n{name}\n{bar}\n\n{dbar}\n{desc}\n{dbar}\n\n"
            f":Manual section: {section}\n:Manual group: kwq\n"
            f":Version: {version}\n\n")
    roles.register_local_role("doc", doc_role)
    directives.register_directive("kernel-doc", KernelDoc)
    settings = {"halt_level": 2, "report_level": 2, "exit_status_level": 2}
    doctree = publish_doctree(head + body, source_path=rst,
                              settings_overrides=settings)
    tables_to_lists(doctree)
    page = publish_from_doctree(doctree, writer_name="manpage",
                                settings_overrides=settings)
    with open(out + ".tmp", "wb") as f:
        f.write(page)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
