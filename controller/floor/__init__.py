"""The casino floor over MQTT: each table publishes its journal, the floor view watches every table.

    config.py     the [floor] section of table.toml (broker URL, site, TLS and credentials)
    schema.py     topics, versioned JSON payloads, and the consumer's de-duplication ledger
    publisher.py  FloorPublisher: the journal as a durable outbox, sent in order at QoS 1
    view.py       `tablectl floor --broker URL`: a live terminal view of every table publishing

The operator's page is hardware/floor.md.
"""
