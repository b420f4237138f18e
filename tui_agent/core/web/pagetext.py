"""A fetched page as text the model reads: HTML turned into markdown (headings, links, lists, code kept; scripts,
styles and other non-content dropped), plain text and JSON as they are, anything else refused."""

from __future__ import annotations

import re

from tui_agent.core.errors import TuiAgentError

DROPPED = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "form",
           "button", "input", "select", "textarea", "head")
TEXT_TYPES = ("text/plain", "text/markdown", "text/x-markdown", "text/csv", "text/x-rst", "application/json",
              "application/ld+json", "application/xml", "text/xml", "application/javascript", "text/javascript",
              "text/css", "application/x-yaml", "application/yaml", "text/yaml", "application/toml")
HTML_TYPES = ("text/html", "application/xhtml+xml")


class NotText(TuiAgentError):
    """The response is not a text format web_fetch reads; the message says what it is."""


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def charset(content_type: str) -> str:
    found = re.search(r"charset=\"?([A-Za-z0-9_.:-]+)", content_type)
    return found.group(1) if found else "utf-8"


def decode(body: bytes, content_type: str) -> str:
    try:
        return body.decode(charset(content_type), errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")


def html_to_markdown(html: str) -> str:
    """The page's title as a heading, then its content as markdown, blank-line runs collapsed."""
    from bs4 import BeautifulSoup  # imported on the first page fetched: every start would pay ~0.1 s otherwise
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(DROPPED):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", bullets="-", code_language="").convert_soup(soup)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"# {title}\n\n{text}" if title and not text.startswith(f"# {title}") else text


def page_text(body: bytes, content_type: str) -> str:
    """Readable text of a response body; NotText for images, archives, PDFs and other binary content."""
    kind = media_type(content_type)
    if kind in HTML_TYPES:
        return html_to_markdown(decode(body, content_type))
    if kind in TEXT_TYPES or kind.startswith("text/") or kind.endswith(("+json", "+xml")):
        return decode(body, content_type)
    if not kind and b"\0" not in body[:4096]:  # no type given: text when it holds no NUL byte
        text = decode(body, content_type)
        return html_to_markdown(text) if re.search(r"<html|<body|<!doctype html", text[:2048], re.I) else text
    raise NotText(f"the response is {kind or 'binary content'}, not text: web_fetch reads web pages and text only")
