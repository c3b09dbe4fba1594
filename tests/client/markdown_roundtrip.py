#!/usr/bin/python3
"""Markdown rendering read back by a real CommonMark + GFM-tables parser (markdown-it-py, Debian's
python3-markdown-it): for a generated variety of documents, stored through the API and read with
`Accept: text/markdown`, the parsed text of every block, every link (target and text) and every
table row equal the source document's. The same for every document of the content fuzz target's
kept corpus (tests/fuzz/corpus/content) the service accepts: parse(render(x)) == x over what the
fuzzer found. Usage: markdown_roundtrip.py BINARY SOURCE_DIR [COUNT]"""

import glob
import hashlib
import json
import os
import random
import sys
import urllib.parse

from markdown_it import MarkdownIt

from harness import Service, fetch

# Unicode spaces a parser trims at the ends of a block (JavaScript's and Python's trim): no-break,
# em, ideographic, Ogham, narrow no-break, medium mathematical, line and paragraph separators, BOM.
UNICODE_SPACES = "\u00a0\u2003\u3000\u1680\u202f\u205f\u2028\u2029\ufeff"
# Letters, digits, every ASCII punctuation character, blanks, line breaks and some non-ASCII.
ALPHABET = ("abcdefghijklmnopqrstuvwxyz" "ABCXYZ" "0123456789" "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
            "    \t\n" "é—“”" + UNICODE_SPACES)
WORDS = ["tide", "moon", "1.", "2)", "-", "+", "*", "#", "> x", "    code", "&amp;", "&#32;", "<b>", "[x](y)",
         "**", "__", "~~", "`", "``", "|", "\\", "===", "---", "***", "http://example.org", "a_b_c", "**bold**",
         "\u00a0", "\u3000x\u3000", "\u2028", "&#160;", "\u00a0**x**\u00a0"]


def text(rng, allow_newline=True, max_len=24):
    parts = []
    for _ in range(rng.randint(0, 4)):
        if rng.random() < 0.4:
            parts.append(rng.choice(WORDS))
        else:
            parts.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, max_len // 3))))
        parts.append(rng.choice([" ", "", "\n", "  ", "\t"]))
    t = "".join(parts)
    return t if allow_newline else t.replace("\n", " ")


def href(rng):
    tail = "".join(rng.choice("abc/ ()<>\\|#?%=&'\"\n`*_[]") for _ in range(rng.randint(0, 12)))
    return rng.choice(["https://example.org/", "http://example.org/a b/", "mailto:x@example.org?subject="]) + tail


def children(rng, defs):
    spans = []
    for _ in range(rng.randint(1, 5)):
        marks = [m for m in ("strong", "em", "strike", "underline", "code") if rng.random() < 0.25]
        if defs and rng.random() < 0.3:
            marks.append(rng.choice(defs)["key"])
        span = {"type": "span", "text": text(rng)}
        if marks:
            span["marks"] = marks
        spans.append(span)
    return spans


def mark_defs(rng):
    defs = [{"key": "l%d" % i, "type": "link", "href": href(rng)} for i in range(rng.randint(0, 2))]
    if rng.random() < 0.3:
        defs.append({"key": "e1", "type": "entity", "entity_id": "ent_x", "entity_type": "PLACE"})
    return defs


def list_items(rng, depth):
    items = []
    for _ in range(rng.randint(1, 3)):
        item = {"children": children(rng, [])}
        if depth < 3 and rng.random() < 0.3:
            item["items"] = list_items(rng, depth + 1)
        items.append(item)
    return items


def block(rng, key):
    kind = rng.choice(["heading", "paragraph", "paragraph", "quote", "list", "list", "code", "table", "image"])
    defs = mark_defs(rng)
    b = {"type": kind, "key": key}
    if kind in ("heading", "paragraph", "quote"):
        b["children"] = children(rng, defs)
        if defs:
            b["mark_defs"] = defs
    if kind == "heading":
        b["level"] = rng.randint(1, 6)
    if kind == "quote" and rng.random() < 0.5:
        b["attribution"] = text(rng)
    if kind == "list":
        b["ordered"] = rng.random() < 0.5
        b["items"] = list_items(rng, 0)
    if kind == "code":
        b["text"] = text(rng).replace("\r", "")
        if rng.random() < 0.5:
            b["language"] = rng.choice(["python", "c++", "sh"])
    if kind == "table":
        width = rng.randint(1, 4)
        b["rows"] = [[{"children": children(rng, defs)} for _ in range(width)] for _ in range(rng.randint(1, 3))]
        if defs:
            b["mark_defs"] = defs
        b["header_rows"] = rng.randint(0, len(b["rows"]))
    if kind == "image":
        b["blob"] = rng.choice(BLOBS)
        b["alt"] = text(rng)
        if rng.random() < 0.5:
            b["caption"] = text(rng)
    return b


# -- what the source says ------------------------------------------------------------------------

def span_text(holder):
    return "".join(s["text"] for s in holder["children"])


def span_links(holder, defs):
    """(href, text) of each run of spans linked to the same definition."""
    links, current = [], None
    for s in holder["children"]:
        if not s["text"]:
            continue
        key = next((m for m in s.get("marks", []) if m in defs), None)
        if key and current and current[0] == key:
            current[2] += s["text"]
        else:
            if current:
                links.append((current[1], current[2]))
            current = [key, defs[key], s["text"]] if key else None
    if current:
        links.append((current[1], current[2]))
    return links


def expected(doc):
    units, links = [], []

    def items(holder, depth, defs):
        for it in holder["items"]:
            units.append(("item", depth, span_text(it)))
            links.extend(span_links(it, defs))
            if "items" in it:
                items(it, depth + 1, defs)

    for b in doc["blocks"]:
        defs = {d["key"]: d["href"] for d in b.get("mark_defs", []) if d["type"] == "link"}
        t = b["type"]
        if t == "heading":
            units.append(("heading", b["level"], span_text(b)))
            links.extend(span_links(b, defs))
        elif t == "paragraph":
            if span_text(b):
                units.append(("para", span_text(b)))
            links.extend(span_links(b, defs))
        elif t == "quote":
            if span_text(b):
                units.append(("para", span_text(b)))
            links.extend(span_links(b, defs))
            if b.get("attribution"):
                units.append(("para", "— " + b["attribution"]))
        elif t == "list":
            items(b, 0, {d["key"]: d["href"] for d in b.get("mark_defs", []) if d["type"] == "link"})
        elif t == "code":
            body = b["text"]
            units.append(("code", body if body == "" or body.endswith("\n") else body + "\n"))
        elif t == "table":
            width = len(b["rows"][0])
            if b.get("header_rows", 0) == 0:
                units.append(("row", [""] * width))
            for row in b["rows"]:
                units.append(("row", [span_text(c) for c in row]))
                for c in row:
                    links.extend(span_links(c, defs))
        elif t == "image":
            units.append(("image", b["alt"], "/v0/content-lake/blobs/" + b["blob"]))
            if b.get("caption"):
                units.append(("para", b["caption"]))
    return units, links


# -- what the parser reads -----------------------------------------------------------------------

def inline(tok, links, images):
    out, open_links = [], []
    for c in tok.children or []:
        if c.type in ("text", "code_inline"):
            out.append(c.content)
        elif c.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif c.type == "html_inline" and c.content == "<br>":
            out.append("\n")
        elif c.type == "link_open":
            open_links.append((c.attrGet("href"), len("".join(out))))
        elif c.type == "link_close":
            target, start = open_links.pop()
            links.append((target, "".join(out)[start:]))
        elif c.type == "image":
            alt = []
            inline_children = c.children or []
            for a in inline_children:
                alt.append("\n" if a.type == "html_inline" and a.content == "<br>" else a.content)
            images.append(("image", "".join(alt), c.attrGet("src")))
        elif c.type.endswith("_open") or c.type.endswith("_close"):
            pass  # emphasis, strong, strikethrough
        else:
            out.append("<unexpected %s %r>" % (c.type, c.content))
    return "".join(out)


def parsed(markdown):
    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    tokens = md.parse(markdown)
    units, links = [], []
    depth, row, heading = -1, None, None
    item_pending = []
    for tok in tokens:
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif tok.type == "list_item_open":
            units.append(["item", depth, ""])
            item_pending.append(len(units) - 1)
        elif tok.type == "list_item_close":
            item_pending.pop()
        elif tok.type == "heading_open":
            heading = int(tok.tag[1])
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "tr_close":
            units.append(("row", row))
            row = None
        elif tok.type == "fence":
            units.append(("code", tok.content))
        elif tok.type == "inline":
            images = []
            t = inline(tok, links, images)
            if row is not None:
                row.append(t)
            elif heading is not None:
                units.append(("heading", heading, t))
                heading = None
            elif item_pending and units[-1] is units[item_pending[-1]] and units[-1][2] == "":
                units[-1][2] = t  # the item's own text (its first paragraph)
            elif images and t == "":
                units.extend(images)
            else:
                units.append(("para", t))
        elif tok.type in ("code_block", "html_block", "hr"):  # never written: text read as syntax
            units.append(("unexpected", tok.type, tok.content))
    return [tuple(u) for u in units], links


# Blobs the documents' images show: uploaded first (a write may reference only blobs its writer
# may read).
BLOBS = []


def upload_blob(svc, token, data):
    status, _, body = svc.request("POST", "/v0/content-lake/blobs/uploads", token,
                                  {"size": len(data), "content_type": "image/png"})
    assert status == 201, body
    up = json.loads(body)
    assert fetch(up["url"], "PUT", data)[0] == 200
    status, _, body = svc.request("POST", "/v0/content-lake/blobs/uploads/%s/complete" % up["upload_id"], token,
                                  {"sha256": hashlib.sha256(data).hexdigest()})
    assert status == 201, body
    return up["blob_id"]


def main():
    binary, source = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    rng = random.Random(20261122)
    failures = 0
    with Service(binary, source) as svc:
        token = svc.token()
        BLOBS.extend(upload_blob(svc, token, b"picture %d" % i) for i in range(3))
        # Control characters (NUL reads back as U+FFFD; no character reference carries the others)
        # are refused where they are, with the rule and the JSON Pointer.
        for control in ("\x00", "\x0b", "\x1f", "\x7f", "\x85"):
            doc = {"format": "cl.content/1", "blocks": [
                {"type": "paragraph", "key": "p", "children": [{"type": "span", "text": "a" + control + "b"}]}]}
            status, _, body = svc.request("POST", "/v0/content-lake/resources", token,
                                          {"title": "Control", "type": "DOCUMENT", "language": "en", "content": doc})
            err = json.loads(body).get("error", {}) if status == 400 else {}
            if err.get("reason") != "PCF005" or err.get("details", [{}])[0].get("field") != \
                    "/content/blocks/0/children/0/text":
                print("a text with %r: %d %s" % (control, status, body[:300]))
                failures += 1
        # Every Unicode space at both ends of a paragraph, a heading and a table cell, then the
        # generated documents.
        edges = [{"type": "paragraph", "key": "e%d" % i, "children": [{"type": "span", "text": c + "x" + c}]}
                 for i, c in enumerate(UNICODE_SPACES)]
        edges.append({"type": "heading", "key": "h", "level": 2,
                      "children": [{"type": "span", "text": UNICODE_SPACES + "h" + UNICODE_SPACES}]})
        edges.append({"type": "table", "key": "t", "header_rows": 1, "rows": [
            [{"children": [{"type": "span", "text": c + "c" + c}]} for c in UNICODE_SPACES]]})
        documents = [{"format": "cl.content/1", "blocks": edges}]
        for n in range(count):
            documents.append(
                {"format": "cl.content/1", "blocks": [block(rng, "b%d" % i) for i in range(rng.randint(1, 6))]})
        # The fuzzer's documents: those the service refuses (validation) are not rendered, so skipped.
        generated = len(documents)
        for path in sorted(glob.glob(os.path.join(source, "tests/fuzz/corpus/content/*"))):
            try:
                doc = json.loads(open(path, "rb").read())
            except ValueError:
                continue
            if isinstance(doc, dict) and "blocks" in doc:
                documents.append(doc)
        fuzzed = accepted = 0
        for n, doc in enumerate(documents):
            status, _, body = svc.request("POST", "/v0/content-lake/resources", token,
                                          {"title": "Doc %d" % n, "type": "DOCUMENT", "language": "en", "content": doc})
            if n >= generated:
                fuzzed += 1
                if status != 201:
                    continue
                accepted += 1
            if status != 201:
                print("create %d: %d %s" % (n, status, body[:300]))
                failures += 1
                continue
            rid = json.loads(body)["id"]
            status, headers, md = svc.request("GET", "/v0/content-lake/resources/" + rid, token,
                                              headers={"Accept": "text/markdown"})
            md = md.decode()
            want_units, want_links = expected(doc)
            got_units, got_links = parsed(md)
            want_links = [(urllib.parse.unquote(h), t) for h, t in want_links]
            got_links = [(urllib.parse.unquote(h), t) for h, t in got_links]
            if status != 200 or want_units != got_units or want_links != got_links:
                failures += 1
                if failures <= 5:
                    print("document %d differs after the round trip" % n)
                    print("  source: " + json.dumps(doc, ensure_ascii=False))
                    print("  markdown:\n" + "\n".join("    | " + line for line in md.split("\n")))
                    for w, g in zip(want_units + [None] * len(got_units), got_units + [None] * len(want_units)):
                        if w != g:
                            print("  want %r\n  got  %r" % (w, g))
                            break
                    if want_links != got_links:
                        print("  links want %r\n  links got  %r" % (want_links, got_links))
    print("%d documents (%d generated, %d of the fuzz corpus's %d the service accepted), %d differ or were refused"
          % (generated + accepted, generated, accepted, fuzzed, failures))
    assert accepted > 100, "the fuzz corpus gave %d renderable documents: the round trip tested too little" % accepted
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
