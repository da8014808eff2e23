"""Executors: where a run happens. Each implements ``base.Executor`` (one method, ``run``).

``inprocess`` runs scripts on a thread of the host (trusted code, tests); ``pool`` keeps
worker processes (``worker``) and talks to them in frames (``protocol``). ``broker`` is
the host-side gate for every tool call either executor forwards. A new executor is a
module here implementing ``Executor``.
"""
