"""The Arize Phoenix reader: Phoenix's REST API (and GraphQL for costs) behind the same
interface as the spec client (tui/api/source.py). client.py makes the requests, mapping.py turns
Phoenix's records into the app's, graphql.py holds the cost queries, probe.py recognises a
Phoenix server. Like the rest of tui/api, nothing here imports Textual."""
