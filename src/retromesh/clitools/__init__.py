"""Helpers of the ``retromesh`` command (``retromesh.cli``): one job per module.

* :mod:`.messages` — one error style (``error: <file>: <message>``), CLI-flag hints;
* :mod:`.options` — ``--set``/``-O`` parsing and validation against each format's signature;
* :mod:`.batch` — a folder conversion's progress and summary (:mod:`retromesh.batch` runs it);
* :mod:`.report` — ``info`` figures and the ``formats`` listing;
* :mod:`.luanti` — what Luanti's loaders accept (``check --luanti``, ``convert --preset luanti``).
"""
