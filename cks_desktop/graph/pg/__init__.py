"""The PostgreSQL backend of the graph store (a team graph; ``docs/team.md``).

``store.PgGraphStore`` is the same ``GraphStore`` on a psycopg 3 pool, with the
store's SQLite SQL translated (``dialect``, ``conn``), the schema derived from the
shared migrations (``schema``), PostgreSQL's own full-text search (``search``)
and a LISTEN/NOTIFY change feed (``feed``). Importing this package needs psycopg;
the rest of the app imports it only when a ``postgresql://`` database is chosen.
"""
