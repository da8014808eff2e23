"""The language layer: what objects a script can reach and what each operation costs.

``policy`` and ``compile`` turn source into restricted code; ``guards``, ``builtins``,
``sizes``, ``compare``, ``inplace`` and ``render`` are the functions compiled code calls
instead of raw operations; ``facades`` are the only importable modules; ``meter`` and
``state`` hold the per-run budget every guard charges. Nothing here knows about
processes or tool dispatch.
"""
