"""The table's side of the floor: the [floor] section of table.toml, the published topics and
payloads, the publisher (the journal as a durable outbox) and the answers to a floor's catch-up and history questions.
"""
