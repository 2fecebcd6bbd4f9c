"""The workspace's Markdown: finding files, the Retain grammar, dated facts, links, chunking,
the generated-section markers and supersession."""
