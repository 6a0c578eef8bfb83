"""Software authentication and proof of history: the signed release manifest, the checks of the
installed files, the records of installs and the table's signed chain heads.
"""
