"""The dispatch core: tools, the registry and the one validated pipeline every call takes.

``tool``/``decorator``/``schema``/``spec`` define tools; ``registry`` holds them and the
hooks (``hooks``); ``pipeline`` runs a call through resolve → validate → policy → guards →
wrapped execute → post-execute → normalise → observe; ``context``, ``content``, ``events``,
``gate`` and ``frozen`` are the values it passes between stages. Nothing here imports the
sandbox, Code Mode or an integration: they sit on top of this layer.
"""
