"""Effects out of the table: the base lamps and pole display, Prometheus metrics, systemd's
notify, the log lines and the floor publisher. Each turns what the table committed into bytes for one outside party.
"""
