"""``retromesh gallery`` and ``retromesh view``: see models before converting them."""
