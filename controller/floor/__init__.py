"""The floor's server side, which never runs on a table and which the table never imports: the
store consumers (consumer.py, store.py: SQLite or PostgreSQL), the live view and its web page
(view.py, web.py) and `tablectl floor` (cli.py). What a table publishes, and how, is the table's
side: controller/adapters/floor/. The operator's page is hardware/floor.md.
"""
