"""The nightly job: entity pages, opinions with evidence, episode pages, summaries."""
