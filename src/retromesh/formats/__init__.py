"""One module or package per format family; each registers its formats on import.

The registry imports them (see ``registry.FORMAT_MODULES``); to add a family, write its module
here and add its name to that tuple.
"""
