"""The kinds of fact of the Retain grammar (seed 001), one letter each: the one list every part
reads (the grammar, recall's ``kind`` filter, the MCP schema, reflect's page sections). Kept apart
from ``facts.py`` so that readers of the list do not import the grammar's parser."""

KINDS = {"W": "world", "B": "experience", "O": "opinion", "S": "observation"}
CHUNK = "chunk"  # recall's name for a unit that is not a fact (plain notes)
# How an entity page titles each kind's section, in the page's order.
SECTION_TITLES = {"W": "World", "O": "Opinions", "B": "Experience", "S": "Observations"}
# The titles of the sections reflect generates (reflect/pages.py): an entity page's facts, the
# opinions page. They and the kinds' titles under them are the pages' structure, not what they
# say (markdown/searchable.py).
FACTS_SECTION = "Facts from the log"
OPINIONS_SECTION = "Opinions tracked by clawmem reflect"
