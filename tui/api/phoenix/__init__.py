"""The Arize Phoenix reader: Phoenix's REST API (and its GraphQL for costs and sessions) as a
TraceSource of its own (tui/api/source.py), as the spec's client is one. client.py makes the
requests, mapping.py turns Phoenix's records into the app's, graphql.py holds the cost queries,
sessions.py the sessions query, filters.py what its trace list can filter, probe.py and
address.py recognise a Phoenix server. Like the rest of tui/api, nothing here imports Textual."""
