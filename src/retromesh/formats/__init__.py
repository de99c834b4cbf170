"""One module or package per format family; each registers its formats on import.

The registry imports them (see ``registry.FORMAT_MODULES``). The files of a family package, and
the four places to touch to add one, are in ``README.md`` beside this file.

``retromesh.formats()`` is part of the public API (the list of registered formats), and this
package is also ``retromesh.formats`` once a family module is imported. So that both work, the
package is callable: calling it returns :func:`retromesh.registry.formats`.
"""
from __future__ import annotations

import sys
import types


class _CallablePackage(types.ModuleType):
    def __call__(self):
        from ..registry import formats
        return formats()


sys.modules[__name__].__class__ = _CallablePackage
